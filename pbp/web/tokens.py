"""The user's token page: make and revoke personal API tokens (blueprint `tokens`).

A new token's text is shown once, on the answer to the form, and never again: pbp keeps
only its hash. That page is not cached and sends no Referer, like the invite pages.
"""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for

from pbp.db import get_session
from pbp.errors import UserError
from pbp.models import utcnow
from pbp.models.api import TOKEN_SCOPES
from pbp.services.accounts import tokens as api_tokens
from pbp.web.access import current_account, login_required, signed_in_account
from pbp.web.auth import TOKEN_PAGE_HEADERS

bp = Blueprint("tokens", __name__, url_prefix="/account/tokens")


@bp.get("/")
@login_required
def page():
    return _page()


def _page(issued=None, error: str | None = None, form=None, status: int = 200):
    tokens = api_tokens.list_tokens(session=get_session(), user=signed_in_account())
    body = render_template(
        "account/tokens.html",
        tokens=tokens,
        issued=issued,
        error=error,
        form=form or {"name": "", "scope": "read"},
        scopes=TOKEN_SCOPES,
    )
    return body, status, TOKEN_PAGE_HEADERS


@bp.post("/")
@login_required
def create():
    session = get_session()
    form = {"name": request.form.get("name", ""), "scope": request.form.get("scope", "read")}
    try:
        issued = api_tokens.create_token(
            session=session,
            user=current_account(),
            name=form["name"],
            scope=form["scope"],
            now=utcnow(),
        )
    except UserError as exc:
        session.rollback()
        return _page(error=str(exc), form=form, status=exc.status)
    session.commit()
    return _page(issued=issued)


@bp.post("/<int:token_id>/revoke")
@login_required
def revoke(token_id: int):
    session = get_session()
    token = api_tokens.revoke_token(
        session=session, user=signed_in_account(), token_id=token_id, now=utcnow()
    )
    session.commit()
    flash(f"The token {token.name!r} is revoked: it no longer works.", "ok")
    return redirect(url_for("tokens.page"))
