"""SSRF: private addresses are refused at submission, on every fetch and every redirect hop,
checking the address actually connected to. Nothing here leaves the machine: blocked
addresses are refused before any socket is opened, and the test servers are on loopback."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

import pytest

from adapters import check_url
from adapters.errors import BlockedURL
from adapters.fetch import FeedState, Fetcher, FetchStatus
from adapters.ssrf import AddressPolicy, blocked_reason
from tests.adapters.async_fetch import FETCH_PATHS, on_path
from tests.feedserver import FeedServer
from tests.helpers import FEED_NOW as NOW
from tests.helpers import fixture_bytes

PUBLIC_IP = "93.184.216.34"  # never contacted: only returned by fake resolvers

PRIVATE_URLS = [
    ("http://127.0.0.1/feed", "loopback"),
    ("http://127.1.2.3:8080/feed", "loopback"),
    ("http://10.0.0.1/feed", "private"),
    ("http://172.16.5.4/feed", "private"),
    ("http://192.168.1.1/feed", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[::1]/feed", "loopback"),
    ("http://[fe80::1]/feed", "link-local"),
    ("http://[fd00::1]/feed", "private"),
    ("http://[::ffff:127.0.0.1]/feed", "loopback"),
    ("http://0.0.0.0/feed", "unspecified"),
    ("http://224.0.0.1/feed", "multicast"),
    ("http://240.0.0.1/feed", "reserved"),
    ("http://100.64.0.1/feed", "non-public"),
    ("http://2130706433/feed", "loopback"),  # 127.0.0.1 written as one number
    ("http://0x7f.1/feed", "loopback"),
    ("http://localhost/feed", "loopback"),  # a hostname resolving to loopback
]


def fake_resolver(table: dict[str, list[str]]) -> Callable[..., list]:
    """getaddrinfo replacement answering from *table* (host → addresses), else failing."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host not in table:
            return real(host, port, family, type, proto, flags)
        answers = []
        for address in table[host]:
            ip = ipaddress.ip_address(address)
            fam = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
            sockaddr = (address, port, 0, 0) if ip.version == 6 else (address, port)
            answers.append((fam, socket.SOCK_STREAM, 6, "", sockaddr))
        return answers

    return getaddrinfo


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything tries to open a socket."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a socket was opened")

    monkeypatch.setattr("adapters.ssrf.socket.socket", refuse)
    monkeypatch.setattr("adapters.ssrf.deadline.DeadlineSocket", refuse)  # what fetches open


@pytest.mark.parametrize(("url", "reason"), PRIVATE_URLS)
def test_submission_refuses_private_addresses(url: str, reason: str) -> None:
    with pytest.raises(BlockedURL, match=reason) as caught:
        check_url(url)
    assert caught.value.url == url
    assert "public address" in caught.value.message


@pytest.mark.parametrize(("url", "reason"), PRIVATE_URLS)
def test_fetch_refuses_private_addresses_without_connecting(
    url: str, reason: str, strict_fetcher: Fetcher, no_sockets: None
) -> None:
    result = strict_fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.BLOCKED
    assert reason in result.reason


@pytest.mark.parametrize(
    "url",
    [
        "ftp://blog.example/feed",
        "file:///etc/passwd",
        "gopher://blog.example/",
        "javascript:1",
        "feed://blog.example/rss",
        "//blog.example/feed",
        "http:///feed",
    ],
)
def test_only_http_and_https(url: str) -> None:
    with pytest.raises(BlockedURL):
        check_url(url, allow_private=True)


def test_public_address_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", fake_resolver({"blog.example": [PUBLIC_IP]}))
    check_url("https://blog.example/feed")  # no exception, no connection


def test_hostname_resolving_to_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", fake_resolver({"evil.example": ["127.0.0.1"]}))
    with pytest.raises(BlockedURL, match=r"loopback .*evil\.example is 127\.0\.0\.1"):
        check_url("https://evil.example/feed")


def test_one_private_address_among_public_ones_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {"mixed.example": [PUBLIC_IP, "10.1.2.3"]}
    monkeypatch.setattr(socket, "getaddrinfo", fake_resolver(table))
    with pytest.raises(BlockedURL, match="private"):
        check_url("http://mixed.example/feed")


