"""Plain data that adapters produce, and the small protocol every dialect implements.

Nothing here touches the database: ``pbp.services.noteworthy.ingest`` turns these frozen
dataclasses into rows. Titles and names are plain text (autoescape them); ``body_html`` is
already sanitized.
Dates are timezone-aware UTC or ``None``.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

#: What feedparser returns (a ``FeedParserDict``); kept loose so adapters stay testable.
Parsed = Any


@functools.lru_cache(maxsize=16_384)
def normalize_identifier(value: str | None) -> str | None:
    """Canonical form of a guid or URL, so ``http``/``https`` flips match the same entry.

    Kept per value: it is pure, and storing one feed asks it dozens of times for the same
    few ids (every entry's ``identity_key`` and ``normalized_url`` are computed on use).

    rss2email-style identity: a blog that moves to https re-publishes every guid with the new
    scheme; treating them as new entries would duplicate the whole blog. Scheme and host are
    case-folded, http becomes https, default ports go; path, query and fragment are kept.
    Non-URL ids (``tag:...``, ``urn:...``) are only stripped of surrounding whitespace.
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return value
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, 80, 443) else f"{host}:{port}"
    return urlunsplit(("https", netloc, parts.path or "/", parts.query, parts.fragment))


def fallback_key(title: str, published: datetime | None, extra: str = "") -> str:
    """Content hash used as identity when an item has neither guid nor link."""
    stamp = published.isoformat() if published else ""
    data = f"{title}\n{stamp}\n{extra}".encode()
    return hashlib.sha256(data).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One public blog entry, ready for ingest.

    Identity for ingest: ``identity_key`` (guid, else link, else hash of title + published).
    ``raw_mood`` is the mood as the player wrote it (``mood_source`` says where it came from:
    ``"field"`` for lj:mood/dw:mood, ``"body"`` for a "Current mood:" line, which has then been
    removed from ``body_html``).
    """

    source_id: str | None
    url: str | None
    title: str
    author: str | None
    published: datetime | None
    updated: datetime | None
    body_html: str
    raw_mood: str | None
    mood_source: str | None
    fallback_key: str
    comment_feed_url: str | None = None
    comment_count: int | None = None
    author_uri: str | None = None
    tags: tuple[str, ...] = ()
    # The Markdown ``body_html`` was rendered from: pbp's own blog only (a feed gives HTML).
    body_source: str | None = None

    @property
    def normalized_source_id(self) -> str | None:
        return normalize_identifier(self.source_id)

    @property
    def normalized_url(self) -> str | None:
        return normalize_identifier(self.url)

    @property
    def identity_key(self) -> str:
        """``guid:…``, ``link:…`` or ``hash:…``: the first identity the item offers."""
        if self.normalized_source_id:
            return "guid:" + self.normalized_source_id
        if self.normalized_url:
            return "link:" + self.normalized_url
        return "hash:" + self.fallback_key


@dataclass(frozen=True, slots=True)
class CommentSource:
    """Where the notes on one entry can be read, and how many there were at last count.

    ``count`` comes from slash:comments / thr:total / lj:reply-count; ``None`` means the feed
    does not say, so the comment feed must always be fetched (see ``comment_feed_due``).
    ``feed_url`` is ``None`` for dialects without per-entry comment feeds (LiveJournal).
    """

    entry_source_id: str | None
    entry_url: str | None
    feed_url: str | None
    count: int | None


def comment_feed_due(source: CommentSource, last_seen_count: int | None) -> bool:
    """Whether a comment feed must be fetched: its count changed or is unknown.

    WordPress and Blogger give a comment count per post; fetching hundreds of unchanged
    comment feeds every poll would be the biggest cost of a game.
    """
    if source.feed_url is None:
        return False
    if source.count is None or last_seen_count is None:
        return True
    return source.count != last_seen_count


@dataclass(frozen=True, slots=True)
class FeedNote:
    """One comment ("note" in Noteworthy) on an entry.

    Ingest finds the parent by ``parent_source_id`` (compare ``normalize_identifier`` forms)
    and, failing that, by ``parent_url`` against entry URLs.
    """

    source_id: str | None
    url: str | None
    parent_source_id: str | None
    parent_url: str | None
    author_name: str | None
    author_uri: str | None
    published: datetime | None
    updated: datetime | None
    body_html: str
    title: str
    fallback_key: str
    # The comment this one answers, when the feed says (a threaded reply): its id as the
    # feed gives the parent's ``source_id``. None for a comment on the entry itself.
    reply_to_source_id: str | None = None

    @property
    def normalized_source_id(self) -> str | None:
        return normalize_identifier(self.source_id)

    @property
    def normalized_reply_to(self) -> str | None:
        return normalize_identifier(self.reply_to_source_id)

    @property
    def normalized_parent_id(self) -> str | None:
        return normalize_identifier(self.parent_source_id)

    @property
    def normalized_parent_url(self) -> str | None:
        return normalize_identifier(self.parent_url)

    @property
    def identity_key(self) -> str:
        if self.normalized_source_id:
            return "guid:" + self.normalized_source_id
        if link := normalize_identifier(self.url):
            return "link:" + link
        return "hash:" + self.fallback_key


@dataclass(frozen=True, slots=True)
class FeedWarning:
    """Something odd but survivable about a feed, shown to the referee (``code`` is stable)."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ParsedFeed:
    """Everything ingest needs from one fetched document.

    A blog's main feed fills ``entries``; a comment feed fills ``notes`` and sets
    ``is_comment_feed``. ``next_page_url`` is Blogger's ``rel="next"`` paging link.
    ``site_comments_url`` is a site-wide comment feed (WordPress ``/comments/feed/``).
    ``ttl`` (RSS ``<ttl>``, minutes) is a lower bound for the polling interval.
    """

    kind: str
    title: str
    site_url: str | None
    entries: tuple[FeedEntry, ...] = ()
    notes: tuple[FeedNote, ...] = ()
    is_comment_feed: bool = False
    next_page_url: str | None = None
    site_comments_url: str | None = None
    ttl_minutes: int | None = None
    # WebSub: the hub that pushes this feed (``rel="hub"``) and the address it is
    # published under there (``rel="self"``, the topic).
    hub_url: str | None = None
    self_url: str | None = None
    skipped_private: int = 0
    warnings: tuple[FeedWarning, ...] = field(default=())

    @property
    def comment_sources(self) -> tuple[CommentSource, ...]:
        """Per-entry comment feeds and counts, for skip-if-unchanged polling."""
        return tuple(
            CommentSource(e.source_id, e.url, e.comment_feed_url, e.comment_count)
            for e in self.entries
            if e.comment_feed_url or e.comment_count is not None
        )


class Adapter(Protocol):
    """A feed dialect. ``parsed`` is feedparser's result for the document.

    ``matches`` is used for automatic detection (the referee can override it by name);
    ``is_comment_feed`` decides whether ``entries`` or ``notes`` is called.
    """

    name: str

    def matches(self, parsed: Parsed) -> bool: ...

    def is_comment_feed(self, parsed: Parsed) -> bool: ...

    def entries(self, parsed: Parsed) -> tuple[list[FeedEntry], int]:
        """Public entries, and how many non-public ones were skipped."""
        ...

    def notes(self, parsed: Parsed) -> list[FeedNote]: ...

    def feed_info(self, parsed: Parsed) -> dict[str, Any]:
        """``title``, ``site_url``, ``next_page_url``, ``site_comments_url``, ``ttl_minutes``,
        ``hub_url``, ``self_url``."""
        ...
