"""The Fetcher's polls on an event loop: hundreds of feeds in flight in one thread.

A poll pass spends nearly all its time waiting for slow blogs (200-1,000 ms an answer). A
thread per request in flight costs a stack and a GIL hand-off per socket call; aiohttp (its
parser is C) waits on hundreds of sockets in one thread for a fraction of the CPU.

``AsyncFetcher(fetcher.config).fetch(state, now)`` is ``Fetcher.fetch`` as a coroutine: the
same conditional GET, redirect rules, classification and FetchResult (adapters.classify, which
adapters.fetch shares: this module does not import that one, nor it this), and the same safety
rules, enforced in this module's own way:

- SSRF: the connector's resolver resolves through adapters.ssrf (``checked_addresses``:
  every address of the name must be allowed) and hands aiohttp only those addresses; and
  the socket factory refuses any address the policy refuses, the one check that also sees
  addresses written in the URL (aiohttp does not resolve those). So a socket only ever
  connects to an address the guard approved, on every hop. No proxies, no cookies.
- the per-host limit: a semaphore per host (``max_per_host``), waited for inside the deadline;
- the size cap: the decoded body is streamed and abandoned past ``max_bytes``;
- the wall-clock deadline: ``asyncio.timeout(total_timeout)`` around the whole exchange
  (slot, DNS, connect, TLS, headers, body, redirects); ``fetch(timeout=)`` can shorten it.

Keep-alive: one connector per AsyncFetcher keeps connections open per host between feeds.

``blocking()`` gives worker threads a Fetcher-like object whose ``fetch`` runs on this loop
(a changed feed's further pages and comment feeds), so they share the per-host limit.

``event_loop(fetcher)`` is the Fetcher's own loop, in a thread of its own, with one
AsyncFetcher that lives as long as the Fetcher (closed by ``Fetcher.close``): its
connections stay open per host from one poll pass to the next, as requests' sessions did.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar
from urllib.parse import urljoin

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from adapters import deadline
from adapters.classify import (
    BodyCap,
    Redirects,
    Trouble,
    classify,
    failed,
    start,
    transport_error,
)
from adapters.errors import BlockedURL, FeedError
from adapters.fetch_types import (
    ACCEPT,
    CHUNK,
    Closeable,
    Document,
    FeedState,
    FetchConfig,
    FetchResult,
    Kept,
)
from adapters.ssrf import AddressPolicy, checked_addresses, split_url

DNS_CACHE_SECONDS = 60  # cached answers were checked; the socket factory checks again


class GuardedResolver(AbstractResolver):
    """Resolves with adapters.ssrf's rules: a name with any refused address is refused
    whole (BlockedURL, with the same message as the synchronous fetcher)."""

    def __init__(self, policy: AddressPolicy) -> None:
        self.policy = policy

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        # getaddrinfo blocks: in a thread. Cancelled at the deadline, the lookup is left to
        # finish in the background (as adapters.ssrf.resolve_in_time does).
        loop = asyncio.get_running_loop()
        infos = await loop.run_in_executor(None, checked_addresses, host, port, self.policy)
        return [
            {
                "hostname": host,
                "host": sockaddr[0],
                "port": sockaddr[1],
                "family": fam,
                "proto": proto,
                "flags": socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
            }
            for fam, _, proto, _, sockaddr in infos
        ]

    async def close(self) -> None:
        """Nothing held."""


def guarded_socket_factory(policy: AddressPolicy) -> Callable[[tuple[Any, ...]], socket.socket]:
    """The socket for one address aiohttp is about to connect to, or BlockedURL. It is not
    an OSError, so aiohttp does not try the next address: the fetch is refused."""

    def make(addr_info: tuple[Any, ...]) -> socket.socket:
        family, type_, proto, _, sockaddr = addr_info
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        reason = policy.refusal(address)
        if reason:
            raise BlockedURL(
                f"Feeds on {reason} addresses are not allowed ({address}). "
                "Use the blog's public address."
            )
        return socket.socket(family, type_, proto)

    return make


@contextlib.asynccontextmanager
async def _abort_when_cancelled(response: aiohttp.ClientResponse) -> AsyncIterator[None]:
    """At the deadline, drop the connection at once: a graceful TLS shutdown with a server
    that keeps dripping would linger for asyncio's 30 s shutdown timeout."""
    try:
        yield
    except asyncio.CancelledError:
        connection = response.connection
        if connection is not None and connection.transport is not None:
            connection.transport.abort()
        raise


