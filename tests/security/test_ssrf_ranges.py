"""Issue #16, item 9: addresses that tunnel to a refused IPv4 address, and two old ranges
the ipaddress module still calls global, are refused like the rest (adapters.ssrf)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from adapters import check_url
from adapters.errors import BlockedURL
from adapters.fetch import FeedState, Fetcher, FetchStatus
from adapters.ssrf import blocked_reason
from tests.adapters.async_fetch import FETCH_PATHS, on_path
from tests.adapters.test_ssrf import fake_resolver
from tests.helpers import FEED_NOW as NOW

REFUSED = [
    ("2002:7f00:1::", "6to4-wrapped loopback"),  # 6to4 of 127.0.0.1
    ("2002:a00:1::", "6to4-wrapped private"),  # 10.0.0.1
    ("2002:a9fe:a9fe::1", "6to4-wrapped link-local"),  # 169.254.169.254, cloud metadata
    ("2002:c058:6301::", "6to4-wrapped 6to4 relay anycast"),  # 192.88.99.1
    # Teredo: server 65.54.227.120, client 127.0.0.1 (stored inverted: 80ff:fffe)
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo-wrapped loopback"),
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo-wrapped private"),  # client 10.0.0.1
    ("fec0::1", "site-local"),
    ("fec0:1234::5", "site-local"),
    ("feff:ffff::1", "site-local"),  # the top of fec0::/10
    ("192.88.99.1", "6to4 relay anycast"),
    ("192.88.99.255", "6to4 relay anycast"),
    ("::ffff:192.88.99.7", "6to4 relay anycast"),
]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_refused_ranges(address: str, reason: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_submission_is_refused_with_the_reason(address: str, reason: str) -> None:
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(BlockedURL) as caught:
        check_url(f"http://{host}/feed")
    assert caught.value.message.startswith(f"Feeds on {reason} addresses are not allowed")


@pytest.mark.parametrize("path", FETCH_PATHS)
def test_a_hostname_resolving_to_6to4_loopback_is_refused_at_connect(
    monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", fake_resolver({"six.example": ["2002:7f00:1::"]}))
    with on_path(path, Fetcher(connect_timeout=1.0, read_timeout=0.5)) as fetcher:
        result = fetcher.fetch(FeedState("http://six.example/feed"), NOW)
    assert result.status is FetchStatus.BLOCKED
    assert "6to4-wrapped loopback" in result.reason


@pytest.mark.parametrize(
    "address",
    [
        "2002:808:808::1",  # 6to4 of 8.8.8.8: public on both sides
        "192.88.98.1",  # just below the relay range
        "192.88.100.1",  # just above it
        "2606:2800:220:1::1",  # a plain public IPv6 address
    ],
)
def test_public_neighbours_stay_allowed(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None
