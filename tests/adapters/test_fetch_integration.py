"""Fetch + parse against a real HTTP server on loopback serving the fixture files."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from adapters import parse_feed
from adapters.errors import NotAFeed
from adapters.fetch import FeedState, Fetcher, FetchStatus, MiB
from tests.feedserver import FeedServer
from tests.helpers import FEED_FIXTURES as FIXTURES
from tests.helpers import FEED_NOW as NOW
from tests.helpers import fixture_bytes

FEEDS = {
    "livejournal_rss.xml": "livejournal",
    "dreamwidth_atom.xml": "dreamwidth",
    "wordpress_rss.xml": "wordpress",
    "blogger_posts.xml": "blogger",
    "jekyll_atom.xml": "generic",
    "hugo_rss.xml": "generic",
    "mastodon_rss.xml": "mastodon",
}


@pytest.mark.parametrize(("name", "kind"), FEEDS.items())
def test_fetch_and_parse_each_dialect(
    name: str, kind: str, feed_server: FeedServer, fetcher: Fetcher
) -> None:
    url = feed_server.add_file(f"/{name}", FIXTURES / name, content_type="application/xml")
    result = fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.OK
    feed = parse_feed(result.body, result.headers)
    assert feed.kind == kind
    assert feed.entries


def test_etag_round_trip_costs_no_parse(feed_server: FeedServer, fetcher: Fetcher) -> None:
    url = feed_server.add("/feed", body=fixture_bytes("hugo_rss.xml"), etag='"abc"')
    first = fetcher.fetch(FeedState(url), NOW)
    assert (first.status, first.etag) == (FetchStatus.OK, '"abc"')
    second = fetcher.fetch(first.next_state(), NOW + timedelta(minutes=30))
    assert second.status is FetchStatus.NOT_MODIFIED
    assert second.body is None
    assert feed_server.last_headers("/feed")["If-None-Match"] == '"abc"'
    # twelve hours later the request goes out unconditionally; same bytes → still no parse
    later = fetcher.fetch(second.next_state(), NOW + timedelta(hours=12))
    assert "If-None-Match" not in feed_server.last_headers("/feed")
    assert later.status is FetchStatus.UNCHANGED
    assert later.last_unconditional_at == NOW + timedelta(hours=12)


def test_last_modified_round_trip(feed_server: FeedServer, fetcher: Fetcher) -> None:
    stamp = "Wed, 03 Apr 2024 10:00:00 GMT"
    url = feed_server.add("/feed", body=fixture_bytes("hugo_rss.xml"), last_modified=stamp)
    first = fetcher.fetch(FeedState(url), NOW)
    second = fetcher.fetch(first.next_state(), NOW + timedelta(minutes=30))
    assert second.status is FetchStatus.NOT_MODIFIED
    assert feed_server.last_headers("/feed")["If-Modified-Since"] == stamp


def test_gzip_is_decoded(feed_server: FeedServer, fetcher: Fetcher) -> None:
    body = fixture_bytes("wordpress_rss.xml")
    url = feed_server.add("/feed", body=body, gzip=True)
    result = fetcher.fetch(FeedState(url), NOW)
    assert result.body == body
    assert feed_server.last_headers("/feed")["Accept-Encoding"].startswith("gzip")


def test_50_mib_body_is_abandoned_at_the_cap(feed_server: FeedServer) -> None:
    url = feed_server.huge("/huge", 50 * MiB)
    started = time.monotonic()
    with Fetcher(allow_private=True, read_timeout=2.0) as fetcher:  # the real 10 MiB cap
        result = fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.TOO_LARGE
    assert result.body is None
    assert "10 MiB" in result.reason
    assert time.monotonic() - started < 5


def test_gzip_bomb_is_capped_after_decompression(feed_server: FeedServer) -> None:
    bomb = gzip.compress(b"\0" * (50 * MiB), compresslevel=9)
    assert len(bomb) < MiB
    url = feed_server.add("/bomb", body=bomb, headers={"Content-Encoding": "gzip"})
    with Fetcher(allow_private=True, read_timeout=2.0) as fetcher:
        result = fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.TOO_LARGE


def test_server_that_never_answers_times_out(feed_server: FeedServer, fetcher: Fetcher) -> None:
    url = feed_server.never_answer("/hang")
    started = time.monotonic()
    result = fetcher.fetch(FeedState(url), NOW)
    assert time.monotonic() - started < 3
    assert result.status is FetchStatus.FAILED
    assert "did not answer within 0.5 s" in result.reason
    assert result.failure_count == 1
    assert result.next_poll_at > NOW


def test_slow_drip_hits_the_total_deadline(feed_server: FeedServer) -> None:
    def drip() -> Iterator[bytes]:
        for _ in range(200):
            time.sleep(0.05)
            yield b"<!-- still here -->"

    url = feed_server.add("/drip", body=drip)
    with Fetcher(allow_private=True, read_timeout=1.0, total_timeout=0.5) as fetcher:
        result = fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.FAILED
    assert "longer than 0.5 s" in result.reason


def test_redirect_loop(feed_server: FeedServer, fetcher: Fetcher) -> None:
    feed_server.redirect("/a", "/b")
    feed_server.redirect("/b", "/a", status=307)
    result = fetcher.fetch(FeedState(feed_server.url("/a")), NOW)
    assert result.status is FetchStatus.FAILED
    assert "loop" in result.reason
    assert feed_server.count("/a") == 1


def test_permanent_redirect_reports_the_new_url(feed_server: FeedServer, fetcher: Fetcher) -> None:
    feed_server.add("/new", body=fixture_bytes("hugo_rss.xml"))
    feed_server.redirect("/old", "/new", status=308)
    result = fetcher.fetch(FeedState(feed_server.url("/old")), NOW)
    assert result.status is FetchStatus.OK
    assert result.moved_to == feed_server.url("/new")


def test_html_page_instead_of_a_feed(feed_server: FeedServer, fetcher: Fetcher) -> None:
    url = feed_server.add_file(
        "/", FIXTURES / "home_wordpress.html", content_type="text/html; charset=UTF-8"
    )
    result = fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.OK
    with pytest.raises(NotAFeed, match="web page"):
        parse_feed(result.body, result.headers)


def test_challenge_page_from_a_real_server(feed_server: FeedServer, fetcher: Fetcher) -> None:
    url = feed_server.add_file(
        "/feed", FIXTURES / "cloudflare_challenge.html", status=403, content_type="text/html"
    )
    result = fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.CHALLENGE


def test_gone_and_not_found(feed_server: FeedServer, fetcher: Fetcher) -> None:
    feed_server.add("/gone", status=410, body=b"gone")
    assert fetcher.fetch(FeedState(feed_server.url("/gone")), NOW).status is FetchStatus.GONE
    missing = fetcher.fetch(FeedState(feed_server.url("/missing")), NOW)
    assert (missing.status, missing.http_status) == (FetchStatus.FAILED, 404)


def test_retry_after_from_a_real_server(feed_server: FeedServer, fetcher: Fetcher) -> None:
    url = feed_server.add("/busy", status=429, headers={"Retry-After": "600"}, body=b"slow down")
    result = fetcher.fetch(FeedState(url), NOW)
    assert result.next_poll_at == NOW + timedelta(minutes=30)  # 10 min < the 30 min interval
    url = feed_server.add("/busier", status=503, headers={"Retry-After": "3600"}, body=b"")
    assert fetcher.fetch(FeedState(url), NOW).next_poll_at == NOW + timedelta(hours=1)


def test_connection_refused(fetcher: Fetcher) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = fetcher.fetch(FeedState(f"http://127.0.0.1:{port}/feed"), NOW)
    assert result.status is FetchStatus.FAILED
    assert "connect" in result.reason.lower()


def test_thread_pool_with_per_thread_sessions(make_feed_server, fetcher: Fetcher) -> None:
    if not isinstance(fetcher, Fetcher):
        pytest.skip("requests' sessions per thread; the event loop's path has one connector")
    servers = [make_feed_server("127.0.0.1"), make_feed_server("127.0.0.3")]
    urls = []
    for server in servers:
        for i in range(20):
            urls.append(server.add(f"/feed{i}", body=fixture_bytes("hugo_rss.xml"), delay=0.01))
    threads: set[int] = set()

    def poll(url: str) -> FetchStatus:
        threads.add(threading.get_ident())
        return fetcher.fetch(FeedState(url), NOW).status

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(poll, urls))
    assert all(server.peak_in_flight <= 2 for server in servers)
    assert statuses == [FetchStatus.OK] * 40
    assert len(fetcher._sessions) == len(threads) <= 8
    assert sum(server.total_requests for server in servers) == 40


def test_at_most_two_concurrent_requests_per_host(feed_server: FeedServer) -> None:
    urls = [
        feed_server.add(f"/slow{i}", body=fixture_bytes("hugo_rss.xml"), delay=0.1)
        for i in range(6)
    ]
    fetcher = Fetcher(allow_private=True, read_timeout=2.0)  # default max_per_host=2
    with fetcher, ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda u: fetcher.fetch(FeedState(u), NOW), urls))
    assert all(r.status is FetchStatus.OK for r in results)
    assert feed_server.peak_in_flight == 2
