"""Shared extraction from feedparser results; every dialect is a small subclass of FeedAdapter.

feedparser flattens namespaced elements to ``prefix_name`` keys (``lj:mood`` → ``lj_mood``),
using the prefix the document declared for namespaces it does not know. We look the prefix up
by namespace URI, so a feed that declares ``xmlns:foo="http://www.livejournal.org/rss/lj/1.0/"``
still works. Values are read with ``dict.get`` because FeedParserDict's ``updated`` fallback
emits a DeprecationWarning (and pytest runs with warnings as errors).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, cast
from urllib.parse import urlsplit

from adapters.base import FeedEntry, FeedNote, Parsed, fallback_key
from adapters.mood import extract_mood
from adapters.sanitize import clean_html, clean_text, text_to_html

THREAD_NS = "http://purl.org/syndication/thread/1.0"
HTML_TYPES = ("text/html", "application/xhtml+xml", "html", "xhtml")
UNTITLED_LENGTH = 80


def get(mapping: Any, key: str, default: Any = None) -> Any:
    """``dict.get`` that tolerates non-dicts and skips FeedParserDict's key remapping."""
    if isinstance(mapping, dict):
        return dict.get(mapping, key, default)
    return default


def to_utc(value: time.struct_time | None) -> datetime | None:
    """feedparser's UTC struct_time → aware datetime (None for missing or absurd dates)."""
    if not value:
        return None
    try:
        return datetime(*value[:6], tzinfo=UTC)
    except (TypeError, ValueError):
        return None


def to_int(value: Any) -> int | None:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def safe_url(value: object) -> str | None:
    """*value* if it is an absolute http(s) URL, else None.

    Stored links end up in ``href`` attributes; a feed must not be able to plant
    ``javascript:`` or ``data:`` there.
    """
    if not isinstance(value, str):
        return None
    value = value.strip()
    if not value or any(ord(c) < 32 or c.isspace() for c in value):
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return value


def host_of(url: str | None) -> str:
    try:
        return (urlsplit(url or "").hostname or "").lower()
    except ValueError:
        return ""


def namespace_prefix(parsed: Parsed, test: Callable[[str], bool]) -> str | None:
    """The (lower-cased) prefix feedparser used for the first namespace URI passing *test*."""
    for prefix, uri in (get(parsed, "namespaces") or {}).items():
        if prefix and isinstance(uri, str) and test(uri):
            return cast(str, prefix.lower())  # feedparser's namespace prefixes are text
    return None


def ns_get(item: Any, prefixes: Iterable[str | None], local: str) -> Any:
    """Value of ``prefix_local`` for the first prefix present on *item*."""
    for prefix in prefixes:
        if prefix:
            value = get(item, f"{prefix}_{local}")
            if value not in (None, ""):
                return value
    return None


def links(item: Any, rel: str, type_contains: str | None = None) -> list[str]:
    found = []
    for link in get(item, "links") or ():
        if get(link, "rel") != rel or not get(link, "href"):
            continue
        if type_contains and type_contains not in (get(link, "type") or ""):
            continue
        found.append(get(link, "href"))
    return found


def first(values: Iterable[Any]) -> Any:
    return next(iter(values), None)


def generator_name(parsed: Parsed) -> str:
    feed = get(parsed, "feed") or {}
    detail = get(feed, "generator_detail") or {}
    return " ".join(
        str(v) for v in (get(feed, "generator"), get(detail, "name"), get(detail, "href")) if v
    )


