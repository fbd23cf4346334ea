"""Fetcher decisions, with HTTP mocked by ``responses`` (no sockets at all)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
import requests
import responses

from adapters.fetch import FeedState, Fetcher, FetchStatus, content_hash, user_agent
from tests.helpers import FEED_NOW as NOW
from tests.helpers import fixture_bytes

URL = "https://blog.example/feed/"
RSS = fixture_bytes("wordpress_rss.xml")


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


@pytest.fixture
def fetcher() -> Iterator[Fetcher]:
    with Fetcher(instance_url="https://pbp.test") as f:
        yield f


def fresh(**changes: object) -> FeedState:
    """A state polled unconditionally an hour ago, so the next GET is conditional."""
    values: dict[str, object] = {"url": URL, "last_unconditional_at": NOW - timedelta(hours=1)}
    values.update(changes)
    return FeedState(**values)  # type: ignore[arg-type]


def test_ok_returns_body_validators_and_schedule(mocked, fetcher) -> None:
    mocked.get(URL, body=RSS, headers={"ETag": '"v2"', "Last-Modified": "Wed, 03 Apr 2024"})
    result = fetcher.fetch(FeedState(URL), NOW)
    assert result.status is FetchStatus.OK
    assert result.body == RSS
    assert (result.etag, result.last_modified) == ('"v2"', "Wed, 03 Apr 2024")
    assert result.content_hash == content_hash(RSS)
    assert result.headers["content-location"] == URL
    assert result.failure_count == 0
    assert result.next_poll_at == NOW + timedelta(minutes=30)
    assert result.last_unconditional_at == NOW  # first poll was unconditional
    assert not result.failed and not result.alert
    request = mocked.calls[0].request
    assert request.headers["User-Agent"] == user_agent("https://pbp.test")
    assert (
        "pbp/" in request.headers["User-Agent"]
        and "https://pbp.test" in request.headers["User-Agent"]
    )
    assert "gzip" in request.headers["Accept-Encoding"]
    assert "If-None-Match" not in request.headers


def test_conditional_get_and_304(mocked, fetcher) -> None:
    mocked.get(URL, status=304, headers={"ETag": '"v2"'})
    state = fresh(etag='"v2"', last_modified="Wed, 03 Apr 2024", content_hash="abc")
    result = fetcher.fetch(state, NOW)
    headers = mocked.calls[0].request.headers
    assert headers["If-None-Match"] == '"v2"'
    assert headers["If-Modified-Since"] == "Wed, 03 Apr 2024"
    assert result.status is FetchStatus.NOT_MODIFIED
    assert result.body is None
    assert (result.etag, result.content_hash) == ('"v2"', "abc")
    assert result.last_unconditional_at == state.last_unconditional_at


def test_unconditional_get_after_twelve_hours(mocked, fetcher) -> None:
    mocked.get(URL, body=RSS)
    state = fresh(etag='"v1"', last_unconditional_at=NOW - timedelta(hours=12))
    result = fetcher.fetch(state, NOW)
    assert "If-None-Match" not in mocked.calls[0].request.headers
    assert result.last_unconditional_at == NOW


def test_identical_bytes_cost_no_parse(mocked, fetcher) -> None:
    mocked.get(URL, body=RSS)
    result = fetcher.fetch(fresh(content_hash=content_hash(RSS)), NOW)
    assert result.status is FetchStatus.UNCHANGED
    assert result.body is None


def test_failure_resets_after_success(mocked, fetcher) -> None:
    mocked.get(URL, body=RSS)
    assert fetcher.fetch(fresh(failure_count=4), NOW).failure_count == 0


@pytest.mark.parametrize("status", [404, 500, 502])
def test_errors_back_off_and_keep_state(mocked, fetcher, status: int) -> None:
    mocked.get(URL, status=status, body=b"nope")
    state = fresh(etag='"v1"', content_hash="abc", failure_count=2)
    result = fetcher.fetch(state, NOW)
    assert result.status is FetchStatus.FAILED
    assert result.http_status == status
    assert result.failure_count == 3
    assert result.next_poll_at == NOW + timedelta(minutes=120)
    assert (result.etag, result.content_hash) == ('"v1"', "abc")
    assert str(status) in result.reason
    assert result.alert  # third failure in a row
    assert result.next_state().failure_count == 3


def test_backoff_is_capped(mocked, fetcher) -> None:
    mocked.get(URL, status=500)
    result = fetcher.fetch(fresh(failure_count=40), NOW)
    assert result.next_poll_at == NOW + timedelta(hours=6)


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured(mocked, fetcher, status: int) -> None:
    mocked.get(URL, status=status, headers={"Retry-After": "7200"})
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.FAILED
    assert result.retry_after == timedelta(hours=2)
    assert result.next_poll_at == NOW + timedelta(hours=2)


def test_gone(mocked, fetcher) -> None:
    mocked.get(URL, status=410)
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.GONE
    assert result.alert
    assert "gone" in result.reason


def test_cloudflare_challenge_is_reported_not_parsed(mocked, fetcher) -> None:
    page = fixture_bytes("cloudflare_challenge.html")
    mocked.get(URL, status=403, body=page, content_type="text/html; charset=UTF-8")
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.CHALLENGE
    assert result.body is None
    assert "bot-check" in result.reason
    assert result.alert


def test_cf_mitigated_header_on_503(mocked, fetcher) -> None:
    mocked.get(URL, status=503, body=b"<html></html>", headers={"cf-mitigated": "challenge"})
    assert fetcher.fetch(fresh(), NOW).status is FetchStatus.CHALLENGE


def test_plain_503_is_a_failure(mocked, fetcher) -> None:
    mocked.get(URL, status=503, body=b"<html>maintenance</html>", content_type="text/html")
    assert fetcher.fetch(fresh(), NOW).status is FetchStatus.FAILED


def test_cache_control_max_age_lengthens_the_interval(mocked, fetcher) -> None:
    mocked.get(URL, body=RSS, headers={"Cache-Control": "public, max-age=7200"})
    assert fetcher.fetch(fresh(), NOW).next_poll_at == NOW + timedelta(hours=2)


@pytest.mark.parametrize("status", [301, 308])
def test_permanent_redirect_moves_the_feed(mocked, fetcher, status: int) -> None:
    new = "https://blog.example/new-feed/"
    mocked.get(URL, status=status, headers={"Location": "/new-feed/"})
    mocked.get(new, body=RSS)
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.OK
    assert result.moved_to == new
    assert result.next_state().url == new
    assert result.headers["content-location"] == new


@pytest.mark.parametrize("status", [302, 303, 307])
def test_temporary_redirect_keeps_the_url(mocked, fetcher, status: int) -> None:
    mocked.get(URL, status=status, headers={"Location": "https://cdn.example/feed"})
    mocked.get("https://cdn.example/feed", body=RSS)
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.OK
    assert result.moved_to is None
    assert result.final_url == "https://cdn.example/feed"
    assert result.next_state().url == URL


def test_permanent_then_temporary_stores_the_permanent_hop(mocked, fetcher) -> None:
    mocked.get(URL, status=301, headers={"Location": "https://b.example/feed"})
    mocked.get("https://b.example/feed", status=302, headers={"Location": "https://c.example/f"})
    mocked.get("https://c.example/f", body=RSS)
    assert fetcher.fetch(fresh(), NOW).moved_to == "https://b.example/feed"


def test_redirect_loop_fails(mocked, fetcher) -> None:
    mocked.get(URL, status=301, headers={"Location": "https://blog.example/b"})
    mocked.get("https://blog.example/b", status=302, headers={"Location": URL})
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.FAILED
    assert "loop" in result.reason
    assert len(mocked.calls) == 2


def test_too_many_redirects_fail(mocked, fetcher) -> None:
    for i in range(10):
        mocked.get(f"https://blog.example/{i}", status=302, headers={"Location": f"/{i + 1}"})
    result = fetcher.fetch(FeedState("https://blog.example/0"), NOW)
    assert result.status is FetchStatus.FAILED
    assert "more than 5" in result.reason
    assert len(mocked.calls) == 6


def test_redirect_to_another_scheme_is_blocked(mocked, fetcher) -> None:
    mocked.get(URL, status=302, headers={"Location": "file:///etc/passwd"})
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.BLOCKED
    assert result.alert


def test_declared_content_length_over_the_cap_is_not_read(mocked) -> None:
    with Fetcher(max_bytes=1000) as small:
        mocked.get(URL, body=b"x" * 2000)
        result = small.fetch(fresh(), NOW)
    assert result.status is FetchStatus.TOO_LARGE
    assert "MiB" in result.reason


def test_empty_body_is_a_failure(mocked, fetcher) -> None:
    mocked.get(URL, body=b"")
    assert fetcher.fetch(fresh(), NOW).status is FetchStatus.FAILED


def test_connection_error_is_a_failure(mocked, fetcher) -> None:
    mocked.get(URL, body=requests.exceptions.ConnectionError("refused"))
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.FAILED
    assert "connect" in result.reason.lower()


def test_timeout_is_a_failure(mocked, fetcher) -> None:
    mocked.get(URL, body=requests.exceptions.ReadTimeout("slow"))
    result = fetcher.fetch(fresh(), NOW)
    assert result.status is FetchStatus.FAILED
    assert "did not answer" in result.reason


def test_fetch_never_raises_for_bad_urls(fetcher) -> None:
    for url in ("ftp://blog.example/feed", "https://", "not a url", "http://[::1"):
        result = fetcher.fetch(FeedState(url), NOW)
        assert result.status is FetchStatus.BLOCKED, url
