"""The user's token page: make and revoke personal API tokens (blueprint `tokens`).

A new token's text is shown once, on the answer to the form, and never again: pbp keeps
only its hash. That page is not cached and sends no Referer, like the invite pages.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for

from pbp.models.api import TOKEN_SCOPES
from pbp.request_db import get_session
from pbp.services.accounts import tokens as api_tokens
from pbp.web.access import login_required, signed_in_account
from pbp.web.actions import Act, action, as_typed, refused
from pbp.web.auth import TOKEN_PAGE_HEADERS

bp = Blueprint("tokens", __name__, url_prefix="/account/tokens")


@bp.get("/")
@login_required
def page():
    return _page()


def _page(issued=None):
    tokens = api_tokens.list_tokens(session=get_session(), user=signed_in_account())
    body = render_template(
        "account/tokens.html",
        tokens=tokens,
        issued=issued,
        error=refused("tokens.create"),
        form={
            "name": as_typed("tokens.create", "name"),
            "scope": as_typed("tokens.create", "scope", "read"),
        },
        scopes=TOKEN_SCOPES,
    )
    return body, 200, TOKEN_PAGE_HEADERS


@action(bp, "/", role="user", creates=True, page=page)
def create(act: Act):
    issued = api_tokens.create_token(
        session=act.session,
        user=act.account,
        name=act.text("name"),
        scope=act.form.get("scope", "read"),
        now=act.now,
    )
    # The token's text is shown once, on this answer; a second press lists the tokens.
    act.replay_to(url_for("tokens.page"))
    return _page(issued=issued)


@action(bp, "/<int:token_id>/revoke", role="user", page=page)
def revoke(act: Act, token_id: int):
    token = api_tokens.revoke_token(
        session=act.session, user=act.account, token_id=token_id, now=act.now
    )
    message = f"The token {token.name!r} is revoked: it no longer works."
    return act.done(url_for("tokens.page"), message)
