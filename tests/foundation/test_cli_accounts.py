"""`pbp user create` and `pbp token create`: a fresh install gets its first account and an
API token from the command line, and refusals are one line with a non-zero exit.

Each test runs the commands against its own committed database (a scratch file on SQLite,
a scratch database on PostgreSQL), then logs in through the real app on that database.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pbp import create_app
from pbp.cli import cli
from tests.helpers import post_form

PASSWORD = "correct horse battery"


@pytest.fixture
def scratch_url(database_url, tmp_path):
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'cli.sqlite3'}"
        return
    from tests.helpers import create_scratch_postgres

    url, drop = create_scratch_postgres(database_url)
    yield url
    drop()


@pytest.fixture
def pbp(scratch_url, tmp_path):
    env = {
        "PBP_INSTANCE_PATH": str(tmp_path / "instance"),
        "SECRET_KEY": "s" * 40,
        "DATABASE_URL": scratch_url,
    }

    def run(*args, input=None):
        return CliRunner().invoke(cli, list(args), env=env, input=input)

    assert run("db", "upgrade").exit_code == 0
    return run


def _app(scratch_url, tmp_path):
    return create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path / "instance",
            "SECRET_KEY": "s" * 40,
            "DATABASE_URL": scratch_url,
        }
    )


def _one_line_error(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1, result.output
    assert len(lines) == 1, result.output
    return lines[0]


def test_first_account_logs_in(pbp, scratch_url, tmp_path):
    result = pbp("user", "create", "Ada@Example.org", "--name", "Ada Quill", input=PASSWORD + "\n")
    assert result.exit_code == 0, result.output
    assert "account created for ada@example.org" in result.output

    app = _app(scratch_url, tmp_path)
    client = app.test_client()
    response = post_form(client, "/login", {"email": "ada@example.org", "password": PASSWORD})
    assert response.status_code == 302, response.get_data(as_text=True)
    assert "Ada Quill" in client.get("/login").get_data(as_text=True)
    app.extensions["pbp_db"].engine.dispose()


def test_existing_email_is_refused_in_one_line(pbp):
    assert pbp("user", "create", "ada@example.org", input=PASSWORD + "\n").exit_code == 0
    line = _one_line_error(pbp("user", "create", "ADA@example.org", input="another password\n"))
    assert "already an account for ada@example.org" in line


@pytest.mark.parametrize(
    ("password", "reason"),
    [("", "at least 10 characters"), ("short", "at least 10 characters")],
)
def test_empty_or_weak_password_is_refused_in_one_line(pbp, password, reason):
    line = _one_line_error(pbp("user", "create", "ada@example.org", input=password + "\n"))
    assert reason in line


def test_token_create_prints_a_working_token(pbp, scratch_url, tmp_path):
    assert pbp("user", "create", "ada@example.org", input=PASSWORD + "\n").exit_code == 0
    result = pbp("token", "create", "ada@example.org", "--scope", "read", "--name", "bot")
    assert result.exit_code == 0, result.output
    token = result.output.strip()
    assert token.startswith("pbp_")

    app = _app(scratch_url, tmp_path)
    client = app.test_client()
    ok = client.get("/api/v1/campaigns", headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200
    write = client.post(
        "/api/v1/campaigns",
        json={"name": "Nope", "ruleset": "noteworthy"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert write.status_code == 403  # a read token cannot write
    app.extensions["pbp_db"].engine.dispose()


def test_token_for_an_unknown_account_is_one_line(pbp):
    line = _one_line_error(pbp("token", "create", "nobody@example.org", "--scope", "write"))
    assert "no account for nobody@example.org" in line


def test_help_lists_pbp_commands_not_flasks():
    result = CliRunner().invoke(cli, ["--help"], env={"SECRET_KEY": "s" * 40})
    assert result.exit_code == 0
    commands = {
        line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line.strip()
    }
    assert {"user", "token", "db", "serve", "worker", "demo", "poll"} <= commands
    assert not commands & {"run", "shell", "routes", "limiter"}
