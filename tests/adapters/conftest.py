"""Fixtures for adapter tests: a real loopback feed server, fixture files, fetchers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapters.fetch import Fetcher
from tests.adapters.async_fetch import FETCH_PATHS, on_path
from tests.feedserver import FeedServer
from tests.helpers import FEED_FIXTURES


@pytest.fixture
def fixtures_dir() -> Path:
    return FEED_FIXTURES


@pytest.fixture
def make_feed_server() -> Iterator[Callable[..., FeedServer]]:
    """Start servers on chosen loopback addresses (e.g. "127.0.0.2"); all stopped after."""
    servers: list[FeedServer] = []

    def make(host: str = "127.0.0.1") -> FeedServer:
        server = FeedServer(host).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def feed_server(make_feed_server: Callable[..., FeedServer]) -> FeedServer:
    """A running loopback server on 127.0.0.1, empty until a test adds routes."""
    return make_feed_server()


# Every test taking `fetcher` or `strict_fetcher` runs on both fetch paths (FETCH_PATHS).


@pytest.fixture(params=FETCH_PATHS)
def fetcher(request) -> Iterator[Fetcher]:
    """A fetcher for the loopback server: private addresses allowed, short timeouts."""
    with on_path(
        request.param,
        Fetcher(
            instance_url="https://pbp.test",
            allow_private=True,
            connect_timeout=1.0,
            read_timeout=0.5,
            total_timeout=5.0,
        ),
    ) as f:
        yield f


@pytest.fixture(params=FETCH_PATHS)
def strict_fetcher(request) -> Iterator[Fetcher]:
    """A fetcher with production SSRF rules (no private addresses)."""
    plain = Fetcher(instance_url="https://pbp.test", connect_timeout=1.0, read_timeout=0.5)
    with on_path(request.param, plain) as f:
        yield f
