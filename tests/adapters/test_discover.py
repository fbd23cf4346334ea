"""Feed autodiscovery from a blog's home page."""

from __future__ import annotations

import pytest

from adapters import discover_feeds
from adapters.discover import find_feed_links
from adapters.errors import BlockedURL, HTTPStatusError
from adapters.fetch import Fetcher
from tests.feedserver import FeedServer
from tests.helpers import FEED_FIXTURES as FIXTURES
from tests.helpers import fixture_bytes

HTML = "text/html; charset=UTF-8"


def test_link_alternate_main_feed_before_comments() -> None:
    html = fixture_bytes("home_wordpress.html").decode()
    found = find_feed_links(html, "https://colonelmarsh.example.com/")
    assert [f.url for f in found] == [
        "https://colonelmarsh.example.com/feed/",
        "https://colonelmarsh.example.com/comments/feed/",
    ]
    assert found[0].title == "Colonel Marsh Remembers » Feed"
    assert found[0].type == "rss"


def test_link_types_base_href_and_junk() -> None:
    html = """<html><head><base href="https://cdn.example/blog/">
      <link rel="alternate" type="application/feed+json" href="feed.json" title="JSON">
      <link rel="alternate" type="application/atom+xml" href="atom.xml">
      <link rel="alternate" type="application/atom+xml" href="atom.xml">
      <link rel="alternate" type="text/html" href="/fr/">
      <link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
      <link rel="stylesheet" type="application/rss+xml" href="not-a-feed.xml">
      <LINK REL="Alternate Home" TYPE="application/RSS+XML" HREF="/rss">
    </head></html>"""
    found = find_feed_links(html, "https://blog.example/")
    assert [(f.url, f.type) for f in found] == [
        ("https://cdn.example/blog/atom.xml", "atom"),
        ("https://cdn.example/rss", "rss"),
        ("https://cdn.example/blog/feed.json", "json"),
    ]


def test_discovery_from_a_home_page(feed_server: FeedServer, fetcher: Fetcher) -> None:
    home = feed_server.add_file("/", FIXTURES / "home_wordpress.html", content_type=HTML)
    found = discover_feeds(home, fetcher=fetcher)
    assert found[0].url == feed_server.url("/feed/")
    assert found[0].source == "link"
    assert feed_server.count("/feed/") == 0  # declared links are not fetched


def test_a_feed_url_is_returned_as_is(feed_server: FeedServer, fetcher: Fetcher) -> None:
    url = feed_server.add_file("/index.xml", FIXTURES / "hugo_rss.xml")
    (found,) = discover_feeds(url, fetcher=fetcher)
    assert (found.url, found.source, found.title) == (url, "direct", "The Reverend Quill")


def test_usual_paths_are_guessed(feed_server: FeedServer, fetcher: Fetcher) -> None:
    home = feed_server.add_file("/", FIXTURES / "home_jekyll_nolinks.html", content_type=HTML)
    feed_server.add_file("/feed.xml", FIXTURES / "jekyll_atom.xml")
    (found,) = discover_feeds(home, fetcher=fetcher)
    assert found.url == feed_server.url("/feed.xml")
    assert found.source == "guess"
    for path in ("/feed/", "/atom.xml", "/index.xml", "/rss.xml"):
        assert feed_server.count(path) == 1  # tried in order before feed.xml


def test_guessing_skips_html_answers(feed_server: FeedServer, fetcher: Fetcher) -> None:
    home = feed_server.add_file("/", FIXTURES / "home_jekyll_nolinks.html", content_type=HTML)
    feed_server.add_file("/feed/", FIXTURES / "home_jekyll_nolinks.html", content_type=HTML)
    assert discover_feeds(home, fetcher=fetcher) == []
    assert discover_feeds(home, fetcher=fetcher, guess=False) == []


def test_page_errors_are_reported(feed_server: FeedServer, fetcher: Fetcher) -> None:
    with pytest.raises(HTTPStatusError, match="404"):
        discover_feeds(feed_server.url("/nope"), fetcher=fetcher)


def test_discovery_obeys_ssrf_rules(feed_server: FeedServer, strict_fetcher: Fetcher) -> None:
    home = feed_server.add_file("/", FIXTURES / "home_wordpress.html", content_type=HTML)
    with pytest.raises(BlockedURL):
        discover_feeds(home, fetcher=strict_fetcher)
    assert feed_server.total_requests == 0
