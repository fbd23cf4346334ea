"""Who is calling the API: the bearer token's user, and nobody else.

The API never reads the login cookie: its POSTs are exempt from CSRF checks, so a cookie
would let any web page a player visits write through their session. Every API request
starts as a visitor, and stays one to Flask-Login: the token's user travels in `Call.user`
to the services, whose checks (pbp.services.campaigns.require_referee and the rest) are
the ones the pages' declared actions call too.
"""

from __future__ import annotations

from flask import current_app, g, request

from pbp.db import Session
from pbp.models import User, utcnow
from pbp.models.api import ApiToken
from pbp.services.accounts import tokens as api_tokens


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
    api_tokens.note_use(session=session, token=token, now=utcnow())
    return user, token


def require_token_row(token: ApiToken | None) -> ApiToken:
    """The token of a write: every operation that writes requires one (not "public")."""
    if token is None:
        raise api_tokens.InvalidToken(
            f"this operation needs a token: make one at {api_tokens.TOKEN_PAGE} and send it "
            "as 'Authorization: Bearer <token>'"
        )
    return token


def require_token(user: User | None) -> User:
    if user is None:
        raise api_tokens.InvalidToken(
            f"this operation needs a token: make one at {api_tokens.TOKEN_PAGE} and send it "
            "as 'Authorization: Bearer <token>'"
        )
    return user
