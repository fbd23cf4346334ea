"""Each dialect against fixture files written from the real formats."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters import ADAPTERS, parse_feed
from adapters.base import CommentSource, ParsedFeed, comment_feed_due, normalize_identifier
from adapters.errors import UnknownDialect
from tests.helpers import FEED_FIXTURES as FIXTURES
from tests.helpers import fixture_bytes


def parse(name: str, kind: str | None = None, **headers: str) -> ParsedFeed:
    headers.setdefault("content-type", "application/xml")
    return parse_feed(fixture_bytes(name), headers, kind)


@pytest.mark.parametrize(
    ("name", "kind", "comment_feed"),
    [
        ("livejournal_rss.xml", "livejournal", False),
        ("livejournal_community_rss.xml", "livejournal", False),
        ("dreamwidth_rss.xml", "dreamwidth", False),
        ("dreamwidth_atom.xml", "dreamwidth", False),
        ("dreamwidth_comments_rss.xml", "dreamwidth", True),
        ("wordpress_rss.xml", "wordpress", False),
        ("wordpress_post_comments.xml", "wordpress", True),
        ("wordpress_site_comments.xml", "wordpress", True),
        ("blogger_posts.xml", "blogger", False),
        ("blogger_posts_page2.xml", "blogger", False),
        ("blogger_comments.xml", "blogger", True),
        ("jekyll_atom.xml", "generic", False),
        ("hugo_rss.xml", "generic", False),
        ("mastodon_rss.xml", "mastodon", False),
        ("jsonfeed.json", "generic", False),
    ],
)
def test_dialect_is_detected(name: str, kind: str, comment_feed: bool) -> None:
    feed = parse(name)
    assert feed.kind == kind
    assert feed.is_comment_feed is comment_feed
    assert feed.warnings == ()
    items = feed.notes if comment_feed else feed.entries
    assert items, "every fixture has at least one public item"
    for item in items:
        assert item.published is not None and item.published.tzinfo is UTC


def test_every_registered_dialect_has_a_fixture_detected_as_it() -> None:
    """A new adapter must come with a fixture (this test fails until it does)."""
    detected = {parse(p.name).kind for p in FIXTURES.glob("*") if p.suffix in (".xml", ".json")}
    assert set(ADAPTERS) <= detected | {"generic"}


# --- LiveJournal ---------------------------------------------------------------------------


def test_livejournal_entries_moods_counts_and_security() -> None:
    feed = parse("livejournal_rss.xml")
    assert [e.title for e in feed.entries] == [
        "The Duke's carriage",
        "A quiet evening at the Abbey",
    ]
    assert feed.skipped_private == 2  # "usemask" (friends only) and "private"
    first = feed.entries[0]
    assert (first.raw_mood, first.mood_source) == ("challenging", "field")
    assert first.comment_count == 4
    assert first.comment_feed_url is None  # LiveJournal has no comment feeds
    assert first.author == "Baroness Wick"
    assert first.published == datetime(2024, 4, 2, 9, 12, 44, tzinfo=UTC)
    assert first.source_id == first.url == "https://baroness-wick.livejournal.com/2345.html"
    assert '<a href="https://lord-ashby.livejournal.com/"' in first.body_html
    assert "Let him explain <i>that</i>." in first.body_html
    assert "lord_ashby" in feed.entries[1].body_html  # the ljuser span survives as a link
    assert feed.site_url == "https://baroness-wick.livejournal.com/"


def test_livejournal_never_outputs_locked_entries() -> None:
    feed = parse("livejournal_rss.xml")
    everything = " ".join(e.title + e.body_html for e in feed.entries)
    assert "friends list" not in everything
    assert "Nobody reads this" not in everything


def test_livejournal_community_poster_is_the_author() -> None:
    entry = parse("livejournal_community_rss.xml").entries[0]
    assert entry.author == "lord_ashby"
    assert entry.author_uri == "https://lord-ashby.livejournal.com/"
    assert entry.comment_count == 12


def test_comment_sources_carry_the_counts() -> None:
    feed = parse("livejournal_rss.xml")
    assert feed.comment_sources[0] == CommentSource(
        "https://baroness-wick.livejournal.com/2345.html",
        "https://baroness-wick.livejournal.com/2345.html",
        None,
        4,
    )


# --- Dreamwidth ----------------------------------------------------------------------------


def test_dreamwidth_rss_uses_the_lj_namespace() -> None:
    feed = parse("dreamwidth_rss.xml")
    assert feed.skipped_private == 1
    (entry,) = feed.entries
    assert (entry.raw_mood, entry.comment_count) == ("indignant", 2)


def test_dreamwidth_atom_dw_namespace_is_the_site_root() -> None:
    feed = parse("dreamwidth_atom.xml")
    assert feed.skipped_private == 1  # dw:security "access"
    answer, arrival = feed.entries
    assert (answer.raw_mood, answer.mood_source, answer.comment_count) == ("indignant", "field", 2)
    assert answer.source_id == "tag:dreamwidth.org,2009-05-01:1234567:4242"
    assert answer.url == "https://lord-ashby.dreamwidth.org/4242.html"
    assert answer.updated == datetime(2024, 4, 2, 21, 55, 12, tzinfo=UTC)
    assert "style=" not in answer.body_html
    # no dw:mood on this one: the "Current mood:" line in the body is used and removed
    assert (arrival.raw_mood, arrival.mood_source) == ("hopeful", "body")
    assert arrival.body_html == "The roads were dreadful."


def test_dreamwidth_namespace_found_by_uri_not_by_prefix() -> None:
    body = fixture_bytes("dreamwidth_atom.xml").replace(b"xmlns:dw=", b"xmlns:dwx=")
    body = body.replace(b"<dw:", b"<dwx:").replace(b"</dw:", b"</dwx:")
    feed = parse_feed(body, {})
    assert feed.kind == "dreamwidth"
    assert feed.entries[0].raw_mood == "indignant"
    assert feed.skipped_private == 1


def test_dreamwidth_comment_thread_urls_map_back_to_the_entry() -> None:
    notes = parse("dreamwidth_comments_rss.xml").notes
    assert [n.author_name for n in notes] == ["colonel_marsh", "miss_pell"]
    assert notes[0].author_uri == "https://colonel-marsh.dreamwidth.org/"
    entry = parse("dreamwidth_rss.xml").entries[0]
    for note in notes:
        assert note.parent_url == "https://lord-ashby.dreamwidth.org/4242.html"
        assert note.normalized_parent_url == entry.normalized_url
    assert notes[0].source_id == "https://lord-ashby.dreamwidth.org/4242.html?thread=98765#cmt98765"
    assert notes[1].body_html == "<i>Oppose.</i> His lordship was with me."


# --- WordPress -----------------------------------------------------------------------------


def test_wordpress_entries_take_mood_from_body_and_list_comment_feeds() -> None:
    feed = parse("wordpress_rss.xml")
    carriage, campaigns = feed.entries
    assert (carriage.raw_mood, carriage.mood_source) == ("Challenging", "body")
    assert "Current mood" not in carriage.body_html
    assert carriage.body_html.startswith("<p>I have seen enough of Lord Ashby’s evasions.")
    assert carriage.title == "On the matter of the Duke’s carriage"
    assert carriage.author == "Colonel Marsh"
    assert carriage.source_id == "https://colonelmarsh.example.com/?p=57"
    assert carriage.comment_feed_url == (
        "https://colonelmarsh.example.com/2024/04/03/on-the-matter-of-the-dukes-carriage/feed/"
    )
    assert (carriage.comment_count, campaigns.comment_count) == (2, 0)
    assert campaigns.raw_mood == "nostalgic"
    assert feed.site_comments_url == "https://colonelmarsh.example.com/comments/feed/"


def test_slash_comments_lets_ingest_skip_unchanged_comment_feeds() -> None:
    carriage, campaigns = parse("wordpress_rss.xml").comment_sources
    assert comment_feed_due(carriage, last_seen_count=None)
    assert comment_feed_due(carriage, last_seen_count=1)
    assert not comment_feed_due(carriage, last_seen_count=2)
    assert not comment_feed_due(campaigns, last_seen_count=0)
    unknown = CommentSource("g", "u", "https://x.example/feed/", None)
    assert comment_feed_due(unknown, last_seen_count=5)


def test_wordpress_post_comment_feed_notes() -> None:
    feed = parse("wordpress_post_comments.xml")
    pell, wick = feed.notes
    carriage = parse("wordpress_rss.xml").entries[0]
    assert pell.author_name == "Miss Pell"
    assert pell.author_uri is None
    assert pell.title == "By: Miss Pell"
    assert pell.body_html == "<p>I oppose. The Colonel was asleep by nine.</p>"
    assert pell.published == datetime(2024, 4, 3, 12, 41, 9, tzinfo=UTC)
    assert pell.parent_source_id == carriage.source_id
    assert pell.parent_url == carriage.url
    assert wick.source_id == "https://colonelmarsh.example.com/?p=57#comment-11"


def test_wordpress_site_comment_feed_maps_notes_to_posts_across_http_https() -> None:
    pell, ashby = parse("wordpress_site_comments.xml").notes
    carriage, campaigns = parse("wordpress_rss.xml").entries
    assert pell.parent_source_id == carriage.source_id
    assert ashby.parent_source_id == "http://colonelmarsh.example.com/?p=51"  # as published
    assert ashby.normalized_parent_id == campaigns.normalized_source_id
    assert ashby.author_name == "Lord Ashby"


# --- Blogger -------------------------------------------------------------------------------


def test_blogger_posts_replies_links_counts_and_paging() -> None:
    feed = parse("blogger_posts.xml")
    window, french = feed.entries
    assert feed.next_page_url == (
        "https://www.blogger.com/feeds/4471820183762295181/posts/default?start-index=3&max-results=2"
    )
    assert window.comment_feed_url == (
        "https://misspell.blogspot.com/feeds/7385122361046230921/comments/default"
    )
    assert (window.comment_count, french.comment_count) == (2, 0)
    assert (window.raw_mood, french.raw_mood) == ("challenging", "weary")
    assert french.body_html == "The children refuse the subjunctive."
    assert window.url == "https://misspell.blogspot.com/2024/04/what-i-saw-from-nursery-window.html"
    assert window.published == datetime(2024, 4, 3, 13, 10, tzinfo=UTC)  # -07:00 → UTC


def test_blogger_last_page_has_no_next_link() -> None:
    feed = parse("blogger_posts_page2.xml")
    assert feed.next_page_url is None
    assert feed.entries[0].raw_mood == "hopeful"
    assert feed.entries[0].body_html == "<div>I have taken up a post at the Abbey.</div>"


def test_blogger_comments_point_at_their_post_with_thr_in_reply_to() -> None:
    notes = parse("blogger_comments.xml").notes
    post = parse("blogger_posts.xml").entries[0]
    assert [n.author_name for n in notes] == ["Baroness Wick", "Colonel Marsh"]
    assert notes[0].author_uri == "https://baroness-wick.livejournal.com/"
    for note in notes:
        assert note.parent_source_id == post.source_id
        assert note.parent_url == post.url
    assert notes[0].body_html == "Support. The crest was <i>unmistakable</i>."


# --- Generic, Mastodon, JSON Feed ----------------------------------------------------------


def test_jekyll_atom() -> None:
    slander, arrival = parse("jekyll_atom.xml").entries
    assert (slander.raw_mood, arrival.raw_mood) == ("furious", "curious")
    assert arrival.title == "Arrival & first impressions"
    assert slander.author == "Duchess of Fenn"
    # relative link resolved against the entry's xml:base
    assert 'href="https://duchess-of-fenn.github.io/about/"' in slander.body_html
    assert slander.tags == ("turn-3",)


def test_hugo_rss_summary_only() -> None:
    sermon, bells = parse("hugo_rss.xml").entries
    assert (sermon.raw_mood, bells.raw_mood) == ("Serene", "joyful")
    assert sermon.body_html == (
        "<p>Gossip is a sin, and the Abbey is full of sinners this week.</p>"
    )
    assert bells.body_html == "The new bells arrived from Whitechapel."
    assert sermon.author is None


def test_mastodon_items_without_titles() -> None:
    challenge, quay = parse("mastodon_rss.xml").entries
    assert challenge.raw_mood == "challenging"
    assert challenge.title.startswith("I challenge the Reverend Quill.")
    assert challenge.title.endswith("…") and len(challenge.title) <= 81
    assert quay.title == "Landed at the Abbey quay. The weather is foul."
    assert quay.raw_mood is None
    assert "grey quay" not in quay.body_html  # image alt text is not the post
    assert challenge.author == "Captain Drake"
    assert challenge.author_uri == "https://mastodon.example/@captaindrake"


def test_json_feed() -> None:
    feed = parse("jsonfeed.json", **{"content-type": "application/feed+json"})
    confession, vespers = feed.entries
    assert feed.title == "Sister Agatha's Notes"
    assert confession.raw_mood == "penitent"
    assert "<script" not in confession.body_html
    assert confession.published == datetime(2024, 4, 3, 19, 0, tzinfo=UTC)
    assert confession.author == "Sister Agatha"
    assert (vespers.raw_mood, vespers.title, vespers.source_id) == (
        "tired",
        "Vespers ran long.",
        "2",
    )


# --- override, identity --------------------------------------------------------------------


def test_referee_override_replaces_detection() -> None:
    feed = parse("livejournal_rss.xml", kind="generic")
    assert feed.kind == "generic"
    assert feed.entries[0].raw_mood is None  # generic knows nothing of lj:mood
    assert feed.skipped_private == 0
    assert parse("wordpress_site_comments.xml", kind="wordpress").is_comment_feed


def test_unknown_override_names_the_choices() -> None:
    with pytest.raises(UnknownDialect, match="livejournal"):
        parse("livejournal_rss.xml", kind="myspace")


def test_entry_identity_falls_back_from_guid_to_link_to_hash() -> None:
    rss = b"""<rss version="2.0"><channel><title>t</title>
      <item><guid isPermaLink="false">urn:x:1</guid><link>https://b.example/1</link><title>A</title></item>
      <item><link>http://B.example/2</link><title>B</title></item>
      <item><title>C</title><pubDate>Wed, 03 Apr 2024 09:00:00 GMT</pubDate></item>
      <item><title>C</title><pubDate>Wed, 03 Apr 2024 10:00:00 GMT</pubDate></item>
    </channel></rss>"""
    a, b, c1, c2 = parse_feed(rss, {}).entries
    assert a.identity_key == "guid:urn:x:1"
    assert b.source_id is None and b.identity_key == "link:https://b.example/2"
    assert c1.identity_key.startswith("hash:")
    assert c1.identity_key != c2.identity_key
    assert c1.fallback_key == parse_feed(rss, {}).entries[2].fallback_key  # stable


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("http://Example.COM/?p=51", "https://example.com/?p=51"),
        ("https://example.com:443/a#comment-9", "https://example.com/a#comment-9"),
        ("http://example.com:8080/a", "https://example.com:8080/a"),
        ("http://example.com", "https://example.com/"),
        ("  tag:blogger.com,1999:blog-1.post-2 ", "tag:blogger.com,1999:blog-1.post-2"),
        ("", None),
        (None, None),
    ],
)
def test_normalize_identifier(raw: str | None, normalized: str | None) -> None:
    assert normalize_identifier(raw) == normalized