def body_source(item: Any) -> str:
    """The fullest body the item offers, as HTML (not yet sanitized).

    Prefer HTML content (content:encoded, Atom content), then an HTML summary (RSS
    description), then text content, escaped. Plain text is escaped rather than trusted:
    feedparser does not sanitize text/plain, and it maps things like media:description to a
    text/plain content block, which must not win over a Mastodon post's HTML description.
    """
    contents = [c for c in get(item, "content") or () if get(c, "value")]
    for c in contents:
        if (get(c, "type") or "").lower() in HTML_TYPES:
            return cast(str, get(c, "value"))  # feedparser's content values are text
    summary = get(item, "summary")
    detail = get(item, "summary_detail") or {}
    # Without its own detail, feedparser's summary is a copy of the first content block.
    default_type = get(contents[0], "type") if contents else "text/html"
    if summary and (get(detail, "type") or default_type or "").lower() in HTML_TYPES:
        return cast(str, summary)
    if contents:
        return text_to_html(get(contents[0], "value"))
    return text_to_html(summary) if summary else ""


def untitled(body_html: str) -> str:
    """A title for items without one (Mastodon): the start of the text, cut at a word."""
    text = clean_text(body_html)
    if len(text) <= UNTITLED_LENGTH:
        return text
    cut = text[:UNTITLED_LENGTH].rsplit(" ", 1)[0] or text[:UNTITLED_LENGTH]
    return cut.rstrip(" ,.;:") + "…"


