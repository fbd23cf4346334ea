"""One wall-clock deadline for a whole HTTP exchange, enforced at the socket.

A socket timeout bounds each single read. A server that sends one byte just before it runs
out (headers a byte a second, a body dripped a byte a second, declared by length, ended by
closing, or chunked) resets it every time and keeps a fetch alive for ever. So the fetcher
opens ``deadline(seconds)`` around the whole exchange (connect, TLS handshake, headers,
body, redirects), and the sockets the SSRF guard creates (``DeadlineSocket``) cut the
timeout of every blocking call to what is left of it; past it they raise
``DeadlineExceeded``, a TimeoutError, which urllib3 reports as a timeout like any other.

The deadline is per thread (each fetch runs in one thread from start to end) and nests:
an inner deadline never outlasts the outer one, so a poll of one blog (feed, further pages,
comment feeds) or one discovery (home page and guesses) can share one budget.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

_local = threading.local()


class DeadlineExceeded(TimeoutError):
    """The exchange's deadline has passed."""


def remaining() -> float | None:
    """Seconds left before this thread's deadline (negative once past), or None if none."""
    until = getattr(_local, "until", None)
    return None if until is None else until - time.monotonic()


def expired() -> bool:
    left = remaining()
    return left is not None and left <= 0


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Everything inside ends within *seconds* (or the enclosing deadline, if sooner)."""
    outer = getattr(_local, "until", None)
    until = time.monotonic() + seconds
    _local.until = until if outer is None else min(until, outer)
    try:
        yield
    finally:
        _local.until = outer


def bounded(timeout: float | None) -> float | None:
    """The timeout for the next blocking call: *timeout* cut to what is left of the deadline."""
    left = remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise DeadlineExceeded("the deadline for this exchange has passed")
    return left if timeout is None else min(timeout, left)


if TYPE_CHECKING:
    # The mixin is only ever mixed into socket classes: mypy checks it as one.
    _SocketBase = socket.socket
else:
    _SocketBase = object


class _Bounded(_SocketBase):
    """Mixin for socket classes: the timeout a caller sets (urllib3 sets the connect, then
    the read timeout) is remembered and applied to each call, cut to the deadline."""

    __slots__ = ()
    _timeout: float | None = None  # until a caller sets one: blocking, as sockets start

    def settimeout(self, value: float | None) -> None:
        self._timeout = value
        super().settimeout(value)

    def gettimeout(self) -> float | None:
        return self._timeout

    def _limit(self) -> None:
        left = remaining()
        if left is not None:
            super().settimeout(bounded(self._timeout))

    def connect(self, address: Any) -> None:
        self._limit()
        return super().connect(address)

    def recv(self, *args: Any) -> bytes:
        self._limit()
        return super().recv(*args)

    def recv_into(self, *args: Any) -> int:
        self._limit()
        return super().recv_into(*args)

    def send(self, *args: Any) -> int:
        self._limit()
        return super().send(*args)

    def sendall(self, *args: Any) -> None:
        self._limit()
        return super().sendall(*args)


class DeadlineSocket(_Bounded, socket.socket):
    """A plain TCP socket that honours the thread's deadline."""


class DeadlineSSLSocket(_Bounded, ssl.SSLSocket):
    """The same for TLS: SSLSocket.read and the handshake each get one bounded timeout."""

    def read(self, *args: Any) -> bytes:
        self._limit()
        return super().read(*args)

    def write(self, *args: Any) -> int:
        self._limit()
        return super().write(*args)

    def do_handshake(self, *args: Any) -> None:
        self._limit()
        return super().do_handshake(*args)


def bound_tls(sock: ssl.SSLSocket) -> ssl.SSLSocket:
    """Make a socket that urllib3 has just wrapped in TLS honour the deadline too.

    urllib3 builds the SSLSocket itself (from requests' shared SSL context, whose
    ``sslsocket_class`` we must not change for everyone), so the class is switched in place;
    DeadlineSSLSocket adds methods only, so the two share one layout. The handshake is
    already bounded: it ran on a DeadlineSocket whose timeout was cut to the deadline.
    """
    if type(sock) is ssl.SSLSocket:
        timeout = sock.gettimeout()
        sock.__class__ = DeadlineSSLSocket
        sock.settimeout(timeout)
    return sock
