"""`pbp mail-in`'s two ways in (issue #31 item 3): an SMTP server (aiosmtpd), to which the
reply domain's MX points, and a pipe from an existing MTA (`deliver`, one message on
standard input). Both hand each message to pbp.services.mail.mail_in, inside the app (the
pages' rate limit lives there), and deliver what it queued (a refusal, the notes' mails)
right away.

The server accepts mail only for reply addresses that exist (550 at RCPT for any other),
at most MAX_BYTES a message, and answers 451 when pbp fails, so the sending MTA retries
later; a reply that pbp refused is answered 250 (it was received; the refusal went to the
member by mail).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime

from aiosmtpd.controller import Controller
from flask import Flask

from pbp import rate_limits
from pbp.db import database, writing
from pbp.models import utcnow
from pbp.services.mail import mail_in, reply_tokens
from pbp.services.mail.send import sender_for_app
from pbp.services.mail.settings import MailSettings

log = logging.getLogger(__name__)

MAX_BYTES = 10 * 1024 * 1024  # a reply with a photo fits; a bigger one is refused (552)


def _clock(app: Flask) -> Callable[[], datetime]:
    return app.config.get("PBP_CLOCK", utcnow)


def deliver(
    app: Flask, data: bytes, recipients: list[str], envelope_from: str | None
) -> list[mail_in.Outcome]:
    """Receive one message, commit, then send the mail it caused."""
    settings = MailSettings.from_config(app.config)
    with app.app_context(), writing(), database(app).session_factory() as session:
        outcomes = mail_in.receive(
            session=session,
            settings=settings,
            data=data,
            recipients=recipients,
            envelope_from=envelope_from,
            now=_clock(app)(),
            limit=rate_limits.check_content,
        )
    for outcome in outcomes:
        log.info("mail-in: %s %s", outcome.status, outcome.reason)
    if any(outcome.status != "dropped" for outcome in outcomes):
        sender_for_app(app).send(now=_clock(app)())
    return outcomes


def known_address(app: Flask, address: str) -> bool:
    """Whether `address` is a reply address pbp made (revoked ones too: their replies are
    answered with a refusal)."""
    settings = MailSettings.from_config(app.config)
    token = reply_tokens.token_of(address, settings)
    if token is None:
        return False
    with app.app_context(), database(app).session_factory() as session:
        return reply_tokens.find(session=session, token=token) is not None


class _Handler:
    def __init__(self, app: Flask):
        self.app = app

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        loop = asyncio.get_running_loop()
        if not await loop.run_in_executor(None, known_address, self.app, address):
            return "550 5.1.1 no such reply address"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        loop = asyncio.get_running_loop()
        data = envelope.original_content or envelope.content
        try:
            await loop.run_in_executor(
                None, deliver, self.app, bytes(data), list(envelope.rcpt_tos), envelope.mail_from
            )
        except Exception:
            log.exception("mail-in: a reply could not be received; the sender will retry")
            return "451 4.3.0 pbp could not take the reply now; try again later"
        return "250 OK"


class MailInServer:
    """The SMTP server of `pbp mail-in`, on its own thread: `start()`, `stop()`."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 2525):
        self.host, self.port = host, port
        settings = MailSettings.from_config(app.config)
        self.controller = Controller(
            _Handler(app),
            hostname=host,
            port=port,
            server_hostname=settings.reply_domain or None,
            data_size_limit=MAX_BYTES,
            ready_timeout=5,
        )

    def start(self) -> MailInServer:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    def __enter__(self) -> MailInServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
