"""The `pbp` command: Flask's CLI group plus pbp's own commands.

Errors the user can fix (bad DATABASE_URL, schema behind the code) print one line and
exit non-zero; tracebacks are for bugs.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any, NoReturn

import click
from flask import Flask, current_app
from flask.cli import FlaskGroup, with_appcontext

from pbp import create_app, db, links, migrate
from pbp.accounts_cli import token_group, user_group
from pbp.config import default_database_url, served_base_url
from pbp.errors import PbpError, RulesError
from pbp.forum_cli import verify_cards, verify_rolls
from pbp.mail_in_cli import mail_in_command


def _engine():
    return db.database(current_app).engine


def _app() -> Flask:
    """The app object behind the current_app proxy (servers and threads need the object)."""
    # Flask types current_app as Flask; it is a werkzeug LocalProxy, which has this method.
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    return app


def _fail(exc: PbpError | RulesError) -> NoReturn:
    raise click.ClickException(str(exc)) from exc


class PbpGroup(FlaskGroup):
    """Flask's CLI group (app context, ScriptInfo) listing pbp's own commands only.

    Flask would add its development commands (`run`, `shell`, `routes`) and every
    extension's (`limiter`): none of them is how pbp is run, and `pbp run` would start
    the development server without the scheduler.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(add_default_commands=False, **kwargs)
        # --app, --env-file and --debug choose a Flask app: pbp has exactly one.
        self.params = [p for p in self.params if p.name not in {"app", "env_file", "debug"}]

    def list_commands(self, ctx):
        return click.Group.list_commands(self, ctx)

    def get_command(self, ctx, name):
        return click.Group.get_command(self, ctx, name)


@click.group(cls=PbpGroup, create_app=create_app, add_version_option=False)
def cli() -> None:
    """pbp: play-by-post role-playing games."""


@cli.group("db")
def db_group() -> None:
    """Database schema commands."""


@db_group.command("upgrade")
@with_appcontext
def db_upgrade() -> None:
    """Create or upgrade the database schema to the code's version."""
    try:
        db.check_connection(_engine())
        before, after = migrate.upgrade(_engine())
    except (PbpError, RulesError) as exc:
        _fail(exc)
    finally:
        _engine().dispose()  # a one-shot command leaves no pooled connection behind
    if before == after:
        click.echo(f"database already at {after}: nothing to do")
    else:
        click.echo(f"database upgraded from {before or 'empty'} to {after}")


def _ready_engine():
    try:
        db.check_connection(_engine())
        migrate.require_current(_engine())
    except (PbpError, RulesError) as exc:
        _fail(exc)


@cli.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
@click.option("--threads", default=8, show_default=True, type=int)
@click.option("--no-scheduler", is_flag=True, help="Serve pages only (a worker runs the jobs).")
@click.option(
    "--demo",
    "serve_demo",
    is_flag=True,
    help="Serve a database that holds the demo's accounts (refused otherwise).",
)
@with_appcontext
def serve(host: str, port: int, threads: int, no_scheduler: bool, serve_demo: bool) -> None:
    """Serve the web app with the scheduler in the same process (embedded mode)."""
    from pbp.server import run_embedded

    _ready_engine()
    if not serve_demo:
        _refuse_demo_accounts()
    app = _app()
    _links_point_at(app, host, port)
    run_embedded(app, host, port, threads, not no_scheduler)
    _exit_now(0)


def _refuse_demo_accounts() -> None:
    """Issue #27 item 8: the demo's accounts share one printed password; a real install
    must never serve them."""
    from pbp.demo import PASSWORD
    from pbp.services.accounts import demo_accounts

    found = demo_accounts.count(engine=_engine())
    if found:
        where = _engine().url.render_as_string(hide_password=True)
        raise click.ClickException(
            f"this database ({where}) holds {found} of the "
            f"demo's accounts (@{demo_accounts.DEMO_DOMAIN}, password {PASSWORD!r}, printed "
            "for anyone to read): serve a real install from a database of its own "
            "(PBP_INSTANCE_PATH or DATABASE_URL), or add --demo to serve the demo anyway"
        )


def _links_point_at(app: Flask, host: str, port: int) -> str:
    """Issue #27 item 1: unless PBP_BASE_URL says otherwise, links in mail, feeds and invites
    point at the address served (they said http://127.0.0.1:5000 whatever the port)."""
    if not app.config.get("PBP_BASE_URL_GIVEN"):
        app.config["PBP_BASE_URL"] = served_base_url(host, port, socket.gethostname())
        click.echo(
            f"links in mail and feeds point to {app.config['PBP_BASE_URL']} "
            "(set PBP_BASE_URL to the address people use)"
        )
    return app.config["PBP_BASE_URL"]