class FeedAdapter:
    """Generic RSS 2.0 / Atom / JSON Feed, and the base for every dialect.

    Knows the cross-platform extensions: wfw:commentRss + slash:comments (RSS) and RFC 4685
    (Atom ``link rel="replies"``, ``thr:total``, ``thr:in-reply-to``).
    """

    name = "generic"

    # --- detection -------------------------------------------------------------------------
    def matches(self, parsed: Parsed) -> bool:
        return True

    def is_comment_feed(self, parsed: Parsed) -> bool:
        thr = self.thread_prefixes(parsed)
        return any(ns_get(item, thr, "in-reply-to") for item in get(parsed, "entries") or ())

    # --- feed level ------------------------------------------------------------------------
    def feed_info(self, parsed: Parsed) -> dict[str, Any]:
        feed = get(parsed, "feed") or {}
        return {
            "title": clean_text(get(feed, "title")),
            "site_url": self.site_url(parsed),
            "next_page_url": safe_url(first(links(feed, "next"))),
            "site_comments_url": None,
            "ttl_minutes": to_int(get(feed, "ttl")),
            "hub_url": safe_url(first(links(feed, "hub"))),
            "self_url": safe_url(first(links(feed, "self"))),
        }

    def site_url(self, parsed: Parsed) -> str | None:
        feed = get(parsed, "feed") or {}
        return safe_url(first(links(feed, "alternate", "html")) or get(feed, "link"))

    # --- entries ---------------------------------------------------------------------------
    def entries(self, parsed: Parsed) -> tuple[list[FeedEntry], int]:
        result: list[FeedEntry] = []
        skipped = 0
        for item in get(parsed, "entries") or ():
            if not self.is_public(item, parsed):
                skipped += 1
                continue
            result.append(self.make_entry(item, parsed))
        return result, skipped

    def make_entry(self, item: Any, parsed: Parsed) -> FeedEntry:
        body = body_source(item)
        field_mood = clean_text(self.field_mood(item, parsed)) or None
        mood: str | None
        mood_source: str | None
        if field_mood:
            mood, mood_source = field_mood, "field"
        else:
            mood, body = extract_mood(body)
            mood_source = "body" if mood else None
        body_html = clean_html(body)
        title = clean_text(get(item, "title")) or untitled(body_html)
        published, updated = self.dates(item)
        author, author_uri = self.author(item, parsed)
        tags = tuple(
            t for t in (clean_text(get(tag, "term")) for tag in get(item, "tags") or ()) if t
        )
        return FeedEntry(
            source_id=self.source_id(item),
            url=self.link(item),
            title=title,
            author=author,
            published=published,
            updated=updated,
            body_html=body_html,
            raw_mood=mood,
            mood_source=mood_source,
            fallback_key=fallback_key(title, published, body_html if not title else ""),
            comment_feed_url=self.comment_feed_url(item, parsed),
            comment_count=self.comment_count(item, parsed),
            author_uri=author_uri,
            tags=tags,
        )

    def is_public(self, item: Any, parsed: Parsed) -> bool:
        return True

    def field_mood(self, item: Any, parsed: Parsed) -> str | None:
        return None

    def source_id(self, item: Any) -> str | None:
        value = get(item, "id")
        return value.strip() if isinstance(value, str) and value.strip() else None

    def link(self, item: Any) -> str | None:
        return safe_url(first(links(item, "alternate", "html")) or get(item, "link"))

    def dates(self, item: Any) -> tuple[datetime | None, datetime | None]:
        """(published, updated); published falls back to updated, as Atom only requires the
        latter and the turn an entry belongs to needs some timestamp."""
        updated = to_utc(get(item, "updated_parsed"))
        published = to_utc(get(item, "published_parsed")) or updated
        return published, updated

    def author(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        detail = get(item, "author_detail") or {}
        name = clean_text(get(detail, "name") or get(item, "author")) or None
        uri = safe_url(get(detail, "href"))
        if name is None:
            feed = get(parsed, "feed") or {}
            feed_detail = get(feed, "author_detail") or {}
            name = clean_text(get(feed_detail, "name")) or None
            uri = uri or safe_url(get(feed_detail, "href"))
        return name, uri

    def thread_prefixes(self, parsed: Parsed) -> tuple[str | None, ...]:
        return (namespace_prefix(parsed, lambda uri: uri.rstrip("/") == THREAD_NS), "thr")

    def comment_feed_url(self, item: Any, parsed: Parsed) -> str | None:
        wfw = safe_url(get(item, "wfw_commentrss"))
        if wfw:
            return wfw
        replies = first(links(item, "replies", "atom")) or first(links(item, "replies", "rss"))
        return safe_url(replies)

    def comment_count(self, item: Any, parsed: Parsed) -> int | None:
        count = to_int(get(item, "slash_comments"))
        if count is None:
            count = to_int(ns_get(item, self.thread_prefixes(parsed), "total"))
        return count

    # --- notes -----------------------------------------------------------------------------
    def notes(self, parsed: Parsed) -> list[FeedNote]:
        return [self.make_note(item, parsed) for item in get(parsed, "entries") or ()]

    def make_note(self, item: Any, parsed: Parsed) -> FeedNote:
        body_html = clean_html(body_source(item))
        title = clean_text(get(item, "title"))
        published, updated = self.dates(item)
        author, author_uri = self.note_author(item, parsed)
        parent_id, parent_url = self.note_parent(item, parsed)
        return FeedNote(
            source_id=self.source_id(item),
            url=self.link(item),
            parent_source_id=parent_id,
            parent_url=parent_url,
            author_name=author,
            author_uri=author_uri,
            published=published,
            updated=updated,
            body_html=body_html,
            title=title,
            fallback_key=fallback_key(title, published, body_html),
            reply_to_source_id=self.note_reply_to(item, parsed, parent_id),
        )

    def note_reply_to(self, item: Any, parsed: Parsed, parent_id: str | None) -> str | None:
        """The comment this one answers, if the feed says. RFC 4685 lets a comment's
        ``thr:in-reply-to`` name another comment (WordPress's Atom comment feed does); ingest
        tells a comment's id from an entry's, so here it is only passed on."""
        return None

    def note_author(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        detail = get(item, "author_detail") or {}
        name = clean_text(get(detail, "name") or get(item, "author")) or None
        return name, safe_url(get(detail, "href"))

    def note_parent(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        """RFC 4685: ``thr:in-reply-to ref`` is the parent's id, ``href`` its page."""
        reply = ns_get(item, self.thread_prefixes(parsed), "in-reply-to")
        if isinstance(reply, dict):
            ref = get(reply, "ref")
            return (ref.strip() or None) if isinstance(ref, str) else None, safe_url(
                get(reply, "href")
            )
        return None, self.site_url(parsed)
