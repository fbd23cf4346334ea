"""Logging in, with a limit per account over every client address (issue #28 item 8).

The rate limits of pbp.web.auth count per client address (and per address and account):
guesses spread over many addresses pass them all. Here the wrong passwords given for one
email address are counted wherever they come from, in a `LoginFailure` row (the database
is shared by every web process, whatever RATELIMIT_STORAGE_URI says):

- after `Backoff.free` failures each further one makes the next attempt wait, twice as
  long each time up to `Backoff.longest_wait`; an attempt that comes too early is refused
  (429) without its password being looked at;
- a browser that logged in to the account before carries a signed device cookie naming it
  (OWASP's "device cookies"): its attempts do not wait, so an attack on the account does
  not lock its owner out of the browsers they use;
- at `Backoff.mail_after` failures the owner is mailed, at most once per `Backoff.window`;
- failures are forgotten after a `window` without any.

The row is keyed by the address typed, account or not, so the page answers an address
without an account exactly as one with: it does not tell who has an account.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from itsdangerous import BadSignature, URLSafeSerializer
from sqlmodel import Session, col

from pbp.models import LoginFailure, User
from pbp.services import audit_actions as lines
from pbp.services.accounts import logins as accounts
from pbp.services.mail import notifications
from pbp.services.mail.settings import MailSettings

DEVICE_TTL = timedelta(days=365)
_DEVICE_SALT = "pbp-known-device"


class TooManyFailures(accounts.LoginFailed):
    status = 429


@dataclass(frozen=True)
class Backoff:
    """The numbers (PBP_LOGIN_ACCOUNT_* settings, see docs/operating.md)."""

    free: int = 5  # failures before any wait
    first_wait: timedelta = timedelta(seconds=1)
    longest_wait: timedelta = timedelta(minutes=15)
    window: timedelta = timedelta(hours=24)  # failures forgotten after this long without one
    mail_after: int = 10  # failures that mail the owner (once per window)

    def wait(self, failures: int) -> timedelta:
        """How long the next attempt waits after the `failures`-th failure in a row."""
        beyond = failures - self.free
        if beyond <= 0:
            return timedelta(0)
        # Doubling from the first wait, capped (the cap also keeps the power small).
        doublings = min(beyond - 1, 40)
        return min(self.first_wait * (2**doublings), self.longest_wait)


@dataclass(frozen=True)
class LoggedIn:
    user: User
    device: str  # the device cookie's value to (re)set


def log_in(
    *,
    session: Session,
    email: str,
    password: str,
    now: datetime,
    backoff: Backoff,
    secret_key: str,
    device: str | None = None,
    mail: MailSettings | None = None,
    sender=None,
) -> LoggedIn:
    """Check a login (accounts.authenticate) under the limit per account.

    `device` is the device cookie the browser sent, if any. Raises TooManyFailures when the
    attempt comes before the wait is over, LoginFailed for a wrong address or password
    (the caller commits either way, to keep the count and the audit row). With `mail`
    the owner is told when the failures pile up; with `sender` that mail leaves as the
    caller commits.
    """
    key = email.strip().lower()[:320]
    user = accounts.find_user(session=session, email=email) if "@" in key else None
    known = user is not None and is_known_device(
        token=device, secret_key=secret_key, user=user, now=now
    )
    if not known:
        _refuse_too_early(session=session, key=key, now=now, backoff=backoff)
    try:
        user = accounts.authenticate(session=session, email=email, password=password, now=now)
    except accounts.LoginFailed:
        failures = _count_failure(session=session, key=key, now=now, backoff=backoff)
        if user is not None and mail is not None and failures >= backoff.mail_after:
            _mail_owner(
                session=session,
                key=key,
                user=user,
                failures=failures,
                now=now,
                backoff=backoff,
                mail=mail,
                sender=sender,
            )
        raise
    if not known:
        # The right password from a browser new to the account: count afresh. A browser
        # it knows leaves the count alone, so the owner's logins do not clear an attack's.
        session.execute(
            sa.delete(LoginFailure)
            .where(col(LoginFailure.email) == key)
            .execution_options(synchronize_session=False)
        )
    return LoggedIn(user=user, device=device_token(user=user, secret_key=secret_key, now=now))


def device_token(*, user: User, secret_key: str, now: datetime) -> str:
    """The device cookie: this browser logged in to this account. It names a fingerprint
    of the password hash, so a password change makes every browser new again."""
    payload = {
        "u": user.id,
        "h": accounts._fingerprint(user.password_hash),
        "e": accounts._stamp(now + DEVICE_TTL),
    }
    return _serializer(secret_key).dumps(payload)


def is_known_device(*, token: str | None, secret_key: str, user: User, now: datetime) -> bool:
    """Whether `token` is a live device cookie for `user`."""
    if not token:
        return False
    try:
        payload = _serializer(secret_key).loads(token)
        user_id, fingerprint, expires = int(payload["u"]), str(payload["h"]), int(payload["e"])
    except (BadSignature, KeyError, TypeError, ValueError):
        return False
    return (
        user_id == user.id
        and fingerprint == accounts._fingerprint(user.password_hash)
        and accounts._stamp(now) < expires
    )


def _refuse_too_early(*, session: Session, key: str, now: datetime, backoff: Backoff) -> None:
    row = session.get(LoginFailure, key)
    if row is None or row.last_failed_at <= now - backoff.window:
        return
    ready = row.last_failed_at + backoff.wait(row.failures)
    if now < ready:
        seconds = max(1, int((ready - now).total_seconds() + 0.999))
        raise TooManyFailures(
            f"too many wrong passwords for {key} lately: wait {_duration(seconds)}, then "
            "try again (or have a password reset link mailed)"
        )


def _count_failure(*, session: Session, key: str, now: datetime, backoff: Backoff) -> int:
    """One more failure for `key`, counted by the database (so two processes counting at
    once both count); returns the count."""
    forgotten = now - backoff.window
    email, last = col(LoginFailure.email), col(LoginFailure.last_failed_at)
    update = (
        sa.update(LoginFailure)
        .where(email == key)
        .values(
            failures=sa.case((last <= forgotten, 1), else_=col(LoginFailure.failures) + 1),
            last_failed_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    if _rowcount(session.execute(update)) == 0:
        # The first failure: a new row (and the forgotten rows go, so addresses nobody
        # tries any more do not pile up). Another process may insert it first.
        session.execute(
            sa.delete(LoginFailure)
            .where(last <= forgotten)
            .execution_options(synchronize_session=False)
        )
        try:
            with session.begin_nested():
                session.execute(
                    sa.insert(LoginFailure).values(email=key, failures=1, last_failed_at=now)
                )
        except sa.exc.IntegrityError:
            session.execute(update)
    row = session.get(LoginFailure, key, populate_existing=True)
    assert row is not None  # written just above, in this transaction
    return row.failures


def _mail_owner(
    *,
    session: Session,
    key: str,
    user: User,
    failures: int,
    now: datetime,
    backoff: Backoff,
    mail: MailSettings,
    sender,
) -> None:
    """Mail the owner, once per window: the conditional UPDATE lets one process do it."""
    mailed = col(LoginFailure.mailed_at)
    claimed = session.execute(
        sa.update(LoginFailure)
        .where(
            col(LoginFailure.email) == key,
            sa.or_(mailed.is_(None), mailed <= now - backoff.window),
        )
        .values(mailed_at=now)
        .execution_options(synchronize_session=False)
    )
    if _rowcount(claimed) != 1:
        return
    noted = lines.LoginFailuresMailed({"failures": failures})
    accounts._audit(session=session, now=now, line=noted, actor=user)
    notifications.queue_login_failures(
        session=session, settings=mail, user=user, failures=failures, now=now
    )
    if sender is not None:
        sender.send_after_commit(session=session)


def _rowcount(result) -> int:
    return cast("sa.CursorResult[Any]", result).rowcount


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{(seconds + 59) // 60} minutes"


def _serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=_DEVICE_SALT)