@functools.lru_cache(maxsize=65_536)
def _host_of(url: str) -> tuple[str, int, bool]:
    """(host, port, numeric) of a URL, where `numeric` says the host is an address in a
    legacy numeric form (2130706433, 0x7f.1): aiohttp refuses it as an invalid URL, so the
    caller names the address it means, as the synchronous fetcher does. Kept per URL: it is
    pure, and a pass asks it for the same feed URLs every time."""
    _, host, port = split_url(url)
    try:
        ipaddress.ip_address(host)
        return host, port, False  # an address as written: the socket factory checks it
    except ValueError:
        pass
    try:
        socket.inet_aton(host)
    except OSError:
        return host, port, False  # a name: the resolver checks it
    return host, port, True


def _trouble(exc: aiohttp.ClientError) -> Trouble:
    """How aiohttp's *exc* broke the exchange (adapters.classify words it as the
    synchronous fetcher does)."""
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return Trouble.CONNECT_TIMEOUT
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return Trouble.ANSWER_TIMEOUT
    if isinstance(exc, aiohttp.ClientSSLError):
        return Trouble.TLS
    if isinstance(exc, aiohttp.InvalidURL):
        return Trouble.BAD_URL
    if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ServerDisconnectedError):
        return Trouble.BROKE_OFF
    return Trouble.UNREACHABLE


