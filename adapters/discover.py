"""Find a blog's feed when a player gives its home page.

Order: the address itself if it already is a feed; then the page's
``<link rel="alternate" type="application/rss+xml|atom+xml|feed+json">`` links (main feeds
before comment feeds, RSS/Atom before JSON); then the usual paths (WordPress ``feed/``, Jekyll
``feed.xml``/``atom.xml``, Hugo ``index.xml``, ``rss.xml``), first hit wins. Every request goes
through the Fetcher, so the SSRF rules and size cap apply to each guess too.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin

from adapters.errors import FeedError, HTTPStatusError, NotAFeed
from adapters.fetch import Fetcher
from adapters.parse import parse_feed

FEED_TYPES = {
    "application/rss+xml": "rss",
    "application/atom+xml": "atom",
    "application/rdf+xml": "rss",
    "application/feed+json": "json",
    "application/json": "json",
}
USUAL_PATHS = ("feed/", "atom.xml", "index.xml", "rss.xml", "feed.xml")
HTML_SCAN_LIMIT = 1024 * 1024


@dataclass(frozen=True, slots=True)
class DiscoveredFeed:
    """A candidate feed. ``source``: "direct" (the URL was a feed), "link" or "guess"."""

    url: str
    title: str
    type: str
    source: str


class _LinkFinder(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.found: list[DiscoveredFeed] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): (value or "").strip() for name, value in attrs}
        if tag == "base" and values.get("href"):
            self.base_url = urljoin(self.base_url, values["href"])
            return
        if tag not in ("link", "a"):
            return
        rels = values.get("rel", "").lower().split()
        kind = FEED_TYPES.get(values.get("type", "").lower().split(";")[0].strip())
        if "alternate" in rels and kind and values.get("href"):
            url = urljoin(self.base_url, values["href"])
            if url.startswith(("http://", "https://")) and all(f.url != url for f in self.found):
                self.found.append(DiscoveredFeed(url, values.get("title", ""), kind, "link"))


def _rank(feed: DiscoveredFeed) -> tuple[int, int]:
    text = (feed.title + " " + feed.url).lower()
    return ("comment" in text, feed.type == "json")


def find_feed_links(html: str, base_url: str) -> list[DiscoveredFeed]:
    """Feed links declared by an HTML page, best first (pure; no network)."""
    finder = _LinkFinder(base_url)
    finder.feed(html[:HTML_SCAN_LIMIT])
    finder.close()
    return sorted(finder.found, key=_rank)


def _as_feed(fetcher: Fetcher, url: str, source: str) -> DiscoveredFeed | None:
    """Fetch *url* and return it as a DiscoveredFeed if it parses as one."""
    try:
        doc = fetcher.request(url)
    except FeedError:
        return None
    if doc.status != 200:
        return None
    try:
        parsed = parse_feed(doc.body, doc.headers)
    except NotAFeed:
        return None
    kind = "json" if "json" in doc.headers.get("content-type", "") else "feed"
    return DiscoveredFeed(doc.final_url, parsed.title, kind, source)


def discover_feeds(url: str, *, fetcher: Fetcher, guess: bool = True) -> list[DiscoveredFeed]:
    """Candidate feeds for *url*, best first; empty if none found.

    Raises FeedError (BlockedURL, FeedTimeout, HTTPStatusError, ...) when the page itself
    cannot be fetched, so the player learns why.
    """
    doc = fetcher.request(url)
    if doc.status != 200:
        raise HTTPStatusError(
            f"The address answered HTTP {doc.status}; check it in a browser.",
            status=doc.status,
            url=url,
        )
    try:
        parsed = parse_feed(doc.body, doc.headers)
    except NotAFeed:
        pass
    else:
        return [DiscoveredFeed(doc.final_url, parsed.title, "feed", "direct")]
    charset = "utf-8"
    content_type = doc.headers.get("content-type", "")
    if "charset=" in content_type:
        charset = content_type.split("charset=", 1)[1].split(";")[0].strip().strip('"') or charset
    try:
        html = doc.body.decode(charset, errors="replace")
    except LookupError:
        html = doc.body.decode("utf-8", errors="replace")
    found = find_feed_links(html, doc.final_url)
    if found or not guess:
        return found
    bases = [doc.final_url, urljoin(doc.final_url, "/")]
    tried: set[str] = set()
    for base in bases:
        for path in USUAL_PATHS:
            candidate = urljoin(base, path)
            if candidate in tried:
                continue
            tried.add(candidate)
            feed = _as_feed(fetcher, candidate, "guess")
            if feed:
                return [feed]
    return []