def test_fetch_refuses_a_name_with_one_private_address_without_connecting(
    monkeypatch: pytest.MonkeyPatch, strict_fetcher: Fetcher, no_sockets: None
) -> None:
    """The name is refused whole: which address a connection would try first (aiohttp's
    happy eyeballs may try any) does not matter."""
    table = {"mixed.example": [PUBLIC_IP, "10.1.2.3"]}
    monkeypatch.setattr(socket, "getaddrinfo", fake_resolver(table))
    result = strict_fetcher.fetch(FeedState("http://mixed.example/feed"), NOW)
    assert result.status is FetchStatus.BLOCKED
    assert "private" in result.reason and "mixed.example is 10.1.2.3" in result.reason


def test_allow_private_lifts_the_rule() -> None:
    check_url("http://127.0.0.1/feed", allow_private=True)
    check_url("http://[::1]/feed", allow_private=True)


def test_blocked_reason_for_public_addresses() -> None:
    assert blocked_reason(ipaddress.ip_address(PUBLIC_IP)) is None
    assert blocked_reason(ipaddress.ip_address("2606:2800:220:1::1")) is None
    policy = AddressPolicy.build(allowed_networks=["127.0.0.2/32"])
    assert policy.refusal(ipaddress.ip_address("127.0.0.2")) is None
    assert policy.refusal(ipaddress.ip_address("127.0.0.1")) == "loopback"


def test_loopback_server_is_refused_and_never_contacted(
    feed_server: FeedServer, strict_fetcher: Fetcher, fetcher: Fetcher
) -> None:
    feed_server.add("/feed", body=fixture_bytes("hugo_rss.xml"))
    for host in ("127.0.0.1", "localhost"):
        url = f"http://{host}:{feed_server.port}/feed"
        assert strict_fetcher.fetch(FeedState(url), NOW).status is FetchStatus.BLOCKED
    assert feed_server.count("/feed") == 0
    # the same request is fine when private addresses are allowed (so the test can fail)
    assert fetcher.fetch(FeedState(feed_server.url("/feed")), NOW).status is FetchStatus.OK


def test_dns_rebinding_is_caught_at_connect_time(
    monkeypatch: pytest.MonkeyPatch, feed_server: FeedServer, strict_fetcher: Fetcher
) -> None:
    """The name is public when the player submits it and loopback when we fetch it."""
    feed_server.add("/feed", body=fixture_bytes("hugo_rss.xml"))
    answers = iter([[PUBLIC_IP], ["127.0.0.1"], ["127.0.0.1"]])
    real = socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):
        if host == "rebind.example":
            return fake_resolver({host: next(answers)})(host, port)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = f"http://rebind.example:{feed_server.port}/feed"
    check_url(url)  # looks public at submission
    result = strict_fetcher.fetch(FeedState(url), NOW)
    assert result.status is FetchStatus.BLOCKED
    assert feed_server.count("/feed") == 0


@pytest.mark.parametrize("path", FETCH_PATHS)
def test_redirect_to_a_private_address_is_refused(
    make_feed_server: Callable[..., FeedServer], path: str
) -> None:
    """A 'public' server (127.0.0.2, allow-listed) redirects to a private one (127.0.0.1)."""
    public = make_feed_server("127.0.0.2")
    private = make_feed_server("127.0.0.1")
    private.add("/secret", body=b"<rss version='2.0'><channel><title>s</title></channel></rss>")
    public.add("/ok", body=fixture_bytes("hugo_rss.xml"))
    public.redirect("/feed", private.url("/secret"))
    public.redirect("/moved", public.url("/ok"))
    allowing = Fetcher(allowed_networks=("127.0.0.2/32",), read_timeout=1.0)
    with on_path(path, allowing) as fetcher:
        # control: redirects within the allowed network work
        assert fetcher.fetch(FeedState(public.url("/moved")), NOW).status is FetchStatus.OK
        result = fetcher.fetch(FeedState(public.url("/feed")), NOW)
    assert result.status is FetchStatus.BLOCKED
    assert "loopback" in result.reason
    assert public.count("/feed") == 1
    assert private.count("/secret") == 0


def test_environment_proxies_are_ignored(
    monkeypatch: pytest.MonkeyPatch, feed_server: FeedServer, fetcher: Fetcher
) -> None:
    """A proxy would be the address actually connected to; requests must not use one."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    feed_server.add("/feed", body=fixture_bytes("hugo_rss.xml"))
    assert fetcher.fetch(FeedState(feed_server.url("/feed")), NOW).status is FetchStatus.OK
