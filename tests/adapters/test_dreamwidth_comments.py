"""Dreamwidth's latest-comments feed: where it is, and how its thread URLs map to entries."""

from __future__ import annotations

import pytest

from adapters import parse_feed
from adapters.base import ParsedFeed
from adapters.dreamwidth import latest_comments_url
from adapters.fetch import FeedState, Fetcher, FetchStatus
from tests.feedserver import FeedServer
from tests.helpers import FEED_NOW as NOW
from tests.helpers import fixture_bytes

JOURNAL = "https://baroness-wick.dreamwidth.org"


def parse(name: str) -> ParsedFeed:
    return parse_feed(fixture_bytes(name), {"content-type": "application/rss+xml"})


@pytest.mark.parametrize(
    ("journal", "expected"),
    [
        (f"{JOURNAL}/", f"{JOURNAL}/data/rss?comments=1"),
        (JOURNAL, f"{JOURNAL}/data/rss?comments=1"),
        (f"{JOURNAL}/?style=light#top", f"{JOURNAL}/data/rss?comments=1"),
        (
            "https://users.dreamwidth.org/wick/",
            "https://users.dreamwidth.org/wick/data/rss?comments=1",
        ),
        (None, None),
        ("", None),
        ("javascript:alert(1)", None),
    ],
)
def test_latest_comments_url_sits_beside_the_journal_feed(journal, expected) -> None:
    assert latest_comments_url(journal) == expected


def test_journal_feed_points_at_its_latest_comments_feed() -> None:
    feed = parse("dreamwidth_journal_rss.xml")
    assert (feed.kind, feed.is_comment_feed, feed.skipped_private) == ("dreamwidth", False, 1)
    assert feed.site_comments_url == f"{JOURNAL}/data/rss?comments=1"
    # No per-entry comment feed: only the reply counts, which say when to read the journal's.
    assert [(s.entry_url, s.feed_url, s.count) for s in feed.comment_sources] == [
        (f"{JOURNAL}/1234.html", None, 2),
        (f"{JOURNAL}/1100.html", None, 1),
    ]
    assert feed.entries[0].raw_mood == "Challenging"


def test_derived_address_is_the_one_the_comment_feed_calls_itself() -> None:
    """The older fixture pair: the derived URL is the comment feed's own rel="self"."""
    assert parse("dreamwidth_rss.xml").site_comments_url == (
        "https://lord-ashby.dreamwidth.org/data/rss?comments=1"
    )
    assert b"href='https://lord-ashby.dreamwidth.org/data/rss?comments=1'" in fixture_bytes(
        "dreamwidth_comments_rss.xml"
    )


def test_atom_journal_feed_derives_it_too() -> None:
    feed = parse("dreamwidth_atom.xml")
    assert feed.site_comments_url == "https://lord-ashby.dreamwidth.org/data/rss?comments=1"


def test_a_comment_feed_names_no_further_comment_feed() -> None:
    assert parse("dreamwidth_latest_comments_rss.xml").site_comments_url is None


def test_thread_urls_of_either_anchor_style_map_back_to_their_entries() -> None:
    comments = parse("dreamwidth_latest_comments_rss.xml")
    assert comments.kind == "dreamwidth" and comments.is_comment_feed
    entries = {e.normalized_url: e for e in parse("dreamwidth_journal_rss.xml").entries}
    found = [(n.author_name, n.parent_url) for n in comments.notes]
    assert found == [
        ("lord_ashby", f"{JOURNAL}/1234.html"),  # ?thread=5934#t5934
        ("colonel_marsh", f"{JOURNAL}/1234.html"),  # ?thread=5678#t5678
        ("duchess_of_fenn", f"{JOURNAL}/1100.html"),  # ?thread=4410#cmt4410
    ]
    assert all(n.normalized_parent_url in entries for n in comments.notes)
    # each note keeps its own thread address as its identity
    assert comments.notes[1].source_id == f"{JOURNAL}/1234.html?thread=5678#t5678"
    assert comments.notes[0].author_uri == "https://lord-ashby.dreamwidth.org/"


def test_fetch_journal_then_its_derived_comment_feed(
    feed_server: FeedServer, fetcher: Fetcher
) -> None:
    base = feed_server.base_url.encode()
    for path, name in (
        ("/data/rss", "dreamwidth_journal_rss.xml"),
        ("/data/rss?comments=1", "dreamwidth_latest_comments_rss.xml"),
    ):
        body = fixture_bytes(name).replace(JOURNAL.encode(), base)
        feed_server.add(path, body=body, content_type="application/rss+xml; charset=utf-8")
    journal = fetcher.fetch(FeedState(feed_server.url("/data/rss")), NOW)
    feed = parse_feed(journal.body, journal.headers)
    assert feed.site_comments_url == feed_server.url("/data/rss?comments=1")
    comments = fetcher.fetch(FeedState(feed.site_comments_url), NOW)
    assert comments.status is FetchStatus.OK
    notes = parse_feed(comments.body, comments.headers).notes
    assert {n.normalized_parent_url for n in notes} == {e.normalized_url for e in feed.entries}
    assert feed_server.count("/data/rss?comments=1") == 1
