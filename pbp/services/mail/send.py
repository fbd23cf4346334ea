"""Delivering the outbox: claim due rows, send them over one connection, record each one.

Why it is exactly-once in practice: a row is claimed ("sending", with a lease in
`next_attempt_at`) in its own committed transaction, so two senders never take the same
row (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one conditional UPDATE, which SQLite
serialises). Each row is marked "sent" and committed right after the server accepts it, so
a sender killed mid-batch leaves the delivered rows sent and the rest "sending"; when their
lease runs out the next sender retries only those. The one gap no mail system closes -- a
crash between the server's 250 and our commit -- resends the same Message-ID, which mail
clients treat as a duplicate of the first.

Noteworthy: "all receive notification at the same time" -- an event's rows are one batch
(`batch_key`), built before connecting and sent back-to-back over one SMTP connection.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import smtplib
import ssl
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session, col, select

from pbp.errors import ConfigError, PbpError
from pbp.models import OutboxMessage, utcnow

log = logging.getLogger("pbp.mail")

LEASE = timedelta(minutes=5)  # a "sending" row older than this belongs to a dead sender
BACKOFF_FIRST = timedelta(minutes=1)
BACKOFF_MAX = timedelta(hours=6)
MAX_ATTEMPTS = 12  # about two days of retries with the backoff above
CLAIM_LIMIT = 500


class MailError(PbpError):
    """A delivery problem; the sender records it on the row, nobody sees a traceback."""


class TransportDown(MailError):
    """The server cannot be reached or used now: every message stays queued."""


class TemporaryFailure(MailError):
    """A 4xx for one message: retry that one later, go on with the rest."""


class PermanentFailure(MailError):
    """A 5xx for one message: mark it failed with the reason, go on with the rest."""


# -- transports -----------------------------------------------------------------------------


class Connection(Protocol):
    def send(self, message: EmailMessage) -> None: ...


class Transport(Protocol):
    def connect(self) -> AbstractContextManager[Connection]: ...


def _failure(code: int, reply: bytes | str) -> MailError:
    text = reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)
    reason = f"{code} {text}".strip()[:1900]
    if code == 421:  # the server is closing the connection
        return TransportDown(reason)
    return PermanentFailure(reason) if 500 <= code < 600 else TemporaryFailure(reason)


class _SmtpConnection:
    def __init__(self, smtp: smtplib.SMTP):
        self.smtp = smtp

    def send(self, message: EmailMessage) -> None:
        try:
            self.smtp.send_message(message)
        except smtplib.SMTPRecipientsRefused as exc:
            code, reply = next(iter(exc.recipients.values()))
            raise _failure(code, reply) from exc
        except smtplib.SMTPServerDisconnected as exc:
            raise TransportDown(f"the server closed the connection: {exc}") from exc
        except smtplib.SMTPResponseException as exc:
            raise _failure(exc.smtp_code, exc.smtp_error) from exc
        except (OSError, smtplib.SMTPException) as exc:
            raise TransportDown(f"{type(exc).__name__}: {exc}") from exc


@dataclass
class SmtpTransport:
    """smtplib over plain SMTP, STARTTLS or implicit TLS ("tls"), with optional login."""

    host: str
    port: int = 25
    security: str = "plain"  # "plain" | "starttls" | "tls"
    username: str | None = None
    password: str | None = None
    timeout: float = 30.0
    ssl_context: ssl.SSLContext | None = None

    def _context(self) -> ssl.SSLContext:
        return self.ssl_context or ssl.create_default_context()

    def _open(self) -> smtplib.SMTP:
        where = f"{self.host}:{self.port}"
        try:
            if self.security == "tls":
                return smtplib.SMTP_SSL(
                    self.host, self.port, timeout=self.timeout, context=self._context()
                )
            return smtplib.SMTP(self.host, self.port, timeout=self.timeout)
        except (OSError, smtplib.SMTPException) as exc:
            raise TransportDown(f"cannot connect to the mail server {where}: {exc}") from exc

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        smtp = self._open()
        try:
            try:
                smtp.ehlo()
                if self.security == "starttls":
                    smtp.starttls(context=self._context())
                    smtp.ehlo()
                if self.username:
                    smtp.login(self.username, self.password or "")
            except (OSError, smtplib.SMTPException) as exc:
                raise TransportDown(f"mail server {self.host}:{self.port}: {exc}") from exc
            yield _SmtpConnection(smtp)
        finally:
            try:
                smtp.quit()
            except (OSError, smtplib.SMTPException):
                pass
            finally:
                smtp.close()


class _FolderConnection:
    def __init__(self, path: Path):
        self.path = path

    def send(self, message: EmailMessage) -> None:
        # Named by Message-ID: a resend overwrites the same file, one file per message.
        name = re.sub(r"[^A-Za-z0-9.@_-]", "_", str(message["Message-ID"]).strip("<> "))
        target = self.path / f"{name}.eml"
        temp = target.with_suffix(".tmp")
        try:
            # 0600: a message can carry a password-reset or invite link.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(bytes(message))
            os.chmod(temp, 0o600)  # a .tmp left by an older version keeps its old mode
            os.replace(temp, target)
        except OSError as exc:
            raise TransportDown(f"cannot write to the outbox folder {self.path}: {exc}") from exc


@dataclass
class FolderTransport:
    """The embedded default: each message becomes an .eml file in `<instance>/outbox/`,
    so a demo with no mail server still shows what would have been sent."""

    path: Path

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        try:
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise TransportDown(f"cannot create the outbox folder {self.path}: {exc}") from exc
        yield _FolderConnection(self.path)


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def transport_from_config(config: Mapping, instance_path: str | Path) -> Transport:
    """`SMTP_URL` as smtp://[user:password@]host[:port][?starttls=1&timeout=30] or
    smtps://...; none configured means the outbox folder in the instance folder."""
    url = config.get("SMTP_URL")
    if not url:
        return FolderTransport(Path(instance_path) / "outbox")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    starttls = _flag(query.get("starttls", ""))
    if scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ConfigError(f"SMTP_URL must look like smtp://user:password@host:587, not {url!r}")
    if scheme == "smtps" and starttls:
        raise ConfigError("SMTP_URL: smtps:// is TLS from the start; starttls applies to smtp://")
    security = "tls" if scheme == "smtps" else ("starttls" if starttls else "plain")
    try:
        port = parts.port or {"tls": 465, "starttls": 587, "plain": 25}[security]
        timeout = float(query.get("timeout", 30))
    except ValueError as exc:
        raise ConfigError(f"SMTP_URL has a bad port or timeout: {exc}") from exc
    return SmtpTransport(
        host=parts.hostname,
        port=port,
        security=security,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        timeout=timeout,
    )


