"""Open sign-up (PBP_SIGNUP=open): an account anyone can make, working once its owner
followed the confirmation link mailed to the address.

Like the password-reset link in pbp.services.accounts.logins, the confirmation link is signed
with itsdangerous and carries its own expiry, so it needs no table: it names the user and
a time after which it is refused. Confirming twice is harmless (the account simply works).
The web layer checks the mode; these functions do not read the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from itsdangerous import BadSignature, URLSafeSerializer
from sqlmodel import Session

from pbp import links
from pbp.errors import Conflict, NotFound, UserError
from pbp.models import User
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.mail import notifications
from pbp.services.mail.settings import MailSettings

CONFIRM_TTL = timedelta(days=2)
_CONFIRM_SALT = "pbp-signup-confirm"


class NotConfirmed(UserError):
    """A right password for an account whose address is not confirmed yet."""

    status = 403


@dataclass(frozen=True)
class IssuedConfirmation:
    user: User
    url: str
    expires_at: datetime


def sign_up(
    *,
    session: Session,
    email: str,
    display_name: str,
    password: str,
    secret_key: str,
    base_url: str,
    now: datetime,
    mail_from: str,
    sender=None,
) -> IssuedConfirmation:
    """Make an account that waits for its address to be confirmed, and mail the link.
    With `sender` (pbp.services.mail.send.Sender) the mail goes out as the caller commits:
    the person is waiting for it.

    The same password policy as every other way in; an address that has an account is
    refused (log in, or reset its password), never overwritten: replacing a waiting
    account's password would hand it to whoever typed the address first.
    """
    accounts.check_password_policy(password, email=email)
    if accounts.find_user(session=session, email=email) is not None:
        raise Conflict(
            f"there is already an account for {email.strip().lower()}: log in, or ask "
            "for a password reset if you forgot the password"
        )
    display_name = (display_name or "").strip()
    if not display_name:
        raise UserError("give the name the other players will see")
    user = campaigns.create_user(session=session, email=email, display_name=display_name)
    user.password_hash = accounts.hash_password(password)
    user.created_at = now
    user.awaiting_confirmation = True
    session.add(user)
    session.flush()
    accounts._audit(session=session, now=now, action="account.created", actor=user, via="signup")
    return _mail_link(
        session=session,
        user=user,
        secret_key=secret_key,
        base_url=base_url,
        now=now,
        mail_from=mail_from,
        sender=sender,
    )


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
        secret_key=secret_key,
        base_url=base_url,
        now=now,
        mail_from=mail_from,
        sender=sender,
    )


def confirm_account(*, session: Session, token: str, secret_key: str, now: datetime) -> User:
    """Follow the mailed link: the account works from now on."""
    try:
        payload = _serializer(secret_key).loads(token)
        user_id, expires = int(payload["u"]), int(payload["e"])
    except (BadSignature, KeyError, TypeError, ValueError):
        raise NotFound(
            "this confirmation link is not valid; check that you copied all of it, or "
            "log in to have a new one sent"
        ) from None
    user = session.get(User, user_id)
    if user is None:
        raise accounts.LinkGone("this account no longer exists; sign up again")
    if not user.awaiting_confirmation:
        return user  # a second click on the same link: nothing left to do
    if int(now.timestamp()) >= expires:
        raise accounts.LinkGone("this confirmation link has expired; log in to have a new one sent")
    user.awaiting_confirmation = False
    session.add(user)
    session.flush()
    accounts._audit(session=session, now=now, action="account.confirmed", actor=user)
    return user


def require_confirmed(user: User) -> None:
    """Refuse a login to an account whose address is not confirmed yet."""
    if user.awaiting_confirmation:
        raise NotConfirmed(
            f"{user.email} is not confirmed yet: follow the link in the mail we sent there, "
            "or have a new one sent"
        )


def _mail_link(
    *,
    session: Session,
    user: User,
    secret_key: str,
    base_url: str,
    now: datetime,
    mail_from: str,
    sender=None,
) -> IssuedConfirmation:
    expires_at = now + CONFIRM_TTL
    # The issue time makes each re-send a new link (and a new mail in the outbox).
    payload = {"u": user.id, "e": int(expires_at.timestamp()), "n": now.timestamp()}
    token = _serializer(secret_key).dumps(payload)
    url = links.absolute(base_url, links.signup_confirmation(token))
    settings = MailSettings(base_url.rstrip("/"), secret_key, mail_from)
    notifications.queue_signup_confirmation(
        session=session, settings=settings, user=user, url=url, now=now
    )
    if sender is not None:
        sender.send_after_commit(session=session)
    return IssuedConfirmation(user=user, url=url, expires_at=expires_at)


def _serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=_CONFIRM_SALT)
