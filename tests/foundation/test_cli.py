"""Every `pbp` command runs, and user errors are one clear line with a non-zero exit."""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from pbp.cli import cli


def _run(tmp_path, *args, database_url=None):
    env = {"PBP_INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "s" * 40}
    if database_url:
        env["DATABASE_URL"] = database_url
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_db_upgrade_twice_is_idempotent(tmp_path):
    first = _run(tmp_path, "db", "upgrade")
    assert first.exit_code == 0, first.output
    assert "upgraded from empty" in first.output
    second = _run(tmp_path, "db", "upgrade")
    assert second.exit_code == 0
    assert "nothing to do" in second.output


def test_db_upgrade_on_postgres(database_url, tmp_path):
    if database_url.startswith("sqlite"):
        pytest.skip("the PostgreSQL pass runs this")
    from tests.helpers import create_scratch_postgres

    url, drop = create_scratch_postgres(database_url)
    try:
        result = _run(tmp_path, "db", "upgrade", database_url=url)
        assert result.exit_code == 0, result.output
    finally:
        drop()


def test_unreachable_database_is_one_line_and_nonzero(tmp_path):
    result = _run(tmp_path, "db", "upgrade", database_url="postgresql://x@127.0.0.1:1/none")
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach the database" in lines[0]


@pytest.mark.parametrize("url", ["bogus", "mysql://x/y"])
def test_malformed_database_url_is_one_line_and_nonzero(tmp_path, url):
    env = {**os.environ, "PBP_INSTANCE_PATH": str(tmp_path), "DATABASE_URL": url}
    proc = subprocess.run(
        [sys.executable, "-c", "from pbp.cli import main; main()", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "DATABASE_URL" in proc.stderr
    assert not (tmp_path / "pbp.sqlite3").exists()


def test_worker_and_serve_refuse_an_unmigrated_database(tmp_path):
    for command in (["worker"], ["serve", "--port", "5999"]):
        result = _run(tmp_path, *command)
        assert result.exit_code == 1
        assert "run `pbp db upgrade`" in result.output


def test_demo_seeds_a_campaign_once(tmp_path):
    first = _run(tmp_path, "demo", "--no-serve")
    assert first.exit_code == 0, first.output
    assert "/c/the-gilded-quill/" in first.output
    again = _run(tmp_path, "demo", "--no-serve")
    assert again.exit_code == 0 and "/c/the-gilded-quill/" in again.output


def test_help_lists_pbp_commands(tmp_path):
    result = _run(tmp_path, "--help")
    for name in ("serve", "worker", "db", "demo"):
        assert name in result.output