# -- the message ----------------------------------------------------------------------------


def build_email(row: OutboxMessage) -> EmailMessage:
    """The stored row as a MIME message: plain text with an HTML alternative."""
    message = EmailMessage()
    headers = dict(row.headers or {})
    message["From"] = headers.pop("From")
    message["To"] = row.recipient
    message["Subject"] = row.subject
    message["Date"] = headers.pop("Date")
    message["Message-ID"] = row.message_id
    for name, value in headers.items():
        message[name] = value
    message.set_content(row.body_text)
    if row.body_html:
        message.add_alternative(row.body_html, subtype="html")
        # A boundary derived from the Message-ID: a retry sends the very same bytes.
        digest = hashlib.sha256(row.message_id.encode()).hexdigest()[:32]
        message.set_boundary(f"=_pbp_{digest}")
    return message


# -- sending --------------------------------------------------------------------------------


@dataclass
class SendReport:
    sent: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    deferred: list[int] = field(default_factory=list)
    connections: int = 0
    error: str | None = None

    @property
    def claimed(self) -> int:
        return len(self.sent) + len(self.failed) + len(self.deferred)


def backoff(attempts: int) -> timedelta:
    """1, 2, 4 ... minutes, at most six hours: an outage is not hammered."""
    return min(BACKOFF_FIRST * (2 ** max(attempts - 1, 0)), BACKOFF_MAX)


def _due(now: datetime):
    queued = sa.and_(
        col(OutboxMessage.status) == "queued",
        sa.or_(
            col(OutboxMessage.next_attempt_at).is_(None), col(OutboxMessage.next_attempt_at) <= now
        ),
    )
    # A "sending" row whose lease ran out was claimed by a sender that died.
    stale = sa.and_(
        col(OutboxMessage.status) == "sending", col(OutboxMessage.next_attempt_at) <= now
    )
    return sa.or_(queued, stale)


class Channel(Protocol):
    """A way out of the outbox beside mail (issue #31: push, chat). `deliver` sends the
    claimed rows of its channel and records each one (`record`, `retry_later`)."""

    def deliver(
        self, session: Session, rows: list[OutboxMessage], now: datetime, report: SendReport
    ) -> None: ...


