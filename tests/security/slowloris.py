"""Slow clients for tests/security/test_slow_clients.py (issue #28 item 3), on loopback only.

`SlowClients` holds many connections open, each sending a request's first line and then one
more header line now and then, never the blank line that ends the headers. A server that gives
each connection a thread while it reads the request runs out of threads; one that reads
requests without a thread (waitress's event loop, nginx) does not. A connection the server
closes (nginx's client_header_timeout) is opened again, as an attacker would: bounded by
`max_connects` and by `duration`, so the attack always stops by itself.

`latencies` times plain `GET /` requests made meanwhile, each over a connection of its own.
"""

from __future__ import annotations

import http.client
import itertools
import math
import resource
import select
import socket
import threading
import time
from dataclasses import dataclass

HOST = "127.0.0.1"  # never anything but loopback


def raise_fd_limit(needed: int) -> None:
    """Lift this process's soft limit on open files to `needed` (children inherit it), within
    the hard limit: the attack holds one descriptor per connection."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class SlowClients:
    def __init__(
        self,
        port: int,
        count: int,
        interval: float = 1.0,
        duration: float = 180.0,
        max_connects: int | None = None,
    ) -> None:
        self.port, self.count, self.interval = port, count, interval
        self.deadline = time.monotonic() + duration
        self.max_connects = max_connects if max_connects is not None else 20 * count
        self.socks: list[socket.socket] = []
        self.connects = 0
        self.closed_by_server = 0
        self.failed_connects = 0
        self._lines = itertools.count()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drip, daemon=True)

    def __enter__(self) -> SlowClients:
        for _ in range(self.count):
            self._open()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(10)
        for sock in self.socks:
            sock.close()
        self.socks.clear()

    def _open(self) -> None:
        if self.connects >= self.max_connects or time.monotonic() > self.deadline:
            return
        self.connects += 1
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(5)
        try:
            sock.connect((HOST, self.port))
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        except OSError:
            self.failed_connects += 1
            sock.close()
            return
        sock.setblocking(False)
        self.socks.append(sock)

    def _drip(self) -> None:
        while not self._stop.wait(self.interval) and time.monotonic() < self.deadline:
            line = f"X-Slow-{next(self._lines)}: a\r\n".encode()
            poller = select.poll()
            for sock in self.socks:
                poller.register(sock, select.POLLIN)
            # A server that answered (408) or closed is done with the connection.
            done = {fd for fd, _ in poller.poll(0)}
            alive = []
            for sock in self.socks:
                try:
                    if sock.fileno() in done:
                        raise ConnectionResetError
                    sock.send(line)
                    alive.append(sock)
                except OSError:
                    sock.close()
                    self.closed_by_server += 1
            self.socks = alive
            for _ in range(self.count - len(self.socks)):
                self._open()

    def summary(self) -> str:
        return (
            f"{len(self.socks)} slow connections open, {self.connects} opened in all "
            f"({self.closed_by_server} closed by the server, {self.failed_connects} refused)"
        )


@dataclass
class Latencies:
    seconds: list[float]  # of the answered requests
    timeouts: int
    errors: list[str]

    def p95(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else math.inf

    def report(self, label: str) -> str:
        answered = len(self.seconds)
        return (
            f"{label}: {answered} GET / answered, {self.timeouts} timed out, "
            f"{len(self.errors)} failed; p95 {self.p95() * 1000:.0f} ms, "
            f"max {max(self.seconds, default=math.inf) * 1000:.0f} ms"
        )


def latencies(
    port: int, requests: int, timeout: float, spacing: float = 0.0, give_up_after: int = 3
) -> Latencies:
    """Time `requests` sequential `GET /`, one every `spacing` seconds at most, each with
    `timeout` seconds to answer; stop after `give_up_after` timeouts (the verdict is in by
    then, and each costs `timeout`)."""
    result = Latencies([], 0, [])
    for number in range(requests):
        if number:
            time.sleep(spacing)
        started = time.monotonic()
        conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
        try:
            conn.request("GET", "/", headers={"Connection": "close"})
            answer = conn.getresponse()
            answer.read()
            if answer.status != 200:
                result.errors.append(f"status {answer.status}")
            else:
                result.seconds.append(time.monotonic() - started)
        except TimeoutError:
            result.timeouts += 1
            if result.timeouts >= give_up_after:
                break
        except OSError as exc:
            result.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()
    return result
