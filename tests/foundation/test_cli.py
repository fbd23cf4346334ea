"""Every `pbp` command runs, and user errors are one clear line with a non-zero exit."""

import os
import signal
import subprocess
import sys
import time

import pytest
import requests
from click.testing import CliRunner
from sqlmodel import Session

from pbp import migrate
from pbp.cli import cli
from pbp.config import served_base_url
from pbp.db import make_engine
from tests.factories import make_campaign
from tests.smtpserver import free_port


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


@pytest.mark.parametrize(
    ("host", "port", "expected"),
    [
        ("127.0.0.1", 5410, "http://127.0.0.1:5410"),
        ("localhost", 80, "http://localhost"),
        ("0.0.0.0", 8000, "http://pbp-box:8000"),  # every interface: the machine's name
        ("::", 5000, "http://pbp-box:5000"),
        ("::1", 5000, "http://[::1]:5000"),
    ],
)
def test_the_base_url_pbp_serve_derives_from_its_address(host, port, expected):
    assert served_base_url(host, port, "pbp-box") == expected


def test_serve_without_pbp_base_url_links_to_the_port_it_serves(tmp_path):
    """Issue #27 item 1: `pbp serve --port 5410` without PBP_BASE_URL put
    http://127.0.0.1:5000/... in invitations, mails and feeds: connection refused."""
    engine = make_engine(f"sqlite:///{tmp_path / 'pbp.sqlite3'}")
    migrate.upgrade(engine)
    with Session(engine) as session:
        slug = make_campaign(session, name="Harbour Lights").slug
        session.commit()
    engine.dispose()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "PBP_"))}
    env |= {"PBP_INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "s" * 40}
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from pbp.cli import main; main()", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                feed = requests.get(f"{base}/c/{slug}/feed.atom", timeout=5)
                break
            except requests.ConnectionError:
                assert proc.poll() is None, proc.stdout.read()
                assert time.monotonic() < deadline, "pbp serve did not answer"
                time.sleep(0.2)
        assert feed.status_code == 200
        assert f'href="{base}/c/{slug}/"' in feed.text and ":5000/" not in feed.text
        proc.send_signal(signal.SIGINT)  # Ctrl-C: a clean stop
        proc.wait(timeout=10)
        assert proc.returncode == 0
        out = proc.stdout.read()
        assert f"links in mail and feeds point to {base} " in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