def _claim(
    session: Session,
    now: datetime,
    batch_key: str | None,
    limit: int,
    channels: tuple[str, ...] = ("mail",),
) -> list[int]:
    # Only rows of channels this sender can deliver: a sender without push leaves pushes.
    candidates = select(OutboxMessage.id).where(_due(now), col(OutboxMessage.channel).in_(channels))
    if batch_key is not None:
        candidates = candidates.where(
            col(OutboxMessage.dedupe_key).startswith(batch_key, autoescape=True)
        )
    candidates = (
        candidates.order_by(col(OutboxMessage.id)).limit(limit).with_for_update(skip_locked=True)
    )
    if session.get_bind().dialect.name == "sqlite":
        # One UPDATE takes SQLite's write lock at once (a read first could go stale).
        wanted: Any = candidates
    else:
        # PostgreSQL: select the ids (SKIP LOCKED) first. A single UPDATE ... WHERE id IN
        # (subquery LIMIT n) may re-run the subquery per row and claim far more than n.
        wanted = list(session.execute(candidates).scalars())
    # The repeated _due() keeps the UPDATE conditional: a row claimed meanwhile is left alone.
    claim = (
        sa.update(OutboxMessage)
        .where(col(OutboxMessage.id).in_(wanted), _due(now))
        .values(status="sending", attempts=OutboxMessage.attempts + 1, next_attempt_at=now + LEASE)
        .returning(col(OutboxMessage.id))
        .execution_options(synchronize_session=False)
    )
    ids = sorted(session.execute(claim).scalars())
    session.commit()
    return ids


