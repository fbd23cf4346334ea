"""The poll pass's fetch path (adapters.fetch_async on an event loop) behind the synchronous
Fetcher's `fetch` and `request`, so the fetch, SSRF and deadline tests run on both paths."""

from __future__ import annotations

import ssl
from datetime import datetime, timedelta

from adapters.fetch import Document, FeedState, Fetcher, FetchResult
from adapters.fetch_async import EventLoop

# The synchronous Fetcher (requests; discovery, the blog form, one blog's poll) and the poll
# pass's AsyncFetcher (aiohttp on an event loop), which must keep the same rules.
FETCH_PATHS = ["requests", "aiohttp"]


class LoopFetcher:
    """An AsyncFetcher on an event loop in a thread of its own (the poll pass's EventLoop);
    anything else is the wrapped Fetcher's (its settings)."""

    def __init__(self, fetcher: Fetcher, tls: ssl.SSLContext | None = None) -> None:
        self.sync = fetcher
        self.runner = EventLoop(fetcher.config, limit=16, tls=tls)

    def __getattr__(self, name: str):
        return getattr(self.sync, name)

    def fetch(
        self, state: FeedState, now: datetime, *, interval: timedelta | None = None
    ) -> FetchResult:
        return self.runner.run(self.runner.client.fetch(state, now, interval=interval))

    def request(self, url: str, headers: dict[str, str] | None = None) -> Document:
        return self.runner.run(self.runner.client.request(url, headers))

    def close(self) -> None:
        self.runner.close()
        self.sync.close()

    def __enter__(self) -> LoopFetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def on_path(path: str, fetcher: Fetcher) -> Fetcher | LoopFetcher:
    """*fetcher* itself ("requests") or the same settings on the event loop ("aiohttp")."""
    return LoopFetcher(fetcher) if path == "aiohttp" else fetcher
