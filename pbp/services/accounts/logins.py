"""Accounts: invitations, passwords, logins and password resets.

Flask-free like every service: the web layer passes the secret key, the site's base URL
and `now`, so every decision here (expired? used? which password?) is testable without a
clock or a request. Each change writes an `AuditLog` row in the same transaction.

Links are signed with itsdangerous (the library Flask itself uses for sessions):
- an invite link signs the invite's id; expiry and single use live in the `Invite` row;
- a reset link signs the user's id, an expiry time and a fingerprint of the current
  password hash, so it stops working as soon as the password changes (single use
  without a table).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from itsdangerous import BadSignature, URLSafeSerializer
from sqlmodel import Session, col, select
from werkzeug.security import check_password_hash, generate_password_hash

from pbp import limits, links
from pbp.errors import Conflict, NotFound, UserError
from pbp.models import ROLES, Campaign, Character, Invite, Membership, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns
from pbp.services.accounts import tokens as api_tokens
from pbp.services.mail import notifications
from pbp.services.mail.settings import MailSettings

INVITE_TTL = timedelta(days=limits.INVITE_DAYS)
MAX_INVITE_TTL = timedelta(days=limits.MAX_INVITE_DAYS)
RESET_TTL = timedelta(hours=2)
MIN_PASSWORD_LENGTH = limits.PASSWORD_MIN
MAX_PASSWORD_LENGTH = limits.PASSWORD_MAX
PASSWORD_METHOD = "scrypt"  # werkzeug's scrypt (n=2**15, r=8, p=1), salted per hash

_INVITE_SALT = "pbp-invite"
_RESET_SALT = "pbp-password-reset"


class LinkGone(UserError):
    """A link that was real but can no longer be used (expired, used, superseded)."""

    status = 410


class LoginFailed(UserError):
    status = 400


@dataclass(frozen=True)
class IssuedInvite:
    invite: Invite
    token: str
    url: str


@dataclass(frozen=True)
class InviteDetails:
    """What the invite page shows: who is invited to what."""

    invite: Invite
    campaign: Campaign
    character: Character | None


@dataclass(frozen=True)
class IssuedReset:
    user: User
    token: str
    url: str
    expires_at: datetime


# --- invites -------------------------------------------------------------------------


def character_to_invite(
    *, session: Session, campaign: Campaign, slug: str | None
) -> Character | None:
    """The character an invitation comes with, named by its slug (none for an empty one):
    the page's select and the API's `character` both name it so."""
    if not slug:
        return None
    try:
        return campaigns.character_by_slug(session=session, campaign=campaign, slug=slug)
    except NotFound as exc:  # a bad choice on the form: shown on it, not a missing page
        raise UserError(f"{campaign.name} has no character {slug!r}") from exc


def create_invite(
    *,
    session: Session,
    campaign: Campaign,
    created_by: User,
    secret_key: str,
    base_url: str,
    now: datetime,
    character: Character | None = None,
    email: str | None = None,
    role: str = "player",
    ttl: timedelta = INVITE_TTL,
    mail_from: str | None = None,
    sender=None,
) -> IssuedInvite:
    """Create a single-use invite link; queue it by email when an address and
    `mail_from` are given (the link is returned either way, for the referee to copy).
    With `sender` (pbp.services.mail.send.Sender) the mail goes out as the caller commits,
    not at the scheduler's next sweep.

    The caller checks that `created_by` is the campaign's referee (pbp.web.access); the
    service re-checks so a script cannot hand out invites in someone else's game.
    """
    _require_referee(session=session, campaign=campaign, user=created_by)
    if role not in ROLES:
        raise UserError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
    if not timedelta(hours=1) <= ttl <= MAX_INVITE_TTL:
        raise UserError(f"an invite can last from one hour to {MAX_INVITE_TTL.days} days")
    if character is not None:
        if role != "player":
            raise UserError("only a player invite can come with a character")
        if character.campaign_id != campaign.id:
            raise UserError(f"{character.name} is not a character in {campaign.name}")
        if character.user_id is not None:
            raise Conflict(f"{character.name} already has a player")
    email = _clean_email(email) if email else None
    invite = Invite(
        campaign_id=campaign.id,
        character_id=character.id if character else None,
        email=email,
        role=role,
        created_by=created_by.id,
        created_at=now,
        expires_at=now + ttl,
    )
    session.add(invite)
    session.flush()
    token = invite_token(invite=invite, secret_key=secret_key)
    url = links.absolute(base_url, links.invite(token))
    created = lines.InviteCreated(
        invite.id,
        role=role,
        character_id=invite.character_id,
        email=email,
        expires_at=invite.expires_at.isoformat(),
    )
    _audit(session=session, now=now, line=created, actor=created_by, campaign_id=campaign.id)
    if email and mail_from:
        notifications.queue_invite(
            session=session,
            settings=MailSettings(base_url.rstrip("/"), secret_key, mail_from),
            now=now,
            invite=invite,
            url=url,
        )
        _send_soon(session, sender)
    return IssuedInvite(invite=invite, token=token, url=url)


def invite_token(*, invite: Invite, secret_key: str) -> str:
    """The signed part of an invite's link; the same every time for the same invite, so
    the referee can copy it again from the list of open invitations."""
    return _invite_serializer(secret_key).dumps({"i": invite.id, "t": _stamp(invite.created_at)})


def check_invite(*, session: Session, token: str, secret_key: str, now: datetime) -> InviteDetails:
    """The invite behind a link, or a clear refusal: not a link, expired or used."""
    try:
        payload = _invite_serializer(secret_key).loads(token)
        invite_id, stamp = int(payload["i"]), int(payload["t"])
    except (BadSignature, KeyError, TypeError, ValueError):
        raise NotFound(
            "this invitation link is not valid; check that you copied all of it, "
            "or ask the referee for a new one"
        ) from None
    invite = session.get(Invite, invite_id)
    # The creation time binds the link to this very row, should ids ever be reused.
    if invite is None or _stamp(invite.created_at) != stamp:
        raise LinkGone("this invitation was withdrawn; ask the referee for a new one")
    if invite.used_at is not None:
        raise LinkGone(
            f"this invitation was already used on {invite.used_at:%Y-%m-%d}; if that was "
            "you, log in; otherwise ask the referee for a new link"
        )
    if now >= invite.expires_at:
        raise LinkGone(
            f"this invitation expired on {invite.expires_at:%Y-%m-%d %H:%M} UTC; "
            "ask the referee for a new one"
        )
    campaign = session.get(Campaign, invite.campaign_id)
    assert campaign is not None  # the invitation's foreign key
    character = session.get(Character, invite.character_id) if invite.character_id else None
    return InviteDetails(invite=invite, campaign=campaign, character=character)


def accept_invite(
    *,
    session: Session,
    token: str,
    secret_key: str,
    now: datetime,
    user: User | None = None,
    email: str | None = None,
    display_name: str | None = None,
    password: str | None = None,
) -> User:
    """Use an invite: join the campaign, as the logged-in `user` or as a new account.

    A new account needs `email`, `display_name` and `password`. An address that already
    has an account is refused: attaching an invite to it without its password would let
    a leaked link take over the account (log in first, then open the link). An account
    still waiting for its sign-up confirmation is nobody's yet, so it never blocks an
    invitation (issue #28 item 7): accepting takes the address over, with this password.
    The invite is claimed with a conditional UPDATE, so two people racing on one link
    cannot both get in.
    """
    details = check_invite(session=session, token=token, secret_key=secret_key, now=now)
    invite, campaign, character = details.invite, details.campaign, details.character
    if character is not None and character.user_id is not None:
        raise Conflict(f"{character.name} already has a player; ask the referee")
    created, took_over = user is None, False
    if user is None:
        email = _invited_address(invite, email)
        if not (email and password):
            raise UserError("an email address and a password are needed to join")
        check_password_policy(password, email=email)
        user = find_user(session=session, email=email)
        if user is not None and not user.awaiting_confirmation:
            raise Conflict(
                f"there is already an account for {_clean_email(email)}: log in, then open "
                "the invitation link again"
            )
        if user is None:
            user = campaigns.create_user(
                session=session, email=email, display_name=display_name or email.split("@")[0]
            )
            user.created_at = now
        else:  # a waiting sign-up: its links and any password typed with it stop working
            took_over = True
            user.display_name = display_name or user.display_name
            user.awaiting_confirmation = False
            _end_sessions(user)
        user.password_hash = hash_password(password)
        session.add(user)
        session.flush()
    else:
        current = campaigns.membership(session=session, campaign=campaign, user=user)
        if current is not None:
            raise Conflict(f"you are already in {campaign.name} (as {current.role})")
    _claim(session=session, invite=invite, user=user, now=now)
    session.add(
        Membership(campaign_id=campaign.id, user_id=user.id, role=invite.role, created_at=now)
    )
    if character is not None:
        _claim_character(session=session, character=character, user=user)
    session.flush()
    if created:
        extra = {"via": "invite", **({"took_over_waiting_signup": True} if took_over else {})}
        _audit(session=session, now=now, line=lines.AccountCreated(extra), actor=user)
    accepted = lines.InviteAccepted(
        invite.id, role=invite.role, character_id=invite.character_id, new_account=created
    )
    _audit(session=session, now=now, line=accepted, actor=user, campaign_id=campaign.id)
    return user


def _invited_address(invite: Invite, email: str | None) -> str | None:
    """An invitation that names an address makes the account under that address only:
    whoever holds the link cannot register another one with it."""
    if not invite.email:
        return email
    if email and _clean_email(email) != invite.email:
        raise UserError(
            f"this invitation is for {invite.email}; the account is made under that "
            "address (ask the referee for an invitation for another one)"
        )
    return invite.email


def open_invites(*, session: Session, campaign: Campaign, now: datetime) -> list[Invite]:
    """Invitations not used yet and not expired, the newest first (for the referee)."""
    return list(
        session.exec(
            select(Invite)
            .where(
                Invite.campaign_id == campaign.id,
                col(Invite.used_at).is_(None),
                Invite.expires_at > now,
            )
            .order_by(col(Invite.created_at).desc())
        )
    )


def unclaimed_characters(*, session: Session, campaign: Campaign) -> list[Character]:
    """Characters the referee can still attach to an invite."""
    return [
        c for c in campaigns.characters(session=session, campaign=campaign) if c.user_id is None
    ]


def _claim_character(*, session: Session, character: Character, user: User) -> None:
    """Like `_claim`: two invites for one character cannot both get it."""
    result = cast(
        "sa.CursorResult[Any]",
        session.execute(
            sa.update(Character)
            .where(col(Character.id) == character.id, col(Character.user_id).is_(None))
            .values(user_id=user.id)
            .execution_options(synchronize_session=False)
        ),
    )
    if result.rowcount != 1:
        raise Conflict(f"{character.name} got a player a moment ago; ask the referee")
    character.user_id = user.id


def _claim(*, session: Session, invite: Invite, user: User, now: datetime) -> None:
    result = cast(
        "sa.CursorResult[Any]",
        session.execute(
            sa.update(Invite)
            .where(col(Invite.id) == invite.id, col(Invite.used_at).is_(None))
            .values(used_at=now, used_by=user.id)
            .execution_options(synchronize_session=False)
        ),
    )
    if result.rowcount != 1:
        raise LinkGone("this invitation was used a moment ago; ask the referee for a new one")
    invite.used_at, invite.used_by = now, user.id


# --- passwords and logins ------------------------------------------------------------


def create_account(
    *, session: Session, email: str, display_name: str, password: str, now: datetime, via: str
) -> User:
    """A new account with a password, for an operator (`pbp user create`, `via="cli"`).

    The same password policy as every other way in; an address that has an account
    already is refused (Conflict), never overwritten.
    """
    check_password_policy(password, email=email)
    if find_user(session=session, email=email) is not None:
        raise Conflict(f"there is already an account for {_clean_email(email)}")
    user = campaigns.create_user(
        session=session, email=email, display_name=display_name or email.split("@")[0]
    )
    user.password_hash = hash_password(password)
    user.created_at = now
    session.add(user)
    session.flush()
    _audit(session=session, now=now, line=lines.AccountCreated({"via": via}), actor=user)
    return user


def check_password_policy(password: str, *, email: str | None = None) -> None:
    """NIST SP 800-63B: length over composition rules; no maximum a passphrase hits."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise UserError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise UserError(f"a password can have at most {MAX_PASSWORD_LENGTH} characters")
    if email and password.strip().lower() == email.strip().lower():
        raise UserError("the password cannot be your email address")


def hash_password(password: str) -> str:
    return generate_password_hash(password, method=PASSWORD_METHOD)


def set_password(*, session: Session, user: User, password: str, now: datetime) -> None:
    """Set a new password; old reset links and other logged-in sessions stop working."""
    check_password_policy(password, email=user.email)
    user.password_hash = hash_password(password)
    _end_sessions(user)
    session.add(user)
    session.flush()
    _audit(session=session, now=now, line=lines.PasswordSet(), actor=user)


def change_password(
    *, session: Session, user: User, current: str, password: str, now: datetime
) -> User:
    """The signed-in person changes their password, giving the current one first (a
    browser left open must not let anyone lock its owner out). Every other session ends,
    as with a reset; the caller logs this one in again."""
    if user.password_hash is None or not check_password_hash(user.password_hash, current):
        _audit(session=session, now=now, line=lines.LoginFailed(), actor=user)
        raise UserError("the current password is not the one you typed: nothing changed")
    set_password(session=session, user=user, password=password, now=now)
    return user


def find_user(*, session: Session, email: str) -> User | None:
    return session.exec(select(User).where(User.email == _clean_email(email))).first()


def authenticate(*, session: Session, email: str, password: str, now: datetime) -> User:
    """The user with this email and password, or LoginFailed (one message for both)."""
    user = find_user(session=session, email=email) if "@" in email else None
    if user is None or user.password_hash is None:
        check_password_hash(_dummy_hash(), password)
        raise LoginFailed("wrong email or password")
    if not check_password_hash(user.password_hash, password):
        _audit(session=session, now=now, line=lines.LoginFailed(), actor=user)
        raise LoginFailed("wrong email or password")
    _audit(session=session, now=now, line=lines.LoggedIn(), actor=user)
    return user


def record_logout(*, session: Session, user: User, now: datetime) -> None:
    """Log out: every session of this account ends, on every device.

    The session lives in a signed cookie, which a copy (a shared computer, a stolen
    backup) would keep using; raising the generation makes every earlier one unknown.
    """
    _end_sessions(user)
    session.add(user)
    session.flush()
    _audit(session=session, now=now, line=lines.LoggedOut(), actor=user)


def session_id(user: User) -> str:
    """What the login cookie stores: the id, the session generation and a fingerprint of
    the password hash (Flask-Login's "alternative tokens"), so a logout or a password
    change ends every session made before it."""
    return f"{user.id}.{user.session_generation or 0}.{_fingerprint(user.password_hash)}"


def user_for_session_id(*, session: Session, value: str) -> User | None:
    user_id, _, rest = value.partition(".")
    generation, _, fingerprint = rest.partition(".")
    if not user_id.isdigit() or not generation.isdigit():
        return None
    user = session.get(User, int(user_id))
    if user is None or int(generation) != (user.session_generation or 0):
        return None
    if fingerprint != _fingerprint(user.password_hash):
        return None
    return user


def _end_sessions(user: User) -> None:
    user.session_generation = (user.session_generation or 0) + 1


# --- password reset ------------------------------------------------------------------


def request_password_reset(
    *,
    session: Session,
    email: str,
    secret_key: str,
    base_url: str,
    now: datetime,
    mail_from: str | None = None,
    sender=None,
) -> IssuedReset | None:
    """Email a reset link if the address has an account; None (and no email) if not.
    With `sender` the mail goes out as the caller commits (see `create_invite`).

    The page says the same in both cases, so it does not reveal who has an account.
    The link is never shown on the page: only the mailbox's owner may see it.
    """
    user = find_user(session=session, email=email) if "@" in email else None
    if user is None:
        return None
    issued = issue_reset_link(user=user, secret_key=secret_key, base_url=base_url, now=now)
    _audit(session=session, now=now, line=lines.PasswordResetRequested(), actor=user)
    if mail_from:
        notifications.queue_password_reset(
            session=session,
            settings=MailSettings(base_url.rstrip("/"), secret_key, mail_from),
            now=now,
            user=user,
            url=issued.url,
        )
        _send_soon(session, sender)
    return issued


def issue_reset_link(*, user: User, secret_key: str, base_url: str, now: datetime) -> IssuedReset:
    """A reset link without email or audit (for `request_password_reset` and the CLI)."""
    expires_at = now + RESET_TTL
    payload = {"u": user.id, "h": _fingerprint(user.password_hash), "e": _stamp(expires_at)}
    token = _reset_serializer(secret_key).dumps(payload)
    url = links.absolute(base_url, links.password_reset(token))
    return IssuedReset(user=user, token=token, url=url, expires_at=expires_at)


def check_reset_token(*, session: Session, token: str, secret_key: str, now: datetime) -> User:
    """The user a reset link is for, or a refusal: not a link, expired, or already used."""
    try:
        payload = _reset_serializer(secret_key).loads(token)
        user_id, fingerprint, expires = int(payload["u"]), str(payload["h"]), int(payload["e"])
    except (BadSignature, KeyError, TypeError, ValueError):
        raise NotFound(
            "this password reset link is not valid; check that you copied all of it, "
            "or ask for a new one"
        ) from None
    user = session.get(User, user_id)
    if user is None:
        raise LinkGone("this account no longer exists")
    if _stamp(now) >= expires:
        raise LinkGone("this password reset link has expired; ask for a new one")
    if fingerprint != _fingerprint(user.password_hash):
        raise LinkGone(
            "this password reset link was already used (the password has changed since); "
            "ask for a new one if you need it"
        )
    return user


def reset_password(
    *, session: Session, token: str, secret_key: str, password: str, now: datetime
) -> User:
    user = check_reset_token(session=session, token=token, secret_key=secret_key, now=now)
    check_password_policy(password, email=user.email)
    user.password_hash = hash_password(password)
    _end_sessions(user)
    # The link came to the address, so following it confirms the address too (an open
    # sign-up whose confirmation mail was lost is not locked out).
    user.awaiting_confirmation = False
    session.add(user)
    session.flush()
    # Whoever needed a reset may have lost more than the password: the API tokens made
    # while someone else could have been in the account stop working too.
    revoked = api_tokens.revoke_all(session=session, user=user, now=now)
    reset = lines.PasswordReset({"tokens_revoked": revoked})
    _audit(session=session, now=now, line=reset, actor=user)
    return user


# --- helpers -------------------------------------------------------------------------


def _require_referee(*, session: Session, campaign: Campaign, user: User) -> None:
    campaigns.require_referee(session=session, campaign=campaign, user=user, doing="invite players")


def _clean_email(email: str) -> str:
    email = email.strip().lower()
    if "@" not in email or len(email) > 320:
        raise UserError(f"{email!r} is not an email address")
    return email


@functools.cache
def _dummy_hash() -> str:
    """Checked against when the email is unknown, so a wrong email costs as much time as
    a wrong password and the response time does not reveal who has an account."""
    return hash_password("not-a-password-" + "x" * 16)


def _fingerprint(password_hash: str | None) -> str:
    return hashlib.sha256((password_hash or "").encode()).hexdigest()[:16]


def _stamp(moment: datetime) -> int:
    return int(moment.timestamp())


def _invite_serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=_INVITE_SALT)


def _reset_serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=_RESET_SALT)


def _audit(
    *,
    session: Session,
    now: datetime,
    line: lines.Line,
    actor: User | None,
    campaign_id: int | None = None,
) -> None:
    audit_log.record(session, line=line, actor=actor, campaign_id=campaign_id, now=now)
    session.flush()


def _send_soon(session: Session, sender) -> None:
    """A person is waiting for this mail: send it right after the commit (the scheduler's
    sweep sends whatever this misses)."""
    if sender is not None:
        sender.send_after_commit(session=session)
