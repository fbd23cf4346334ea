"""Feeds out: Atom that feedparser reads with no bozo flag, moods, threading, escaping."""

from datetime import UTC, datetime, timedelta

import feedparser
import pytest

from adapters import parse_feed
from pbp.services.noteworthy import hosted_blog, turns
from tests.factories import make_campaign, make_characters

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, name="Feed Test")
    ada, bram, *_ = make_characters(db_session, campaign)
    turns.post_event(
        session=db_session,
        campaign=campaign,
        text="A & B <meet>.",
        actor=None,
        now=NOW - timedelta(hours=1),
    )
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title=f"Title {HOSTILE}",
        body_markdown=f"Body {HOSTILE}",
        mood="Challenging <b>x</b>",
        now=NOW,
    )
    hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=bram,
        body_markdown="Support.",
        now=NOW + timedelta(minutes=5),
    )
    db_session.commit()
    return campaign, ada, entry


def parse(client, url):
    response = client.get(url)
    assert response.status_code == 200
    assert response.content_type.startswith("application/atom+xml")
    parsed = feedparser.parse(response.data)
    assert not parsed.bozo, parsed.get("bozo_exception")
    return parsed, response.data


def test_blog_feed_has_mood_as_line_and_category(client, game):
    campaign, ada, entry = game
    parsed, raw = parse(client, f"/c/{campaign.slug}/{ada.slug}/feed.atom")
    (item,) = parsed.entries
    assert item.tags[0].term == "Challenging x"
    assert "Current mood:" in item.content[0].value
    assert item.id.endswith(f"pbp/entry/{entry.id}")
    assert b"<script" not in raw and b"onerror" not in raw


def test_ids_are_stable_across_requests(client, game):
    campaign, ada, _ = game
    first, _ = parse(client, f"/c/{campaign.slug}/{ada.slug}/feed.atom")
    second, _ = parse(client, f"/c/{campaign.slug}/{ada.slug}/feed.atom")
    assert [e.id for e in first.entries] == [e.id for e in second.entries]


def test_comments_feed_threads_notes_to_their_entry(client, game):
    campaign, ada, entry = game
    _, raw = parse(client, f"/c/{campaign.slug}/{ada.slug}/comments.atom")
    # pbp's own feed reader understands pbp's comment feed (RFC 4685 threading).
    ours = parse_feed(raw, {"content-type": "application/atom+xml"}, None)
    (note,) = ours.notes
    assert ours.is_comment_feed
    assert note.parent_source_id.endswith(f"pbp/entry/{entry.id}")


def test_campaign_feed_has_entries_and_escaped_events(client, game):
    campaign, _, _ = game
    parsed, _ = parse(client, f"/c/{campaign.slug}/feed.atom")
    titles = [e.title for e in parsed.entries]
    assert "Turn 1" in titles and any(t.startswith("Title") for t in titles)
    event = next(e for e in parsed.entries if e.title == "Turn 1")
    assert "A &amp; B &lt;meet&gt;." in event.content[0].value


def test_events_feed_leaves_out_tailored_texts(client, db_session, game):
    campaign, ada, _ = game
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=NOW + timedelta(days=1))
    turns.resolve_turn(
        session=db_session, campaign=campaign, actor=None, now=NOW + timedelta(days=1)
    )
    turns.post_event(
        session=db_session,
        campaign=campaign,
        text="General",
        actor=None,
        now=NOW + timedelta(days=2),
        tailored=[turns.Tailored(ada.id, "replacement", "SECRET for Ada")],
    )
    db_session.commit()
    _, raw = parse(client, f"/c/{campaign.slug}/events.atom")
    assert b"General" in raw and b"SECRET" not in raw


def test_unknown_character_feed_is_404(client, game):
    campaign, _, _ = game
    assert client.get(f"/c/{campaign.slug}/nobody/feed.atom").status_code == 404


@pytest.mark.parametrize("feed", ["feed.atom", "events.atom", "ada/feed.atom", "ada/comments.atom"])
def test_every_link_in_a_feed_answers(client, game, feed):
    """A reader follows the feed's and each item's link to a page here (the events feed
    once linked a page no route answered)."""
    campaign, ada, _ = game
    parsed, _ = parse(client, f"/c/{campaign.slug}/{feed.replace('ada', ada.slug)}")
    hrefs = [parsed.feed.link] + [item.link for item in parsed.entries]
    assert len(hrefs) > 1
    for href in hrefs:
        path = href.removeprefix("http://pbp.test").split("#")[0]
        assert client.get(path).status_code == 200, href