class AsyncFetcher:
    """``Fetcher.fetch`` on the running event loop, with a Fetcher's settings (its
    ``config``). Open it with ``async with`` in the loop that will use it."""

    def __init__(
        self, config: FetchConfig, *, limit: int = 256, tls: ssl.SSLContext | None = None
    ) -> None:
        self.config = config
        self.limit = limit
        self.tls = tls  # None: the default context (system CAs, hostname checked)
        self.max_per_host = config.max_per_host
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> AsyncFetcher:
        f = self.config
        connector = aiohttp.TCPConnector(
            resolver=GuardedResolver(f.policy),
            socket_factory=guarded_socket_factory(f.policy),
            limit=self.limit,
            limit_per_host=0,  # the host slots below limit requests, redirects included
            ttl_dns_cache=DNS_CACHE_SECONDS,
            keepalive_timeout=60,
            ssl=self.tls if self.tls is not None else True,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            headers={"User-Agent": f.user_agent, "Accept": ACCEPT},
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=f.connect_timeout, sock_read=f.read_timeout
            ),
            trust_env=False,  # no proxies or .netrc from the environment
            raise_for_status=False,
        )
        self._loop = asyncio.get_running_loop()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
            # A closed transport is only let go on the loop's next turns; the loop may be
            # closed right after (asyncio.run), leaving "unclosed transport" warnings.
            for _ in range(3):
                await asyncio.sleep(0)

    # --- polling ---------------------------------------------------------------------------
    async def fetch(
        self,
        state: FeedState,
        now: datetime,
        *,
        interval: timedelta | None = None,
        timeout: float | None = None,
    ) -> FetchResult:
        """Poll *state.url* once, as ``Fetcher.fetch``; *timeout* (seconds) shortens the
        deadline (a blog's remaining budget)."""
        interval = interval or self.config.interval
        headers, base, unconditional = start(state, now)
        try:
            document = await self.request(state.url, headers, timeout=timeout)
        except FeedError as exc:
            return failed(base, exc, interval)
        return classify(base, document, unconditional, interval)

    async def request(
        self, url: str, headers: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> Document:
        """GET *url* following redirects by hand, within the deadline; as Fetcher.request."""
        total = self.config.total_timeout
        if timeout is not None:
            total = min(total, timeout)
        try:
            async with asyncio.timeout(max(total, 0)):
                return await self._request(url, headers or {})
        except TimeoutError:
            # aiohttp's own connect/read timeouts became FeedTimeouts inside; this is the
            # deadline's (asyncio.timeout turns the cancellation into TimeoutError).
            raise transport_error(Trouble.DEADLINE, url, self.config) from None

    @contextlib.asynccontextmanager
    async def _host_slot(self, host: str) -> AsyncIterator[None]:
        if not self.max_per_host:
            yield
            return
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = asyncio.Semaphore(self.max_per_host)
        async with slot:
            yield

    async def _request(self, url: str, headers: dict[str, str]) -> Document:
        assert self._session is not None, "use `async with AsyncFetcher(...)`"
        current = url
        redirects = Redirects(url, self.config.max_redirects)
        for _ in redirects.hops():
            host, port, numeric = _host_of(current)  # addresses are checked when connecting
            if numeric:
                checked_addresses(host, port, self.config.policy)  # no lookup: a number
            async with self._host_slot(host):
                try:
                    async with (
                        self._session.get(
                            current, headers=headers, allow_redirects=False
                        ) as response,
                        _abort_when_cancelled(response),
                    ):
                        location = response.headers.get("location")
                        target = redirects.target(current, response.status, location)
                        if target is not None:
                            current = target
                            continue
                        return await self._read(url, current, redirects.moved_to, response)
                except aiohttp.ClientError as exc:
                    raise transport_error(_trouble(exc), current, self.config, exc) from None
        raise redirects.too_many()

    async def _read(
        self, url: str, final_url: str, moved_to: str | None, response: aiohttp.ClientResponse
    ) -> Document:
        headers = {k.lower(): v for k, v in response.headers.items()}
        headers["content-location"] = urljoin(final_url, headers.get("content-location", ""))
        cap = BodyCap.of(self.config, url, response.status, headers)
        try:
            async for chunk in response.content.iter_chunked(CHUNK):
                if not cap.add(chunk):
                    break
        except aiohttp.SocketTimeoutError:
            raise transport_error(Trouble.STALLED, url, self.config) from None
        except aiohttp.ClientError as exc:
            raise transport_error(Trouble.BROKE_OFF, url, self.config, exc) from None
        return Document(url, final_url, moved_to, response.status, headers, cap.body())

    # --- for worker threads ----------------------------------------------------------------
    def blocking(self) -> BlockingFetcher:
        """A Fetcher-like object for threads other than the loop's."""
        assert self._loop is not None, "use `async with AsyncFetcher(...)`"
        return BlockingFetcher(self, self._loop)


class BlockingFetcher:
    """``fetch`` and ``budget`` as on Fetcher, for a worker thread: the request runs on the
    AsyncFetcher's loop (its connections, its host slots) within the thread's deadline."""

    def __init__(self, client: AsyncFetcher, loop: asyncio.AbstractEventLoop) -> None:
        self.client, self.loop = client, loop
        self.max_per_host = client.max_per_host

    def budget(self) -> contextlib.AbstractContextManager[None]:
        return self.client.config.budget()

    def fetch(
        self, state: FeedState, now: datetime, *, interval: timedelta | None = None
    ) -> FetchResult:
        left = deadline.remaining()
        work = self.client.fetch(state, now, interval=interval, timeout=left)
        # The fetch ends at its deadline on the loop; the wait here has a limit of its own
        # too, so a worker never blocks for ever on a loop that has stopped serving it.
        wait = (self.client.config.total_timeout if left is None else max(left, 0)) + 5
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=wait)


T = TypeVar("T")


class EventLoop:
    """An event loop running in a thread of its own, with one open AsyncFetcher on it."""

    def __init__(self, config: FetchConfig, *, limit: int, tls: ssl.SSLContext | None = None):
        self.limit = limit
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="pbp-fetch-loop", daemon=True
        )
        self.thread.start()
        self.client = AsyncFetcher(config, limit=limit, tls=tls)
        self.run(self.client.__aenter__())

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run the coroutine *work* on the loop; wait for its result here."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.run(self.client.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class LoopOwner(Protocol):
    """What ``event_loop`` needs of a Fetcher: its settings, and the slot its loop is kept
    in (closed by ``Fetcher.close``)."""

    @property
    def config(self) -> FetchConfig: ...

    @property
    def loop_slot(self) -> Kept[Closeable]: ...


def event_loop(fetcher: LoopOwner, *, limit: int) -> EventLoop:
    """*fetcher*'s event loop (started on first use, closed with the fetcher); a new one if
    *limit* changed."""
    loop = fetcher.loop_slot.get(
        fits=lambda held: isinstance(held, EventLoop) and held.limit == limit,
        make=lambda: EventLoop(fetcher.config, limit=limit),
    )
    assert isinstance(loop, EventLoop)
    return loop
