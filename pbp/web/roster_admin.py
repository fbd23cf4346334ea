"""The referee's (or forum GM's) changes to the roster: re-send an invitation, and a page
per character to rename it, edit its aliases, change its feed, drop it out, or hand it to
another player. Each form calls one service (pbp.services.invites / roster); a refused
form comes back with the reason and what was typed, status 422 (pbp.web.refusals); a
refused re-send (a button, nothing typed) goes back to the board with its reason; a
refusal that is not about the form (403, 404) keeps its own page.
"""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for

from pbp.errors import REFUSALS
from pbp.services import invites, roster
from pbp.services.mail import send as mail_send
from pbp.services.noteworthy import blog_settings
from pbp.web.access import login_required, signed_in_account
from pbp.web.referee import TOKEN_PAGE_HEADERS, _campaign, now
from pbp.web.refusals import REFUSED_FORM, shown_with_form

bp = Blueprint("roster_admin", __name__, url_prefix="/c/<slug>/referee")


def _links() -> dict:
    return {
        "secret_key": current_app.secret_key,
        "base_url": current_app.config["PBP_BASE_URL"],
    }


@bp.post("/invites/<int:invite_id>/resend")
@login_required
def resend_invite(slug: str, invite_id: int):
    session, campaign = _campaign(slug)
    board = url_for("referee.board", slug=slug) + "#invites"
    try:
        sent = invites.resend_invite(
            session=session,
            campaign=campaign,
            invite_id=invite_id,
            actor=signed_in_account(),
            mail_from=current_app.config["MAIL_FROM"],
            now=now(),
            sender=mail_send.sender_for_app(current_app),
            **_links(),
        )
    except REFUSALS as exc:  # a button, no form: the reason on the board it was pressed on
        if not shown_with_form(exc):
            raise
        session.rollback()
        flash(f"Not sent: {exc}.", "error")
        return redirect(board, 303)
    session.commit()
    flash(f"The invitation is on its way to {sent.invite.email} again.", "ok")
    return redirect(board)


@bp.get("/characters/<int:character_id>")
@login_required
def character(slug: str, character_id: int):
    session, campaign = _campaign(slug)
    return _page(session, campaign, character_id)


def _page(session, campaign, character_id, *, error=None, typed=None, status=200):
    found = roster.character_in(session=session, campaign=campaign, character_id=character_id)
    page = render_template(
        "referee/character.html",
        campaign=campaign,
        character=found,
        blog=blog_settings.blog_of(session=session, character=found),
        players=[
            p for p in roster.players(session=session, campaign=campaign) if p.id != found.user_id
        ],
        error=error,
        typed=typed or {},
    )
    return page, status


def _refused(session, campaign, character_id: int, form: str, exc: BaseException):
    """The character's page again: the reason next to `form`, its fields as typed (never
    the CSRF token)."""
    typed = {form: {k: v for k, v in request.form.items() if k != "csrf_token"}}
    return _page(
        session,
        campaign,
        character_id,
        error=(form, str(exc)),
        typed=typed,
        status=REFUSED_FORM,
    )


def _act(slug: str, character_id: int, form: str, change, done: str):
    """Run one change; on a refusal show the page again with the reason and the input."""
    session, campaign = _campaign(slug)
    try:
        result = change(session, campaign)
    except REFUSALS as exc:
        if not shown_with_form(exc):
            raise
        session.rollback()
        return _refused(session, campaign, character_id, form, exc)
    session.commit()
    flash(done.format(result=result), "ok")
    return redirect(url_for("roster_admin.character", slug=slug, character_id=character_id))


@bp.post("/characters/<int:character_id>/name")
@login_required
def rename(slug: str, character_id: int):
    return _act(
        slug,
        character_id,
        "name",
        lambda session, campaign: roster.rename_character(
            session=session,
            campaign=campaign,
            character_id=character_id,
            name=request.form.get("name", ""),
            actor=signed_in_account(),
            now=now(),
        ),
        "Renamed: {result.name}.",
    )


@bp.post("/characters/<int:character_id>/aliases")
@login_required
def aliases(slug: str, character_id: int):
    return _act(
        slug,
        character_id,
        "aliases",
        lambda session, campaign: roster.set_aliases(
            session=session,
            campaign=campaign,
            character_id=character_id,
            aliases=request.form.get("aliases", "").split(","),
            actor=signed_in_account(),
            now=now(),
        ),
        "Aliases saved.",
    )


@bp.post("/characters/<int:character_id>/feed")
@login_required
def feed(slug: str, character_id: int):
    return _act(
        slug,
        character_id,
        "feed",
        lambda session, campaign: roster.set_feed_url(
            session=session,
            campaign=campaign,
            character_id=character_id,
            feed_url=request.form.get("feed_url", ""),
            allow_private=current_app.config["PBP_ALLOW_PRIVATE_FEEDS"],
            actor=signed_in_account(),
            now=now(),
        ),
        "Blog changed; the new feed is read on the scheduler's next pass.",
    )


@bp.post("/characters/<int:character_id>/drop")
@login_required
def drop(slug: str, character_id: int):
    return _act(
        slug,
        character_id,
        "drop",
        lambda session, campaign: roster.drop_character(
            session=session,
            campaign=campaign,
            character_id=character_id,
            reason=request.form.get("reason", ""),
            actor=signed_in_account(),
            now=now(),
        ),
        "{result.name} has dropped out: an outsider from now on.",
    )


@bp.post("/characters/<int:character_id>/player")
@login_required
def hand_over(slug: str, character_id: int):
    session, campaign = _campaign(slug)
    raw_member = (request.form.get("member") or "").strip()
    try:
        member_id = int(raw_member) if raw_member else None
    except ValueError:
        member_id = -1  # not a member: the service refuses it in words
    try:
        handed = roster.hand_over_character(
            session=session,
            campaign=campaign,
            character_id=character_id,
            actor=signed_in_account(),
            now=now(),
            mail_from=current_app.config["MAIL_FROM"],
            member_id=member_id,
            email=(request.form.get("email") or "").strip() or None,
            **_links(),
        )
    except REFUSALS as exc:
        if not shown_with_form(exc):
            raise
        session.rollback()
        return _refused(session, campaign, character_id, "player", exc)
    session.commit()
    if handed.invite is None:
        flash(f"{handed.character.name} has a new player.", "ok")
        return redirect(url_for("roster_admin.character", slug=slug, character_id=character_id))
    page = render_template(
        "auth/invite_created.html",
        campaign=campaign,
        issued=handed.invite,
        character=handed.character,
    )
    return page, 200, TOKEN_PAGE_HEADERS
