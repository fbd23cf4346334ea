"""A player's own settings in a campaign: where their character blogs (the twin of the
page /c/<slug>/me/blog)."""

from __future__ import annotations

from typing import Any, cast

from flask import current_app

from pbp import rate_limits
from pbp.api import schemas as s
from pbp.api.registry import Call, operation
from pbp.services import campaigns
from pbp.services.noteworthy import blog_settings, polling


@operation(
    "PUT",
    "/campaigns/<slug>/me/blog",
    tag="characters",
    access="player",
    body=s.BlogChoiceIn,
    response=s.BlogOut,
)
def choose_blog(call: Call, slug: str) -> s.BlogOut:
    """Choose where your character blogs: on pbp ("builtin"), or on your own blog
    ("external", with `url`: its home page or its feed). pbp finds the feed and reads it
    once now, so a typo or a page without a feed is refused with the reason. The search
    ends within PBP_DISCOVERY_SECONDS (10 s); a second one of the same account while one
    runs is refused at once (409)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    body = call.body
    config = current_app.config
    # As the page: one discovery at a time per account, within its own deadline.
    with (
        rate_limits.one_discovery(call.user),
        polling.discovery_fetcher_from_config(config) as fetcher,
    ):
        _, row = blog_settings.choose_blog(
            session=call.session,
            actor=call.user,
            campaign=campaign,
            kind=body.kind,
            url=body.url,
            character_id=body.character_id,
            fetcher=fetcher,
            allow_private=bool(config.get("PBP_ALLOW_PRIVATE_FEEDS")),
            now=call.now,
        )
    kind = cast(Any, row.kind)  # the CHECK constraint's values
    return s.BlogOut(kind=kind, feed_url=row.feed_url, home_url=row.home_url)
