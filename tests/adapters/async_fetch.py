"""The poll pass's fetch path (adapters.fetch_async on an event loop) behind the synchronous
Fetcher's `fetch` and `request`, so the fetch, SSRF and deadline tests run on both paths."""

from __future__ import annotations

import asyncio
import ssl
import threading
from datetime import datetime, timedelta

from adapters.fetch import Document, FeedState, Fetcher, FetchResult
from adapters.fetch_async import AsyncFetcher

# The synchronous Fetcher (requests; discovery, the blog form, one blog's poll) and the poll
# pass's AsyncFetcher (aiohttp on an event loop), which must keep the same rules.
FETCH_PATHS = ["requests", "aiohttp"]


class LoopFetcher:
    """An AsyncFetcher on an event loop in a thread of its own; anything else is the
    wrapped Fetcher's (its settings)."""

    def __init__(self, fetcher: Fetcher, tls: ssl.SSLContext | None = None) -> None:
        self.sync = fetcher
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = AsyncFetcher(fetcher, tls=tls)
        self._run(self.client.__aenter__())

    def _run(self, work):
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    def __getattr__(self, name: str):
        return getattr(self.sync, name)

    def fetch(
        self, state: FeedState, now: datetime, *, interval: timedelta | None = None
    ) -> FetchResult:
        return self._run(self.client.fetch(state, now, interval=interval))

    def request(self, url: str, headers: dict[str, str] | None = None) -> Document:
        return self._run(self.client.request(url, headers))

    def close(self) -> None:
        self._run(self.client.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()
        self.sync.close()

    def __enter__(self) -> LoopFetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def on_path(path: str, fetcher: Fetcher) -> Fetcher | LoopFetcher:
    """*fetcher* itself ("requests") or the same settings on the event loop ("aiohttp")."""
    return LoopFetcher(fetcher) if path == "aiohttp" else fetcher
