"""Atom feeds out: each blog, each blog's notes, the campaign, the referee's events."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from flask import Blueprint, Response, current_app, render_template

from pbp import links
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.noteworthy import outgoing_feeds
from pbp.services.noteworthy.outgoing_feeds import FeedItem

bp = Blueprint("feeds", __name__)
ATOM = "application/atom+xml; charset=utf-8"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _tag(kind: str, item_id: int | str) -> str:
    """Stable ids (RFC 4151 tag URIs): they survive a change of page URLs."""
    host = urlsplit(current_app.config["PBP_BASE_URL"]).hostname or "localhost"
    return f"tag:{host},2026:pbp/{kind}/{item_id}"


def _atom(title: str, self_path: str, alternate_path: str, items: list[FeedItem], feed_id: str):
    base = current_app.config["PBP_BASE_URL"]
    body = render_template(
        "feeds/atom.xml",
        title=title,
        feed_id=feed_id,
        base=base,
        self_url=base + self_path,
        alternate_url=base + alternate_path,
        items=items,
        tag=_tag,
        updated=max((i.updated for i in items), default=EPOCH).isoformat(),
    )
    return Response(body, mimetype=None, content_type=ATOM)


@bp.get("/c/<slug>/feed.atom")
def campaign_feed(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    items = outgoing_feeds.campaign_items(session=session, campaign=campaign)
    return _atom(
        campaign.name,
        links.campaign_feed(slug),
        links.campaign(slug),
        items,
        _tag("campaign", campaign.id),
    )


@bp.get("/c/<slug>/events.atom")
def events_feed(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    items = outgoing_feeds.event_items(session=session, campaign=campaign)
    return _atom(
        f"{campaign.name}: events",
        links.events_feed(slug),
        links.turns(slug),
        items,
        _tag("events", campaign.id),
    )


@bp.get("/c/<slug>/<character>/feed.atom")
def blog_feed(slug: str, character: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    who = campaigns.character_by_slug(session=session, campaign=campaign, slug=character)
    items = outgoing_feeds.blog_entries(session=session, campaign=campaign, character=who)
    return _atom(
        who.name,
        links.blog_feed(slug, character),
        links.character(slug, character),
        items,
        _tag("blog", who.id),
    )


@bp.get("/c/<slug>/<character>/comments.atom")
def notes_feed(slug: str, character: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    who = campaigns.character_by_slug(session=session, campaign=campaign, slug=character)
    items = outgoing_feeds.blog_notes(session=session, campaign=campaign, character=who)
    return _atom(
        f"Notes on {who.name}'s blog",
        links.notes_feed(slug, character),
        links.character(slug, character),
        items,
        _tag("notes", who.id),
    )
