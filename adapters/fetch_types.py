"""What a feed fetch takes and gives, shared by both HTTP clients (issue #32 item 5).

adapters.fetch (requests: discovery, the blog form, one blog's poll) and adapters.fetch_async
(aiohttp: the poll pass) both import this module and adapters.classify, and neither imports
the other (an import-linter contract in pyproject.toml holds them to it):

- ``FetchConfig``: a fetcher's settings (timeouts, body cap, SSRF policy, per-host limit);
- ``FeedState`` in, ``Document`` (one HTTP answer) and ``FetchResult`` (what a poll means) out;
- ``FeedFetcher``: the one interface a poll uses, whichever client serves it;
- ``Kept``: the slot where a Fetcher keeps its event loop without knowing its type.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Generic, Protocol, TypeVar

from adapters import deadline, schedule
from adapters.errors import FeedError
from adapters.ssrf import AddressPolicy

MiB = 1024 * 1024
DEFAULT_MAX_BYTES = 10 * MiB
ERROR_BODY_BYTES = 64 * 1024
CHUNK = 64 * 1024
ALERT_AFTER_FAILURES = 3
ACCEPT = (
    "application/atom+xml, application/rss+xml, application/feed+json;q=0.9, "
    "application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, text/html;q=0.5, */*;q=0.1"
)


def _version() -> str:
    try:
        return importlib.metadata.version("pbp")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def user_agent(instance_url: str = "") -> str:
    """``pbp/0.1.0 (+https://games.example; play-by-post feed reader)``: who is asking."""
    where = f"+{instance_url}; " if instance_url else ""
    return f"pbp/{_version()} ({where}play-by-post feed reader)"


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """A fetcher's settings, the same for both clients (production: 5 s connect, 15 s read,
    30 s in all, 10 MiB)."""

    policy: AddressPolicy = field(default_factory=AddressPolicy)
    user_agent: str = field(default_factory=user_agent)
    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    total_timeout: float = 30.0
    max_bytes: int = DEFAULT_MAX_BYTES
    max_redirects: int = 5
    interval: timedelta = schedule.DEFAULT_INTERVAL
    max_per_host: int | None = 2

    def budget(self) -> contextlib.AbstractContextManager[None]:
        """Every fetch inside ends within ``total_timeout`` of now, all of them together."""
        return deadline.deadline(self.total_timeout)


class FetchStatus(StrEnum):
    OK = "ok"  # new bytes in ``body``: parse them
    NOT_MODIFIED = "not_modified"  # 304: nothing to parse or write
    UNCHANGED = "unchanged_bytes"  # same hash as last time: nothing to parse
    GONE = "gone"  # 410: mark the blog gone, alert the referee
    FAILED = "failed"  # 404, 5xx, timeout, network, bad redirect: back off and retry
    CHALLENGE = "challenge_page"  # bot protection page instead of the feed
    TOO_LARGE = "too_large"  # body over the cap
    BLOCKED = "blocked_ssrf"  # URL refused by the SSRF rules


FAILURES = frozenset(
    {
        FetchStatus.GONE,
        FetchStatus.FAILED,
        FetchStatus.CHALLENGE,
        FetchStatus.TOO_LARGE,
        FetchStatus.BLOCKED,
    }
)


@dataclass(frozen=True, slots=True)
class FeedState:
    """What ingest stores per feed between polls."""

    url: str
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None
    last_unconditional_at: datetime | None = None
    failure_count: int = 0


@dataclass(frozen=True, slots=True)
class Document:
    """One HTTP answer after redirects, body already read (and capped)."""

    url: str
    final_url: str
    moved_to: str | None
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class FetchResult:
    """Outcome of one poll. Store ``next_state()``; parse ``body`` when ``status`` is OK.

    ``moved_to`` is set whenever the feed permanently redirected (whatever the status): the
    stored URL should become it. ``reason`` is a message for the referee on failures.
    """

    status: FetchStatus
    url: str
    fetched_at: datetime
    next_poll_at: datetime
    failure_count: int
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None
    last_unconditional_at: datetime | None = None
    moved_to: str | None = None
    final_url: str | None = None
    http_status: int | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    retry_after: timedelta | None = None
    reason: str | None = None
    error: FeedError | None = None

    @property
    def failed(self) -> bool:
        return self.status in FAILURES

    @property
    def alert(self) -> bool:
        """Whether the referee should be told (gone, blocked, challenge, too large, or a
        plain failure that has now happened ALERT_AFTER_FAILURES times in a row)."""
        if self.status == FetchStatus.FAILED:
            return self.failure_count >= ALERT_AFTER_FAILURES
        return self.failed

    def next_state(self) -> FeedState:
        return FeedState(
            url=self.moved_to or self.url,
            etag=self.etag,
            last_modified=self.last_modified,
            content_hash=self.content_hash,
            last_unconditional_at=self.last_unconditional_at,
            failure_count=self.failure_count,
        )


class FeedFetcher(Protocol):
    """What polling a feed needs of a fetcher: adapters.fetch.Fetcher, or in a poll pass's
    worker threads adapters.fetch_async.BlockingFetcher (its requests on the pass's loop)."""

    @property
    def max_per_host(self) -> int | None: ...

    def budget(self) -> contextlib.AbstractContextManager[None]: ...

    def fetch(
        self, state: FeedState, now: datetime, *, interval: timedelta | None = None
    ) -> FetchResult: ...


class Closeable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=Closeable)


class Kept(Generic[C]):
    """One resource made on first use, replaced when it no longer fits, and closed with its
    owner: a Fetcher keeps its poll passes' event loop here (adapters.fetch_async.
    event_loop), so its connections stay open from one pass to the next."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: C | None = None

    def get(self, fits: Callable[[C], bool], make: Callable[[], C]) -> C:
        with self._lock:
            current = self._held
            if current is not None and fits(current):
                return current
            made = self._held = make()
        if current is not None:
            current.close()
        return made

    def close(self) -> None:
        with self._lock:
            held, self._held = self._held, None
        if held is not None:
            held.close()
