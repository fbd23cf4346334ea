"""A loopback HTTP server that answers as slowly as it can without tripping a read timeout.

tests/feedserver.py speaks HTTP through http.server, which writes a response in whole
pieces; these shapes need bytes on the wire one at a time. Each connection reads the
request, sends ``head`` at once, then ``drip`` one byte every ``interval`` seconds (well
inside any read timeout), and gives up after ``limit`` seconds so a test on unfixed code
ends with a failed assertion rather than hanging.
"""

from __future__ import annotations

import itertools
import socket
import ssl
import threading
import time

OK_XML = b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n"
PADDING = b"<!-- still coming -->\n"

# The four shapes of issue #16, item 1: (head, dripped bytes)
SHAPES = {
    "slow-headers": (b"", OK_XML + b"X-Padding: " + b"a" * 100_000),
    "length-drip": (OK_XML + b"Content-Length: 1000000\r\n\r\n", PADDING),
    "close-drip": (OK_XML + b"Connection: close\r\n\r\n", PADDING),
    "chunked-drip": (OK_XML + b"Transfer-Encoding: chunked\r\n\r\nfffff\r\n", PADDING),
}


class DripServer:
    def __init__(
        self,
        head: bytes,
        drip: bytes,
        *,
        interval: float = 0.1,
        limit: float = 8.0,
        host: str = "127.0.0.1",
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.head, self.drip = head, drip
        self.tls = tls
        self.interval, self.limit = interval, limit
        self.requests = 0
        self.stopping = threading.Event()
        self._listener = socket.create_server((host, 0))
        self._listener.settimeout(0.05)
        self.host = host
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def url(self, path: str = "/feed") -> str:
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{self.host}:{self.port}{path}"

    def __enter__(self) -> DripServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self._thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        started = time.monotonic()
        if self.tls:
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except OSError:
                conn.close()
                return
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                piece = conn.recv(4096)
                if not piece:
                    return
                request += piece
            self.requests += 1
            try:
                conn.sendall(self.head)
                if not self.drip:  # silence until the limit
                    self.stopping.wait(self.limit)
                    return
                for byte in itertools.cycle(self.drip):
                    if self.stopping.wait(self.interval):
                        return
                    if time.monotonic() - started > self.limit:
                        return
                    conn.sendall(bytes([byte]))
            except OSError:  # the client gave up: what the tests want
                return
