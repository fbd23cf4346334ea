"""A player's own settings in a campaign (blueprint `player`): where their character blogs,
and who they are when they comment on external blogs.

    GET/POST /c/<slug>/me/blog        built-in blog, or the address of the player's own blog
    POST     /c/<slug>/me/commenter   their profile address(es) as a commenter

Only the logged-in player's own character: the form carries the character's id, and a
form for another character (say, one loaded before logging in as someone else) is
refused with 403 rather than changing the wrong blog. Any other refusal comes back on its
form with status 422 and what was typed (pbp.web.refusals).
"""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for

from pbp.db import get_session
from pbp.errors import REFUSALS
from pbp.inputs.player import BlogChoiceIn, CommenterIdentityIn
from pbp.models import utcnow
from pbp.services import campaigns
from pbp.services.noteworthy import blog_settings, commenters, feed_problems, play, polling
from pbp.web.access import current_account, login_required, visiting
from pbp.web.forms import parsed
from pbp.web.refusals import REFUSED_FORM, shown_with_form

bp = Blueprint("player", __name__, url_prefix="/c/<slug>/me")


def now():
    return current_app.config.get("PBP_CLOCK", utcnow)()


@bp.route("/blog", methods=["GET", "POST"])
@login_required
def blog(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    visiting(campaign)
    character = play.player_character(session=session, campaign=campaign, user=current_account())
    row = blog_settings.blog_of(session=session, character=character)
    form = {"kind": row.kind, "url": row.home_url or row.feed_url or ""}
    error, status = None, 200
    if request.method == "POST":
        # As typed, to show again if refused; read with the address's spaces trimmed.
        form = {"kind": request.form.get("kind", ""), "url": request.form.get("url", "")}
        try:
            choice = parsed(
                BlogChoiceIn,
                {
                    **form,
                    "url": form["url"].strip(),
                    "character_id": request.form.get("character_id", ""),
                },
            )
            config = current_app.config
            with polling.fetcher_from_config(config) as fetcher:
                _, row = blog_settings.choose_blog(
                    session=session,
                    actor=current_account(),
                    campaign=campaign,
                    kind=choice.kind,
                    url=choice.url,
                    character_id=choice.character_id,
                    fetcher=fetcher,
                    allow_private=bool(config.get("PBP_ALLOW_PRIVATE_FEEDS")),
                    now=now(),
                )
        except REFUSALS as exc:  # shown with the form, the address as typed (422)
            if not shown_with_form(exc):
                raise
            session.rollback()
            error, status = str(exc), REFUSED_FORM
        else:
            session.commit()
            flash(
                f"{character.name} now blogs here, on pbp."
                if row.kind == "builtin"
                else f"Found the feed {row.feed_url}: pbp reads it within a few minutes.",
                "ok",
            )
            return redirect(url_for("player.blog", slug=slug))
    return _page(session, campaign, character, row, form, error=error), status


def _page(session, campaign, character, row, form, *, error=None, uris=None, uris_error=None):
    declared = commenters.declared(session=session, character=character)
    return render_template(
        "player/blog.html",
        campaign=campaign,
        character=character,
        blog=row,
        problem=feed_problems.feed_problem(row),
        form=form,
        error=error,
        declared=declared,
        uris="\n".join(declared) if uris is None else uris,
        uris_error=uris_error,
    )


@bp.post("/commenter")
@login_required
def commenter(slug: str):
    """Issue #16: a note on an external blog counts only through a verified identity;
    the player says which profile addresses are theirs."""
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    visiting(campaign)
    typed = request.form.get("uris", "")
    try:
        identity = parsed(
            CommenterIdentityIn,
            {
                "uris": [line for line in typed.splitlines() if line.strip()],
                "character_id": request.form.get("character_id", ""),
            },
        )
        character, mapped = commenters.declare_mine(
            session=session,
            actor=current_account(),
            campaign=campaign,
            uris=identity.uris,
            character_id=identity.character_id,
            now=now(),
        )
    except REFUSALS as exc:  # shown with the form, the addresses as typed (422)
        if not shown_with_form(exc):
            raise
        session.rollback()
        character = play.player_character(
            session=session, campaign=campaign, user=current_account()
        )
        row = blog_settings.blog_of(session=session, character=character)
        form = {"kind": row.kind, "url": row.home_url or row.feed_url or ""}
        page = _page(session, campaign, character, row, form, uris=typed, uris_error=str(exc))
        return page, REFUSED_FORM
    session.commit()
    flash(f"Saved; {mapped} waiting note(s) now count for {character.name}.", "ok")
    return redirect(url_for("player.blog", slug=slug))
