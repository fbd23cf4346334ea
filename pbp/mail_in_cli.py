"""`pbp mail-in`: receive replies to notification mails (issue #31 item 3), as an SMTP
server or, with `--stdin`, one message piped by an existing MTA (pbp.mail_in_server)."""

from __future__ import annotations

import contextlib
import sys
import threading

import click
from flask import current_app
from flask.cli import with_appcontext

from pbp.mail_in_server import MAX_BYTES, MailInServer, deliver

EX_TEMPFAIL = 75  # sysexits.h: the MTA keeps the message and tries again later


@click.command("mail-in")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read one message from standard input.")
@click.option(
    "--to",
    "recipients",
    multiple=True,
    help="With --stdin: the envelope recipient (the MTA's ${recipient}); default: the "
    "Delivered-To, To and Cc headers.",
)
@click.option("--from", "envelope_from", default=None, help="With --stdin: the envelope sender.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The SMTP server's address.")
@click.option("--port", default=2525, show_default=True, help="The SMTP server's port.")
@with_appcontext
def mail_in_command(
    from_stdin: bool, recipients: tuple[str, ...], envelope_from: str | None, host: str, port: int
) -> None:
    """Receive replies by email: an SMTP server for PBP_REPLY_DOMAIN, or one message on
    standard input (--stdin)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    if not app.config.get("PBP_REPLY_DOMAIN"):
        raise click.ClickException("set PBP_REPLY_DOMAIN first: mails carry no reply address")
    if from_stdin:
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise click.ClickException(f"the message is longer than {MAX_BYTES} bytes")
        to = list(recipients)
        if not to:
            from pbp.services.mail.mail_in import header_recipients, parse

            to = header_recipients(parse(data))
        try:
            outcomes = deliver(app, data, to, envelope_from)
        except Exception as exc:
            click.echo(f"mail-in: {exc}", err=True)
            sys.exit(EX_TEMPFAIL)
        for outcome in outcomes:
            click.echo(f"{outcome.status}{': ' + outcome.reason if outcome.reason else ''}")
        return
    with MailInServer(app, host, port):
        domain = app.config["PBP_REPLY_DOMAIN"]
        click.echo(f"pbp mail-in: SMTP on {host}:{port} for reply+…@{domain}")
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
