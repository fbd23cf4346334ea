"""Bad feeds: malformed XML, HTML pages, wrong charsets, hostile content."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters import parse_feed
from adapters.errors import NotAFeed
from tests.feedserver import FeedServer
from tests.helpers import fixture_bytes


def test_malformed_xml_is_recovered_with_a_warning() -> None:
    feed = parse_feed(fixture_bytes("malformed_rss.xml"), {"content-type": "application/rss+xml"})
    codes = [w.code for w in feed.warnings]
    assert "malformed_xml" in codes
    assert "undefined_entities" in codes  # the bare &nbsp;
    assert feed.title == "Lady Brisk & Co"
    gossip, second = feed.entries
    assert gossip.title == "Gossip & scandal"
    assert gossip.raw_mood == "giddy"
    assert gossip.body_html == "The&nbsp;Duke was seen <b>twice</b>."
    assert second.url == "https://brisk.example/second.html"
    assert all("needs fixing" in w.message for w in feed.warnings if w.code == "malformed_xml")


def test_truncated_feed_keeps_complete_items() -> None:
    body = fixture_bytes("wordpress_rss.xml")
    truncated = body[: body.index(b"<title>Old campaigns")]
    feed = parse_feed(truncated, {})
    assert feed.entries[0].raw_mood == "Challenging"
    assert [w.code for w in feed.warnings] == ["malformed_xml"]


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (fixture_bytes("home_wordpress.html"), "text/html; charset=UTF-8", "web page"),
        (fixture_bytes("cloudflare_challenge.html"), "text/html", "web page"),
        (b"<html><body>oops</body></html>", "application/rss+xml", "web page"),
        (b"Hello, I am plain text.", "text/plain", "does not serve"),
        (b"", "application/rss+xml", "empty"),
        (b"   \n ", "application/rss+xml", "empty"),
        (b'{"not": "a feed"}', "application/json", "not a JSON Feed"),
        (b"{broken json", "application/json", "broken JSON"),
    ],
)
def test_non_feeds_are_refused_with_a_useful_message(
    body: bytes, content_type: str, message: str
) -> None:
    with pytest.raises(NotAFeed, match=message):
        parse_feed(body, {"content-type": content_type})


def test_wrong_declared_charset_is_read_anyway_with_a_warning() -> None:
    """The file says utf-8 but is windows-1252 (a classic hand-made feed)."""
    feed = parse_feed(fixture_bytes("wrong_charset_rss.xml"), {"content-type": "application/xml"})
    assert [w.code for w in feed.warnings] == ["charset"]
    assert feed.title == "Café de la Paix"
    (entry,) = feed.entries
    assert entry.title == "Crème brûlée à minuit"
    assert entry.raw_mood == "ravie…"
    assert entry.body_html == "Le duc était là."


def test_header_charset_wrong_but_document_right() -> None:
    body = "<?xml version='1.0' encoding='utf-8'?><rss version='2.0'><channel><title>Café</title>"
    body += "<item><title>Crème</title><guid>x</guid></item></channel></rss>"
    feed = parse_feed(body.encode(), {"content-type": "application/rss+xml; charset=iso-8859-1"})
    assert feed.entries[0].title == "Crème"


def test_feed_served_as_html_is_parsed_with_a_warning() -> None:
    feed = parse_feed(fixture_bytes("hugo_rss.xml"), {"content-type": "text/html"})
    assert [w.code for w in feed.warnings] == ["content_type"]
    assert len(feed.entries) == 2


class TestHostileContent:
    feed = parse_feed(fixture_bytes("xss_atom.xml"), {"content-type": "application/atom+xml"})

    def everything(self) -> str:
        parts = [self.feed.title, self.feed.site_url or ""]
        for e in self.feed.entries[:1]:  # the second entry is plain text, shown escaped
            parts += [e.title, e.body_html, e.url or "", e.author or "", e.author_uri or ""]
            parts += [e.raw_mood or ""]
        return "\n".join(parts).lower()

    @pytest.mark.parametrize(
        "forbidden",
        [
            "<script",
            "<iframe",
            "<style",
            "<object",
            "onclick",
            "onerror",
            "onmouseover",
            "javascript:",
            "data:",
            "alert(",
            "document.cookie",
        ],
    )
    def test_nothing_active_survives(self, forbidden: str) -> None:
        assert forbidden not in self.everything()

    def test_harmless_content_survives(self) -> None:
        poison, plain = self.feed.entries
        assert self.feed.title == "The Poisoner"
        assert poison.title == "Tea time"
        assert poison.author == "Poisoner"
        assert poison.raw_mood == "murderous"
        assert "<p>Drink up.</p>" in poison.body_html
        assert 'href="https://safe.example/"' in poison.body_html
        assert poison.url is None  # a javascript: link is no link
        assert poison.author_uri is None

    def test_text_plain_content_is_escaped_not_trusted(self) -> None:
        plain = self.feed.entries[1]
        assert plain.raw_mood == "sly"
        assert (
            plain.body_html == "<p>&lt;script&gt;alert('text')&lt;/script&gt; is how it's done.</p>"
        )


def test_parse_feed_never_treats_bytes_as_a_url_or_path(
    feed_server: FeedServer, tmp_path: Path
) -> None:
    """feedparser.parse(str) would fetch a URL or open a file; we only hand it bytes."""
    secret = tmp_path / "feed.xml"
    secret.write_bytes(fixture_bytes("hugo_rss.xml"))
    url = feed_server.add_file("/feed.xml", secret)
    for body in (url.encode(), str(secret).encode()):
        with pytest.raises(NotAFeed):
            parse_feed(body, {})
    assert feed_server.total_requests == 0
