"""`pbp user create` and `pbp token create`: accounts and API tokens for an operator.

A fresh install has no account and invitations need a referee, so the first account is
made here. The password is read from standard input (a terminal prompts twice, hidden), so
it never appears in the shell's history or the process list. Refusals are one line on
stderr and a non-zero exit, like every `pbp` command.
"""

from __future__ import annotations

import sys

import click
from flask import current_app
from flask.cli import with_appcontext

from pbp import db, migrate
from pbp.errors import NotFound, PbpError
from pbp.models import utcnow
from pbp.services.accounts import logins as accounts
from pbp.services.accounts import tokens as api_tokens


def _session():
    engine = db.database(current_app).engine
    try:
        db.check_connection(engine)
        migrate.require_current(engine)
    except PbpError as exc:
        raise click.ClickException(str(exc)) from exc
    return db.database(current_app).session_factory()


def _read_password() -> str:
    if sys.stdin.isatty():
        return click.prompt("Password", hide_input=True, confirmation_prompt=True)
    # Piped: the first line is the password (`echo "$PW" | pbp user create ...`).
    return sys.stdin.readline().rstrip("\r\n")


def _commit(write):
    """Run `write(session)` in one writing transaction; a refusal is one line, exit 1."""
    try:
        with db.writing(), _session() as session:
            result = write(session)
            session.commit()
    except PbpError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        db.database(current_app).engine.dispose()  # a one-shot command keeps no pool
    return result


@click.group("user")
def user_group() -> None:
    """Accounts."""


@user_group.command("create")
@click.argument("email")
@click.option("--name", "display_name", default="", help="The name others see.")
@with_appcontext
def user_create(email: str, display_name: str) -> None:
    """Create an account for EMAIL; the password is read from standard input."""
    password = _read_password()
    user = _commit(
        lambda session: accounts.create_account(
            session=session,
            email=email,
            display_name=display_name,
            password=password,
            now=utcnow(),
            via="cli",
        )
    )
    click.echo(f"account created for {user.email}: log in at {_base_url()}/login")


@click.group("token")
def token_group() -> None:
    """API tokens."""


@token_group.command("create")
@click.argument("email")
@click.option("--scope", type=click.Choice(["read", "write"]), required=True)
@click.option("--name", default="command line", show_default=True)
@with_appcontext
def token_create(email: str, scope: str, name: str) -> None:
    """Make an API token for EMAIL's account and print it (shown this once only)."""

    def write(session):
        user = accounts.find_user(session=session, email=email) if "@" in email else None
        if user is None:
            raise NotFound(f"there is no account for {email}")
        return api_tokens.create_token(
            session=session, user=user, name=name, scope=scope, now=utcnow()
        )

    click.echo(_commit(write).text)


def _base_url() -> str:
    return current_app.config["PBP_BASE_URL"].rstrip("/")
