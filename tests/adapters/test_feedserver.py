"""The loopback test server itself (later integration tests and benchmarks rely on it)."""

from __future__ import annotations

import gzip
import socket

import requests

from tests.feedserver import FeedServer


def test_serves_bytes_status_headers_and_counts(feed_server: FeedServer) -> None:
    url = feed_server.add("/x?page=2", body=b"hello", status=201, headers={"X-Test": "1"})
    with requests.Session() as session:
        response = session.get(url, timeout=2)
    assert (response.status_code, response.content) == (201, b"hello")
    assert response.headers["X-Test"] == "1"
    assert feed_server.count("/x?page=2") == 1
    assert feed_server.count("/x") == 1


def test_etag_and_last_modified_answer_304(feed_server: FeedServer) -> None:
    url = feed_server.add("/f", body=b"data", etag='"v1"', last_modified="Wed, 03 Apr 2024")
    with requests.Session() as session:
        assert session.get(url, headers={"If-None-Match": '"v1"'}, timeout=2).status_code == 304
        assert session.get(url, headers={"If-None-Match": '"v0"'}, timeout=2).status_code == 200
        since = {"If-Modified-Since": "Wed, 03 Apr 2024"}
        assert session.get(url, headers=since, timeout=2).status_code == 304


def test_gzip_and_streamed_huge_bodies(feed_server: FeedServer) -> None:
    feed_server.add("/gz", body=b"a" * 1000, gzip=True)
    feed_server.huge("/big", 3 * 1024 * 1024 + 7)
    with requests.Session() as session:
        raw = session.get(feed_server.url("/gz"), timeout=2, stream=True).raw.read()
        assert gzip.decompress(raw) == b"a" * 1000
        assert len(session.get(feed_server.url("/big"), timeout=2).content) == 3 * 1024 * 1024 + 7


def test_binds_other_loopback_addresses(make_feed_server) -> None:
    server = make_feed_server("127.0.0.5")
    server.add("/", body=b"five")
    assert server.url("/").startswith("http://127.0.0.5:")
    with socket.create_connection(("127.0.0.5", server.port), timeout=2) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        received = b""
        while chunk := sock.recv(4096):
            received += chunk
    assert received.endswith(b"\r\n\r\nfive")
