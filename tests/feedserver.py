"""A real HTTP server on loopback for integration tests and benchmarks.

Serves bytes or files at paths with configurable status, headers, ETag/Last-Modified handling
(304 on a matching If-None-Match / If-Modified-Since), delays, redirects, a "never answers"
mode, and huge bodies streamed from a generator (never held in memory). It can bind any
127.x.y.z address, so SSRF tests can put a "public" server and a "private" one on different
addresses, and it counts requests per path so tests can prove a request never happened.

    with FeedServer() as server:
        server.add("/feed.xml", body=b"<rss .../>", content_type="application/rss+xml")
        url = server.url("/feed.xml")
"""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


@dataclass
class Route:
    """How to answer one path. ``body`` may be bytes or a callable returning an iterator of
    chunks (for streaming huge bodies)."""

    status: int = 200
    body: bytes | Callable[[], Iterable[bytes]] = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "application/xml"
    etag: str | None = None
    last_modified: str | None = None
    delay: float = 0.0
    never_answer: bool = False
    gzip: bool = False
    content_length: bool = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: FeedServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request, client_address) -> None:
        """Clients hanging up mid-body (size caps, timeouts) are expected; stay quiet."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes; without this, Nagle's algorithm and
        # delayed ACKs add ~40 ms to every response with a body
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        with self.server.owner.tracking():
            self._answer(send_body=False)

    def do_GET(self) -> None:
        with self.server.owner.tracking():
            self._answer(send_body=True)

    def _answer(self, *, send_body: bool) -> None:
        owner = self.server.owner
        path = self.path
        route = owner.record(path, dict(self.headers.items()))
        if route is None:
            self._send(404, {"Content-Type": "text/plain"}, b"not found", send_body)
            return
        if route.never_answer:
            owner.stopping.wait()
            self.close_connection = True
            return
        if route.delay and owner.stopping.wait(route.delay):
            return  # the server is stopping
        headers = dict(route.headers)
        if route.content_type and route.status != 304:
            headers.setdefault("Content-Type", route.content_type)
        if route.etag:
            headers["ETag"] = route.etag
        if route.last_modified:
            headers["Last-Modified"] = route.last_modified
        if route.status == 200 and self._not_modified(route):
            self._send(304, {k: v for k, v in headers.items() if k != "Content-Type"}, b"", False)
            return
        body = route.body
        if callable(body):
            self._stream(route.status, headers, body(), send_body)
            return
        if route.gzip:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        self._send(route.status, headers, body, send_body, route.content_length)

    def _not_modified(self, route: Route) -> bool:
        if route.etag and self.headers.get("If-None-Match"):
            return route.etag in [t.strip() for t in self.headers["If-None-Match"].split(",")]
        if route.last_modified and self.headers.get("If-Modified-Since"):
            return self.headers["If-Modified-Since"] == route.last_modified
        return False

    def _send(
        self,
        status: int,
        headers: dict[str, str],
        body: bytes,
        send_body: bool,
        content_length: bool = True,
    ) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if content_length:
            self.send_header("Content-Length", str(len(body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if send_body and body:
            self.wfile.write(body)

    def _stream(
        self, status: int, headers: dict[str, str], chunks: Iterator[bytes], send_body: bool
    ) -> None:
        """Chunked transfer encoding: the body is generated as it is sent."""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if not send_body:
            return
        try:
            for chunk in chunks:
                if self.server.owner.stopping.is_set():
                    break
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def repeated(chunk: bytes, total: int) -> Callable[[], Iterator[bytes]]:
    """A body of *total* bytes made of *chunk* repeated, generated lazily."""

    def generate() -> Iterator[bytes]:
        sent = 0
        while sent < total:
            piece = chunk[: total - sent]
            sent += len(piece)
            yield piece

    return generate


class FeedServer:
    """Threaded HTTP server on *host* (any 127.x.y.z) and an ephemeral port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.request_headers: dict[str, list[dict[str, str]]] = {}
        self.stopping = threading.Event()
        self.in_flight = 0
        self.peak_in_flight = 0  # most requests handled at the same time
        self._lock = threading.Lock()
        self._server = _Server((host, port), self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> FeedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FeedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- routes ----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + path

    def add(self, path: str, **options: object) -> str:
        """Serve *path* as described by Route(**options); returns its full URL."""
        with self._lock:
            self.routes[path] = Route(**options)  # type: ignore[arg-type]
        return self.url(path)

    def add_file(self, path: str, file: str | Path, **options: object) -> str:
        return self.add(path, body=Path(file).read_bytes(), **options)

    def redirect(self, path: str, target: str, status: int = 301) -> str:
        """Redirect *path* to *target* (absolute URL or a path on this server)."""
        return self.add(path, status=status, headers={"Location": target}, content_type=None)

    def never_answer(self, path: str) -> str:
        """Accept the request and send nothing until the server stops."""
        return self.add(path, never_answer=True)

    def huge(self, path: str, size: int, chunk: bytes = b"<!-- padding -->\n" * 4096) -> str:
        """Stream *size* bytes (chunked, never in memory at once)."""
        return self.add(path, body=repeated(chunk, size))

    @contextlib.contextmanager
    def tracking(self) -> Iterator[None]:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1

    def record(self, raw_path: str, headers: dict[str, str]) -> Route | None:
        path = urlsplit(raw_path).path
        with self._lock:
            self.hits[raw_path] += 1
            if raw_path != path:
                self.hits[path] += 1
            self.request_headers.setdefault(path, []).append(headers)
            return self.routes.get(raw_path) or self.routes.get(path)

    def count(self, path: str) -> int:
        with self._lock:
            return self.hits[path]

    @property
    def total_requests(self) -> int:
        with self._lock:
            return sum(v for k, v in self.hits.items() if "?" not in k)

    def last_headers(self, path: str) -> dict[str, str]:
        with self._lock:
            return self.request_headers.get(path, [{}])[-1]


def wait_until(predicate: Callable[[], bool], timeout: float = 2.0) -> bool:
    """Poll *predicate* until true or *timeout*; for asserting on server-side effects."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
