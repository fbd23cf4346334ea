"""A player's own settings in a campaign (blueprint `player`): where their character blogs,
and who they are when they comment on external blogs.

    GET/POST /c/<slug>/me/blog        built-in blog, or the address of the player's own blog
    POST     /c/<slug>/me/commenter   their profile address(es) as a commenter

Finding the feed of an address holds the request while pbp fetches it: at most one at a
time per account, within PBP_DISCOVERY_SECONDS, and the form is rate limited like the
other content forms (issue #28 item 5).

Only the logged-in player's own character: the form carries the character's id, and a
form for another character (say, one loaded before logging in as someone else) is
refused with 403 rather than changing the wrong blog. Both forms are declared with
`pbp.web.actions.action`: any other refusal comes back on the page with status 422, the
refused form as it was typed and the reason beside it.
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template, url_for

from pbp import rate_limits
from pbp.inputs.player import BlogChoiceIn, CommenterIdentityIn
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.noteworthy import blog_settings, commenters, feed_problems, play, polling
from pbp.web.access import current_account, login_required, visiting
from pbp.web.actions import Act, action, as_typed, refused
from pbp.web.forms import parsed

bp = Blueprint("player", __name__, url_prefix="/c/<slug>/me")


@login_required
def _blog_page(slug: str):
    """Both forms with their saved values; the refused one as it was typed."""
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    visiting(campaign)
    character = play.player_character(session=session, campaign=campaign, user=current_account())
    row = blog_settings.blog_of(session=session, character=character)
    declared = commenters.declared(session=session, character=character)
    form = {
        "kind": as_typed("player.blog", "kind", row.kind),
        "url": as_typed("player.blog", "url", row.home_url or row.feed_url or ""),
    }
    return render_template(
        "player/blog.html",
        campaign=campaign,
        character=character,
        blog=row,
        problem=feed_problems.feed_problem(row),
        form=form,
        error=refused("player.blog"),
        declared=declared,
        uris=as_typed("player.commenter", "uris", "\n".join(declared)),
        uris_error=refused("player.commenter"),
    )


@action(bp, "/blog", role="player", page=_blog_page, get=True)
def blog(act: Act, slug: str):
    choice = parsed(
        BlogChoiceIn,
        {
            "kind": act.text("kind"),
            "url": act.text("url").strip(),  # read with the address's spaces trimmed
            "character_id": act.text("character_id"),
        },
    )
    config = current_app.config
    # Issue #28 item 5: one discovery at a time per account, within its own deadline (the
    # form is also rate limited: pbp.rate_limits.CONTENT_ENDPOINTS).
    with (
        rate_limits.one_discovery(act.account),
        polling.discovery_fetcher_from_config(config) as fetcher,
    ):
        character, row = blog_settings.choose_blog(
            session=act.session,
            actor=act.account,
            campaign=act.campaign,
            kind=choice.kind,
            url=choice.url,
            character_id=choice.character_id,
            fetcher=fetcher,
            allow_private=bool(config.get("PBP_ALLOW_PRIVATE_FEEDS")),
            now=act.now,
        )
    message = (
        f"{character.name} now blogs here, on pbp."
        if row.kind == "builtin"
        else f"Found the feed {row.feed_url}: pbp reads it within a few minutes."
    )
    return act.done(url_for("player.blog", slug=slug), message)


@action(bp, "/commenter", role="player", page=_blog_page)
def commenter(act: Act, slug: str):
    """Issue #16: a note on an external blog counts only through a verified identity;
    the player says which profile addresses are theirs."""
    identity = parsed(
        CommenterIdentityIn,
        {
            "uris": [line for line in act.text("uris").splitlines() if line.strip()],
            "character_id": act.text("character_id"),
        },
    )
    character, mapped = commenters.declare_mine(
        session=act.session,
        actor=act.account,
        campaign=act.campaign,
        uris=identity.uris,
        character_id=identity.character_id,
        now=act.now,
    )
    message = f"Saved; {mapped} waiting note(s) now count for {character.name}."
    return act.done(url_for("player.blog", slug=slug), message)
