"""Personal API tokens: made and revoked on the user's token page, checked on every API call.

The token's text is shown once, when it is made; pbp keeps only its SHA-256. Tokens are
256 random bits, so a plain hash is enough (a slow password hash protects guessable
secrets, and these are not guessable). A token is scoped "read" (GET only) or "write".
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp.errors import Forbidden, NotFound, UserError
from pbp.models import User
from pbp.models.api import TOKEN_SCOPES, ApiToken

TOKEN_PREFIX = "pbp_"
MAX_TOKENS = 50  # per person: enough for every script, few enough to review on one page
# last_used_at is for people ("used yesterday"), so writing it once a minute is enough
TOUCH_EVERY = timedelta(minutes=1)
TOKEN_PAGE = "/account/tokens"


class InvalidToken(UserError):
    """The Authorization header names no live token (RFC 6750: 401, invalid_token)."""

    status = 401


class InsufficientScope(Forbidden):
    """A read-only token used for a write (RFC 6750: 403, insufficient_scope)."""


@dataclass(frozen=True)
class IssuedToken:
    """A new token: its row, and its text, which exists only in this object."""

    token: ApiToken
    text: str


def hash_token(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def create_token(
    *, session: Session, user: User, name: str, scope: str, now: datetime
) -> IssuedToken:
    name = (name or "").strip()
    if not name:
        raise UserError("give the token a name, e.g. the script that will use it")
    if len(name) > 100:
        raise UserError("a token's name is at most 100 characters")
    if scope not in TOKEN_SCOPES:
        raise UserError("a token is for reading only (read) or for reading and writing (write)")
    live = session.exec(
        select(sa.func.count())
        .select_from(ApiToken)
        .where(ApiToken.user_id == user.id, col(ApiToken.revoked_at).is_(None))
    ).one()
    if live >= MAX_TOKENS:
        raise UserError(f"you have {live} tokens already: revoke one you no longer use")
    text = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user_id=user.id,
        name=name,
        token_hash=hash_token(text),
        prefix=text[:12],
        scope=scope,
        created_at=now,
    )
    session.add(token)
    session.flush()
    return IssuedToken(token, text)


def list_tokens(*, session: Session, user: User) -> list[ApiToken]:
    """The person's tokens, live ones first, newest first."""
    return list(
        session.exec(
            select(ApiToken)
            .where(ApiToken.user_id == user.id)
            .order_by(col(ApiToken.revoked_at).is_not(None), col(ApiToken.id).desc())
        )
    )


def revoke_token(*, session: Session, user: User, token_id: int, now: datetime) -> ApiToken:
    """Revoke one of the person's tokens; revoking it again changes nothing."""
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFound("you have no such token")
    if token.revoked_at is None:
        token.revoked_at = now
        session.add(token)
        session.flush()
    return token


def revoke_all(*, session: Session, user: User, now: datetime) -> int:
    """Revoke every live token of the person (after a password reset); how many."""
    result = cast(
        "sa.CursorResult[Any]",
        session.execute(
            sa.update(ApiToken)
            .where(col(ApiToken.user_id) == user.id, col(ApiToken.revoked_at).is_(None))
            .values(revoked_at=now)
            .execution_options(synchronize_session="fetch")
        ),
    )
    return result.rowcount


def authenticate(*, session: Session, text: str) -> tuple[User, ApiToken]:
    """The user and token behind a bearer token's text, or InvalidToken."""
    found = session.exec(
        select(ApiToken, User)
        .join(User, col(User.id) == ApiToken.user_id)
        .where(ApiToken.token_hash == hash_token(text), col(ApiToken.revoked_at).is_(None))
    ).first()
    if found is None:
        raise InvalidToken(
            f"this token is unknown or revoked: make a new one at {TOKEN_PAGE} and send it "
            "as 'Authorization: Bearer <token>'"
        )
    token, user = found
    return user, token


def needs_touch(token: ApiToken, now: datetime) -> bool:
    return token.last_used_at is None or now - token.last_used_at >= TOUCH_EVERY


def touch(*, session: Session, token: ApiToken, now: datetime) -> None:
    """Record that the token was used (shown on the token page)."""
    session.execute(
        sa.update(ApiToken).where(col(ApiToken.id) == token.id).values(last_used_at=now)
    )
    token.last_used_at = now


def note_use(*, session: Session, token: ApiToken, now: datetime) -> None:
    """Keep "last used" roughly current, in a short transaction of its own: the request's
    own may be a reader, and SQLite refuses a reader that turns writer at once."""
    from pbp.db import writing

    if not needs_touch(token, now):
        return
    session.commit()
    try:
        with writing():
            touch(session=session, token=token, now=now)
            session.commit()
    except sa.exc.OperationalError:  # busy: "last used" is advice, not a record
        session.rollback()


def require_scope(token: ApiToken, scope: str) -> None:
    if scope == "write" and token.scope != "write":
        raise InsufficientScope(
            f"the token {token.name!r} may only read: make a token with the write scope at "
            f"{TOKEN_PAGE} to change anything"
        )
