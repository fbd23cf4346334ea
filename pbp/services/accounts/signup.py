"""Open sign-up (PBP_SIGNUP=open): an account anyone can start, working once the owner of
the address followed the link mailed there and chose a password on its page.

Issue #28:
- item 7: the sign-up form takes no password. Whoever types an address cannot choose the
  password that will open its account: the confirmation page, reached only through the
  mailbox, asks for it;
- item 1: the link works once (the account stops waiting as it is used), within its two
  days, and carries a fingerprint of the password hash, so no password change leaves it
  alive. It never logs in by itself: using it means choosing the password;
- item 6: an address that has an account gets the page a new one gets, "check your mail",
  for the same work (one mail queued); the mail tells the owner someone tried.

Like the password-reset link in pbp.services.accounts.logins, the confirmation link is signed
with itsdangerous and carries its own expiry, so it needs no table. The web layer checks
the mode; these functions do not read the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from itsdangerous import BadSignature, URLSafeSerializer
from sqlmodel import Session, col

from pbp import links
from pbp.errors import NotFound, UserError
from pbp.models import User
from pbp.services import audit_actions as lines
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.mail import notifications
from pbp.services.mail.settings import MailSettings

CONFIRM_TTL = timedelta(days=2)
MAX_NAME_LENGTH = 120  # User.display_name
_CONFIRM_SALT = "pbp-signup-confirm"


class NotConfirmed(UserError):
    """A right password for an account whose address is not confirmed yet."""

    status = 403


class AlreadyConfirmed(accounts.LinkGone):
    """A confirmation link followed again: it has done its work once."""


@dataclass(frozen=True)
class IssuedConfirmation:
    user: User
    url: str
    expires_at: datetime


@dataclass(frozen=True)
class PendingConfirmation:
    """What the confirmation page shows: the account it confirms, and the name it takes."""

    user: User
    display_name: str


def sign_up(
    *,
    session: Session,
    email: str,
    display_name: str,
    secret_key: str,
    base_url: str,
    now: datetime,
    mail_from: str,
    sender=None,
) -> str:
    """Sign up with an address; returns it, cleaned, for the "check your mail" page.
    With `sender` (pbp.services.mail.send.Sender) the mail goes out as the caller commits:
    the person is waiting for it.

    Issue #28 item 6: every address gets the same answer and one mail. A new address gets
    an account waiting for confirmation and the link; an account still waiting gets a new
    link (it is nobody's until someone follows one); a confirmed account is left as it is,
    and its owner is told that someone tried.
    """
    display_name = (display_name or "").strip()
    if not display_name:
        raise UserError("give the name the other players will see")
    if len(display_name) > MAX_NAME_LENGTH:
        raise UserError(f"a name can have at most {MAX_NAME_LENGTH} characters")
    email = accounts._clean_email(email)
    mail = {"base_url": base_url, "secret_key": secret_key, "mail_from": mail_from}
    user = accounts.find_user(session=session, email=email)
    if user is None:
        user = campaigns.create_user(session=session, email=email, display_name=display_name)
        user.created_at = now
        user.awaiting_confirmation = True
        session.add(user)
        session.flush()
        created = lines.AccountCreated({"via": "signup"})
        accounts._audit(session=session, now=now, line=created, actor=user)
        _mail_link(session=session, user=user, name=display_name, now=now, sender=sender, **mail)
    elif user.awaiting_confirmation:
        accounts._audit(session=session, now=now, line=lines.SignupRepeated(), actor=user)
        _mail_link(session=session, user=user, name=display_name, now=now, sender=sender, **mail)
    else:
        accounts._audit(session=session, now=now, line=lines.SignupExistingAccount(), actor=user)
        notifications.queue_signup_existing(
            session=session, settings=_settings(**mail), user=user, now=now
        )
        if sender is not None:
            sender.send_after_commit(session=session)
    return email


def resend_confirmation(
    *,
    session: Session,
    email: str,
    secret_key: str,
    base_url: str,
    now: datetime,
    mail_from: str,
    sender=None,
) -> IssuedConfirmation | None:
    """A fresh link for an account still waiting; None (and no mail) for any other
    address, so the page says the same whoever asks."""
    user = accounts.find_user(session=session, email=email) if "@" in email else None
    if user is None or not user.awaiting_confirmation:
        return None
    return _mail_link(
        session=session,
        user=user,
        name=user.display_name,
        secret_key=secret_key,
        base_url=base_url,
        now=now,
        mail_from=mail_from,
        sender=sender,
    )


def check_confirmation(
    *, session: Session, token: str, secret_key: str, now: datetime
) -> PendingConfirmation:
    """The account a confirmation link is for, or a refusal: not a link, the account is
    gone, already confirmed (issue #28 item 1: "log in"), expired, or superseded by a
    password set since."""
    try:
        payload = _serializer(secret_key).loads(token)
        user_id, expires = int(payload["u"]), int(payload["e"])
        fingerprint, name = str(payload["h"]), str(payload["d"])
    except (BadSignature, KeyError, TypeError, ValueError):
        raise NotFound(
            "this confirmation link is not valid; check that you copied all of it, or "
            "have a new one sent"
        ) from None
    user = session.get(User, user_id)
    if user is None:
        raise accounts.LinkGone("this account no longer exists; sign up again")
    if not user.awaiting_confirmation:
        raise AlreadyConfirmed(f"{user.email} is already confirmed: log in")
    if accounts._stamp(now) >= expires:
        raise accounts.LinkGone("this confirmation link has expired; have a new one sent")
    if fingerprint != accounts._fingerprint(user.password_hash):
        raise accounts.LinkGone(
            "this confirmation link was replaced (the account's password changed since); "
            "have a new one sent"
        )
    return PendingConfirmation(user=user, display_name=name or user.display_name)


def confirm_account(
    *, session: Session, token: str, secret_key: str, password: str, now: datetime
) -> User:
    """Follow the mailed link and choose the password: the account works from now on.

    The account is claimed with a conditional UPDATE, so the link works once even when
    two requests race on it.
    """
    pending = check_confirmation(session=session, token=token, secret_key=secret_key, now=now)
    user = pending.user
    accounts.check_password_policy(password, email=user.email)
    result = cast(
        "sa.CursorResult[Any]",
        session.execute(
            sa.update(User)
            .where(col(User.id) == user.id, col(User.awaiting_confirmation).is_(True))
            .values(awaiting_confirmation=False)
            .execution_options(synchronize_session=False)
        ),
    )
    if result.rowcount != 1:
        raise AlreadyConfirmed(f"{user.email} is already confirmed: log in")
    user.awaiting_confirmation = False
    user.display_name = pending.display_name
    user.password_hash = accounts.hash_password(password)
    session.add(user)
    session.flush()
    accounts._audit(session=session, now=now, line=lines.AccountConfirmed(), actor=user)
    return user


def require_confirmed(user: User) -> None:
    """Refuse a login to an account whose address is not confirmed yet (one made before
    issue #28 item 7, when sign-up still took a password)."""
    if user.awaiting_confirmation:
        raise NotConfirmed(
            f"{user.email} is not confirmed yet: follow the link in the mail we sent there, "
            "or have a new one sent"
        )


def _mail_link(
    *,
    session: Session,
    user: User,
    name: str,
    secret_key: str,
    base_url: str,
    now: datetime,
    mail_from: str,
    sender=None,
) -> IssuedConfirmation:
    expires_at = now + CONFIRM_TTL
    # The issue time makes each re-send a new link (and a new mail in the outbox). The
    # name is the one typed for this link: the account takes it from the link followed.
    payload = {
        "u": user.id,
        "e": accounts._stamp(expires_at),
        "n": now.timestamp(),
        "h": accounts._fingerprint(user.password_hash),
        "d": name,
    }
    token = _serializer(secret_key).dumps(payload)
    url = links.absolute(base_url, links.signup_confirmation(token))
    notifications.queue_signup_confirmation(
        session=session,
        settings=_settings(base_url=base_url, secret_key=secret_key, mail_from=mail_from),
        user=user,
        url=url,
        now=now,
        name=name,
    )
    if sender is not None:
        sender.send_after_commit(session=session)
    return IssuedConfirmation(user=user, url=url, expires_at=expires_at)


def _settings(*, base_url: str, secret_key: str, mail_from: str) -> MailSettings:
    return MailSettings(base_url.rstrip("/"), secret_key, mail_from)


def _serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=_CONFIRM_SALT)
