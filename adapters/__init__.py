"""Feed adapters: fetch players' blog feeds and turn them into plain data (no database).

``ADAPTERS`` maps the dialect names the referee can choose per blog to adapter objects. Its
order is the detection order: most specific first, ``generic`` last.

The ingest service uses: ``Fetcher.fetch(FeedState, now) -> FetchResult``, then
``parse_feed(result.body, result.headers, kind) -> ParsedFeed``; ``check_url`` when a player
submits an address, and ``discover_feeds`` when it is a home page rather than a feed.
"""

from __future__ import annotations

from adapters.base import (
    Adapter,
    CommentSource,
    FeedEntry,
    FeedNote,
    FeedWarning,
    ParsedFeed,
    comment_feed_due,
    normalize_identifier,
)
from adapters.blogger import BloggerAdapter
from adapters.discover import DiscoveredFeed, discover_feeds
from adapters.dreamwidth import DreamwidthAdapter
from adapters.errors import (
    BlockedURL,
    ChallengePage,
    FeedError,
    FeedTimeout,
    FeedTooComplex,
    FeedTooLarge,
    FeedUnreachable,
    HTTPStatusError,
    NotAFeed,
    RedirectError,
    UnknownDialect,
)
from adapters.fetch import Fetcher
from adapters.fetch_types import FeedFetcher, FeedState, FetchResult, FetchStatus
from adapters.generic import GenericAdapter
from adapters.livejournal import LiveJournalAdapter
from adapters.mastodon import MastodonAdapter
from adapters.parse import parse_feed
from adapters.ssrf import check_url
from adapters.wordpress import WordPressAdapter

ADAPTERS: dict[str, Adapter] = {
    "dreamwidth": DreamwidthAdapter(),
    "livejournal": LiveJournalAdapter(),
    "wordpress": WordPressAdapter(),
    "blogger": BloggerAdapter(),
    "mastodon": MastodonAdapter(),
    "generic": GenericAdapter(),
}

__all__ = [
    "ADAPTERS",
    "Adapter",
    "BlockedURL",
    "ChallengePage",
    "CommentSource",
    "DiscoveredFeed",
    "FeedEntry",
    "FeedError",
    "FeedFetcher",
    "FeedNote",
    "FeedState",
    "FeedTimeout",
    "FeedTooComplex",
    "FeedTooLarge",
    "FeedUnreachable",
    "FeedWarning",
    "FetchResult",
    "FetchStatus",
    "Fetcher",
    "HTTPStatusError",
    "NotAFeed",
    "ParsedFeed",
    "RedirectError",
    "UnknownDialect",
    "check_url",
    "comment_feed_due",
    "discover_feeds",
    "normalize_identifier",
    "parse_feed",
]