def record(session: Session, row_id: int, **values) -> None:
    """Update a row we hold; commit at once so a crash cannot undo it."""
    session.execute(
        sa.update(OutboxMessage)
        .where(col(OutboxMessage.id) == row_id, col(OutboxMessage.status) == "sending")
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    session.commit()


def retry_later(session, row_id: int, attempts: int, now: datetime, reason: str) -> bool:
    """Back to the queue with backoff, or failed after MAX_ATTEMPTS; True if requeued."""
    if attempts >= MAX_ATTEMPTS:
        reason = f"gave up after {attempts} attempts: {reason}"
        record(session, row_id, status="failed", last_error=reason[:2000])
        return False
    record(
        session,
        row_id,
        status="queued",
        next_attempt_at=now + backoff(attempts),
        last_error=reason[:2000],
    )
    return True


def _sessions(engine_or_sessionmaker) -> Callable[[], Session]:
    if isinstance(engine_or_sessionmaker, Engine):
        return sessionmaker(engine_or_sessionmaker, class_=Session, expire_on_commit=False)
    return engine_or_sessionmaker


def send_pending(
    *,
    engine_or_sessionmaker: Engine | Callable[[], Session],
    transport: Transport,
    now: datetime,
    batch_key: str | None = None,
    limit: int = CLAIM_LIMIT,
    channels: Mapping[str, Channel] | None = None,
) -> SendReport:
    """Deliver due messages (all, or one batch) over one connection; see the module doc.

    Issue #31: `channels` ("push", "chat") deliver their rows of the same batch right
    after the mail, in this same call, so one event reaches every channel at once; mail
    goes first, so a slow or failing chat webhook never holds it back."""
    report = SendReport()
    channels = channels or {}
    with _sessions(engine_or_sessionmaker)() as session:
        ids = _claim(session, now, batch_key, limit, ("mail", *channels))
        if not ids:
            return report
        claimed = session.exec(
            select(OutboxMessage)
            .where(col(OutboxMessage.id).in_(ids))
            .order_by(col(OutboxMessage.id))
        ).all()
        session.commit()  # end the read: SQLite refuses a write in a stale WAL snapshot
        rows = [row for row in claimed if row.channel == "mail"]
        if rows:
            _send_mail(session, transport, rows, now, report)
        for name, channel in channels.items():
            mine = [row for row in claimed if row.channel == name]
            if mine:
                channel.deliver(session, mine, now, report)
    return report


def _send_mail(
    session: Session,
    transport: Transport,
    rows: list[OutboxMessage],
    now: datetime,
    report: SendReport,
) -> None:
    work = []
    for row in rows:
        try:
            work.append((row.id, row.attempts, build_email(row)))
        except (ValueError, TypeError, KeyError) as exc:
            record(session, row.id, status="failed", last_error=f"cannot build: {exc}")
            report.failed.append(row.id)
    done = 0
    try:
        with transport.connect() as connection:
            report.connections += 1
            for row_id, attempts, message in work:
                try:
                    connection.send(message)
                except PermanentFailure as exc:
                    record(session, row_id, status="failed", last_error=str(exc))
                    report.failed.append(row_id)
                except TemporaryFailure as exc:
                    requeued = retry_later(session, row_id, attempts, now, str(exc))
                    (report.deferred if requeued else report.failed).append(row_id)
                else:
                    record(session, row_id, status="sent", sent_at=now, last_error=None)
                    report.sent.append(row_id)
                done += 1
    except TransportDown as exc:
        report.error = str(exc)
        log.warning("mail: %s; %d message(s) stay queued", exc, len(work) - done)
        for row_id, attempts, _message in work[done:]:
            if retry_later(session, row_id, attempts, now, str(exc)):
                report.deferred.append(row_id)
            else:
                report.failed.append(row_id)


# -- when to send ---------------------------------------------------------------------------

_AFTER_COMMIT = "pbp.mail.after_commit"


def _run_after_commit(session: Session) -> None:
    for send in session.info.pop(_AFTER_COMMIT, []):
        try:
            send()
        except Exception:  # the commit is done; the sweep will send what this did not
            log.exception("mail: sending right after commit failed")


def _drop_after_rollback(session: Session, previous_transaction) -> None:
    if previous_transaction.parent is None:  # the whole change, not one savepoint
        session.info.pop(_AFTER_COMMIT, None)


def run_after_commit(*, session: Session, send: Callable[[], object]) -> None:
    """Call `send` once `session` commits, never if it rolls back: before the commit the
    sender's own connection cannot see the rows (and must not send a change undone)."""
    session.info.setdefault(_AFTER_COMMIT, []).append(send)
    if not sa.event.contains(session, "after_commit", _run_after_commit):
        sa.event.listen(session, "after_commit", _run_after_commit)
        sa.event.listen(session, "after_soft_rollback", _drop_after_rollback)


@dataclass
class Sender:
    """Where to read the outbox and how to deliver it; what a web request or job needs."""

    engine_or_sessionmaker: Engine | Callable[[], Session]
    transport: Transport
    background: bool = True
    threads: list[threading.Thread] = field(default_factory=list)
    channels: Mapping[str, Channel] = field(default_factory=dict)  # issue #31: push, chat

    def send(self, *, now: datetime, batch_key: str | None = None) -> SendReport:
        return send_pending(
            engine_or_sessionmaker=self.engine_or_sessionmaker,
            transport=self.transport,
            now=now,
            batch_key=batch_key,
            channels=self.channels,
        )

    def send_after_commit(
        self, *, session: Session, batch_key: str | None = None, background: bool | None = None
    ) -> None:
        """Deliver the batch as soon as the caller's transaction commits; in a thread by
        default so the referee's request does not wait for the mail server. Whatever
        this misses (the process dies first) the scheduler's sweep sends."""
        background = self.background if background is None else background

        def send() -> None:
            self.send(now=utcnow(), batch_key=batch_key)

        def start() -> None:
            thread = threading.Thread(target=_logged(send), name="pbp-mail", daemon=True)
            self.threads = [t for t in self.threads if t.is_alive()] + [thread]
            thread.start()

        run_after_commit(session=session, send=start if background else send)


def _logged(func: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            func()
        except Exception:
            log.exception("mail: background send failed; the sweep will retry")

    return run


def sender_for_app(app) -> Sender:
    """The app's outbox sender: the app's sessions and its configured transport. A
    testing app sends in the caller's thread: its sessions share the test's connection,
    which two threads must not use at once."""
    from pbp.db import database

    return Sender(
        database(app).session_factory,
        transport_from_config(app.config, app.instance_path),
        background=not app.testing,
        channels=channels_for_app(app),
    )


def channels_for_app(app) -> dict[str, Channel]:
    """Push and chat (issue #31), sharing one guarded fetcher per process with a deadline
    of PBP_CHANNEL_SECONDS (10 s) a request. Without a VAPID `sub` (no PBP_VAPID_SUB and
    no address in MAIL_FROM) pushes stay queued: the dashboard's outbox shows them."""
    from pbp.services.mail.chat_send import ChatChannel
    from pbp.services.mail.push_send import PushChannel, vapid_key, vapid_sub
    from pbp.services.noteworthy.polling.app import fetcher_from_config

    fetcher = app.extensions.get("pbp_channel_fetcher")
    if fetcher is None:
        seconds = float(app.config.get("PBP_CHANNEL_SECONDS") or 10)
        fetcher = fetcher_from_config(app.config, total_seconds=seconds)
        app.extensions["pbp_channel_fetcher"] = fetcher
    channels: dict[str, Channel] = {"chat": ChatChannel(fetcher)}
    try:
        sub = vapid_sub(app.config)
    except ConfigError as exc:
        log.warning("push: %s; pushes stay queued", exc)
    else:
        channels["push"] = PushChannel(fetcher, vapid_key(app.instance_path), sub)
    return channels


def send_outbox(app) -> SendReport:
    """The scheduler's sweep: everything due, including rows a dead sender left behind."""
    return sender_for_app(app).send(now=utcnow())
