"""Who is calling the API: the bearer token's user, and nobody else.

The API never reads the login cookie: its POSTs are exempt from CSRF checks, so a cookie
would let any web page a player visits write through their session. Every API request
starts as a visitor; a valid `Authorization: Bearer` token then makes its user the
request's `current_user`, so pbp.web.access (require_referee and the rest) applies the
very checks the pages apply.
"""

from __future__ import annotations

import sqlalchemy as sa
from flask import current_app, g, request
from sqlmodel import Session

from pbp.db import writing
from pbp.models import User, utcnow
from pbp.models.api import ApiToken
from pbp.services.accounts import tokens as api_tokens
from pbp.web.access import LoginUser


def start_as_visitor() -> None:
    """Flask-Login reads `g._login_user` before it looks at the session cookie."""
    # Flask-Login sets app.login_manager at run time; Flask's types do not know it.
    g._login_user = current_app.login_manager.anonymous_user()  # type: ignore[attr-defined]
    g.pop("pbp_memberships", None)


def identify(session: Session) -> tuple[User | None, ApiToken | None]:
    """The caller, from the Authorization header; (None, None) without one."""
    header = request.headers.get("Authorization")
    if header is None:
        return None, None
    scheme, _, text = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not text.strip():
        raise api_tokens.InvalidToken(
            "send the token as 'Authorization: Bearer <token>' (make one at "
            f"{api_tokens.TOKEN_PAGE})"
        )
    user, token = api_tokens.authenticate(session=session, text=text.strip())
    g._login_user = LoginUser(user)
    g.pop("pbp_memberships", None)
    _note_use(session, token)
    return user, token


def _note_use(session: Session, token: ApiToken) -> None:
    """Keep "last used" roughly current, in a short transaction of its own: the request's
    own may be a reader, and SQLite refuses a reader that turns writer at once."""
    now = utcnow()
    if not api_tokens.needs_touch(token, now):
        return
    session.commit()
    try:
        with writing():
            api_tokens.touch(session=session, token=token, now=now)
            session.commit()
    except sa.exc.OperationalError:  # busy: "last used" is advice, not a record
        session.rollback()


def require_token(user: User | None) -> User:
    if user is None:
        raise api_tokens.InvalidToken(
            f"this operation needs a token: make one at {api_tokens.TOKEN_PAGE} and send it "
            "as 'Authorization: Bearer <token>'"
        )
    return user
