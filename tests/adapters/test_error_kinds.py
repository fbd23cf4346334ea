"""Every failed read's message, as the real fetcher and parser write it, is read back as its
kind (blogs store only the message): the referee's pages choose their plain words by it."""

from __future__ import annotations

import socket

import pytest

from adapters import parse_feed
from adapters.errors import FeedError, kind_of_message
from adapters.fetch import FeedState, Fetcher, FetchStatus
from adapters.ssrf import check_url
from tests.helpers import FEED_NOW as NOW


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _failed(fetcher: Fetcher, url: str) -> str:
    result = fetcher.fetch(FeedState(url), NOW)
    assert result.failed, result.status
    return result.reason


def test_each_fetch_failure_reads_back_as_its_kind(feed_server, fetcher):
    unreachable = _failed(fetcher, f"http://127.0.0.1:{_closed_port()}/feed")
    assert kind_of_message(unreachable) == "unreachable"
    assert kind_of_message(_failed(fetcher, feed_server.add("/e", status=500))) == "http_status"
    assert kind_of_message(_failed(fetcher, feed_server.add("/g", status=410))) == "gone"
    feed_server.redirect("/a", "/b")
    feed_server.redirect("/b", "/a")
    assert kind_of_message(_failed(fetcher, feed_server.url("/a"))) == "redirect"
    slow = _failed(fetcher, feed_server.never_answer("/slow"))
    assert kind_of_message(slow) == "timeout"
    empty = _failed(fetcher, feed_server.add("/empty", body=b""))
    assert kind_of_message(empty) == "empty"


def test_too_large_and_blocked_read_back_as_their_kind(feed_server, strict_fetcher):
    with Fetcher(instance_url="https://pbp.test", allow_private=True, max_bytes=1024) as small:
        result = small.fetch(FeedState(feed_server.huge("/big", 64 * 1024)), NOW)
    assert result.status is FetchStatus.TOO_LARGE
    assert kind_of_message(result.reason) == "too_large"
    blocked = strict_fetcher.fetch(FeedState(feed_server.url("/feed")), NOW)
    assert blocked.status is FetchStatus.BLOCKED
    assert kind_of_message(blocked.reason) == "blocked_url"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<!doctype html><html><body>My blog</body></html>", "text/html"),
        (b"just words", "text/plain"),
        (b'{"not": "a feed"}', "application/json"),
    ],
)
def test_what_is_not_a_feed_reads_back_as_not_a_feed(body, content_type):
    with pytest.raises(FeedError) as refused:
        parse_feed(body, {"Content-Type": content_type})
    assert kind_of_message(refused.value.message) == "not_a_feed"


@pytest.mark.parametrize("url", ["ftp://example.org/feed", "http://10.0.0.1/feed", "http://"])
def test_refused_addresses_read_back_as_blocked(url):
    with pytest.raises(FeedError) as refused:
        check_url(url)
    assert kind_of_message(refused.value.message) == "blocked_url"


def test_anything_else_has_no_kind():
    assert kind_of_message(None) is None
    assert kind_of_message("IntegrityError: duplicate key") is None