def _exit_now(status: int) -> NoReturn:
    """Exit once the server has stopped. Everything is committed and closed; tearing down
    the interpreter of a fully loaded app takes seconds on a busy machine, and would wait on
    a scheduler job that outlived the stop's grace (pbp.server)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


@cli.command("worker")
@with_appcontext
def worker() -> None:
    """Run the scheduler only (the Procfile's worker process)."""
    from scheduler.jobs import run_blocking

    _ready_engine()
    run_blocking(_app())


@cli.command("poll")
@click.option("--once", is_flag=True, required=True, help="One pass over every due feed.")
@click.option("--campaign", "slug", default=None, help="Only this campaign's feeds.")
@with_appcontext
def poll(once: bool, slug: str | None) -> None:
    """Poll players' external blogs once and print a summary."""
    from pbp.services.noteworthy import polling

    _ready_engine()
    app = _app()
    bar = PollProgress(sys.stderr)
    try:
        summary = polling.poll_once(app, slug=slug, progress=bar)
    except (PbpError, RulesError) as exc:
        _fail(exc)
    finally:
        bar.finish()
        polling.app_fetcher(app).close()
        _engine().dispose()  # a one-shot command leaves no connection behind
    for line in polling.summary_table(summary):
        click.echo(line)


class PollProgress:
    """click's progress bar for one polling pass, on stderr so the summary on stdout stays
    clean to pipe. It starts at the first finished feed, when the pass's total is known.
    click draws the bar only on a terminal; elsewhere it prints the label once."""

    def __init__(self, file) -> None:
        self.file = file
        self.bar: Any = None  # a click progress bar, made on the first report

    def __call__(self, done: int, total: int, outcome) -> None:
        if self.bar is None:
            self.bar = click.progressbar(
                length=total,
                label=f"polling {total} feeds",
                file=self.file,
                show_pos=True,
                item_show_func=_describe_outcome,
            )
        self.bar.update(1, outcome)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.render_finish()


def _describe_outcome(outcome) -> str | None:
    return f"blog {outcome.blog_id}: {outcome.status}" if outcome is not None else None


# Not in the app context Flask's CLI group gives its commands: that app is the real
# instance's, and the demo makes its own.
@cli.command("demo", with_appcontext=False)
@click.option("--port", default=5000, show_default=True, type=int)
@click.option("--no-serve", is_flag=True, help="Seed the demo campaigns and exit.")
def demo(port: int, no_serve: bool) -> None:
    """Seed demo campaigns (Noteworthy, Noir, Sex & Violence) and serve them at
    http://127.0.0.1:PORT.

    The demo lives in an instance folder of its own, the instance folder's name followed by
    `-demo` (e.g. instance-demo/), with its own SQLite database whatever DATABASE_URL says:
    a real install in the same place never sees its accounts. The Noteworthy demo's
    "external" blogs are served on loopback by the demo itself, on a free port, so private
    (loopback) feed addresses are allowed in this process. One demo at a time per folder.
    """
    from pbp import demo as demo_module

    folder = demo_module.instance_path()
    try:
        app = create_app({"INSTANCE_PATH": folder, "DATABASE_URL": default_database_url(folder)})
    except (PbpError, RulesError) as exc:
        _fail(exc)
    with app.app_context():
        _run_demo(app, port, no_serve)


def _run_demo(app: Flask, port: int, no_serve: bool) -> None:
    from pbp import demo as demo_module

    lock = demo_module.single_instance_lock(app)
    try:
        db.check_connection(_engine())
        migrate.upgrade(_engine())
    except (PbpError, RulesError) as exc:
        _fail(exc)
    app.config["PBP_ALLOW_PRIVATE_FEEDS"] = True
    click.echo(f"the demo's instance folder: {app.instance_path}")
    _links_point_at(app, "127.0.0.1", port)
    feeds = demo_module.start_feed_server(app)
    try:
        slugs = demo_module.seed_all(app, feed_port=feeds.server_address[1])
        base = f"http://127.0.0.1:{port}"
        for slug in slugs:
            click.echo(f"demo campaign ready: {links.absolute(base, links.campaign(slug))}")
        click.echo(f"log in at {base}/login with password {demo_module.PASSWORD} as:")
        for email, who in demo_module.logins():
            click.echo(f"  {email:<24} {who}")
        if no_serve:
            _engine().dispose()
            return
        from pbp.server import run_embedded

        # A demo holds nothing worth waiting for: stop within a second of Ctrl-C/TERM.
        run_embedded(app, "127.0.0.1", port, 8, True, graceful_timeout=1)
    finally:
        feeds.shutdown()
        feeds.server_close()
        lock.close()
    _exit_now(0)


cli.add_command(verify_rolls)
cli.add_command(verify_cards)
cli.add_command(user_group)
cli.add_command(token_group)
cli.add_command(mail_in_command)


def main() -> None:
    try:
        cli(prog_name="pbp")
    except (PbpError, RulesError) as exc:  # raised while building the app, before any command runs
        raise SystemExit(f"Error: {exc}") from None
