"""Fetch one feed politely and safely, and decide what the poll means.

``Fetcher.fetch(state, now)`` never raises for anything a feed can do: every outcome is a
FetchResult with a status, the new validators, and the next poll time (see
adapters.schedule). Rules, after rss2email:

- conditional GET (ETag / Last-Modified), unconditional at least every 12 h; a 304 or
  byte-identical body (same SHA-256) means nothing to parse;
- 301/308 give a new URL to store (only when every hop so far was permanent); 302/303/307
  don't; redirect loops and more than ``max_redirects`` hops fail;
- 410 means gone (alert the referee); 404, 5xx, timeouts and network errors back off
  exponentially but keep being retried; 429/503 honour Retry-After;
- a bot-protection page (403 + HTML, Cloudflare's ``cf-mitigated``) is reported as such;
- the decoded body is capped (10 MiB): streamed and abandoned past the cap;
- every connection goes through the SSRF guard (adapters.ssrf);
- one deadline (``total_timeout``, PBP_FETCH_TOTAL_SECONDS) bounds the whole exchange:
  waiting for a host slot, DNS, connect, headers, body and redirects, at the socket
  (adapters.deadline), so a server dripping bytes cannot hold a fetch past it. ``budget()``
  gives several fetches one such deadline (a blog's poll, a discovery).

Thread-safe: each thread gets its own ``requests.Session`` (requests does not promise that a
Session is thread-safe); its connection pool keeps keep-alive connections per host.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from http.cookiejar import DefaultCookiePolicy
from urllib.parse import urljoin

import requests
import urllib3.exceptions

from adapters import deadline, schedule
from adapters.classify import (
    BodyCap,
    Redirects,
    Trouble,
    classify,
    content_hash,
    deadline_message,
    failed,
    is_challenge,
    start,
    transport_error,
)
from adapters.errors import FeedError, FeedTimeout
from adapters.fetch_types import (
    ACCEPT,
    CHUNK,
    DEFAULT_MAX_BYTES,
    ERROR_BODY_BYTES,
    Closeable,
    Document,
    FeedState,
    FetchConfig,
    FetchResult,
    FetchStatus,
    Kept,
    MiB,
    user_agent,
)
from adapters.ssrf import AddressPolicy, guarded_adapter, split_url

# Names this module has always offered (the types and the classification now live in
# adapters.fetch_types and adapters.classify, shared with adapters.fetch_async).
__all__ = [
    "DEFAULT_MAX_BYTES",
    "Document",
    "FeedState",
    "FetchResult",
    "FetchStatus",
    "Fetcher",
    "MiB",
    "content_hash",
    "is_challenge",
    "user_agent",
]


class Fetcher:
    """HTTP for feeds. Timeouts, body cap and the SSRF policy are parameters (tests shrink
    them; production uses 5 s connect, 15 s read, 30 s in all, 10 MiB): its ``config``,
    which adapters.fetch_async's clients share."""

    def __init__(
        self,
        *,
        instance_url: str = "",
        allow_private: bool = False,
        allowed_networks: tuple[str, ...] = (),
        connect_timeout: float = 5.0,
        read_timeout: float = 15.0,
        total_timeout: float = 30.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_redirects: int = 5,
        interval: timedelta = schedule.DEFAULT_INTERVAL,
        pool_maxsize: int = 4,
        max_per_host: int | None = 2,
    ) -> None:
        self.config = FetchConfig(
            policy=AddressPolicy.build(allow_private, allowed_networks),
            user_agent=user_agent(instance_url),
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            total_timeout=total_timeout,
            max_bytes=max_bytes,
            max_redirects=max_redirects,
            interval=interval,
            max_per_host=max_per_host,
        )
        self.pool_maxsize = pool_maxsize
        self._host_slots: dict[str, threading.BoundedSemaphore] = {}
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()
        # The poll passes' event loop (adapters.fetch_async.event_loop), closed with this.
        self.loop_slot: Kept[Closeable] = Kept()

    @property
    def total_timeout(self) -> float:
        return self.config.total_timeout

    @property
    def max_per_host(self) -> int | None:
        return self.config.max_per_host

    # --- sessions --------------------------------------------------------------------------
    def session(self) -> requests.Session:
        """This thread's session (created on first use)."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.trust_env = False  # no proxies or .netrc from the environment
            session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
            session.headers.update({"User-Agent": self.config.user_agent, "Accept": ACCEPT})
            adapter = guarded_adapter(
                self.config.policy,
                pool_connections=32,
                pool_maxsize=self.pool_maxsize,
                max_retries=0,
            )
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    @contextlib.contextmanager
    def host_slot(self, host: str, url: str = "") -> Iterator[None]:
        """Limits concurrent requests to one host across all threads (politeness: many
        players may share a blog host). Waiting for a slot counts against the deadline."""
        if not self.max_per_host:
            yield
            return
        with self._lock:
            slot = self._host_slots.get(host)
            if slot is None:
                slot = self._host_slots[host] = threading.BoundedSemaphore(self.max_per_host)
        if not slot.acquire(timeout=max(deadline.remaining() or 0, 0)):
            raise FeedTimeout(deadline_message(self.config), url=url or None)
        try:
            yield
        finally:
            slot.release()

    def budget(self) -> contextlib.AbstractContextManager[None]:
        """Every fetch inside ends within ``total_timeout`` of now, all of them together."""
        return self.config.budget()

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = self._sessions, []
        self.loop_slot.close()
        for session in sessions:
            session.close()
        self._local = threading.local()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- HTTP ------------------------------------------------------------------------------
    def request(self, url: str, headers: dict[str, str] | None = None) -> Document:
        """GET *url*, following redirects by hand (each hop SSRF-checked on connect).

        Returns the final answer whatever its status; raises FeedError subclasses for
        transport problems, blocked URLs, redirect loops and bodies over the cap.
        """
        with self.budget():
            return self._request(url, headers)

    def _request(self, url: str, headers: dict[str, str] | None) -> Document:
        current = url
        redirects = Redirects(url, self.config.max_redirects)
        for _ in redirects.hops():
            _, host, _ = split_url(current)  # addresses are checked when connecting
            with self.host_slot(host, current):
                response = self._send(current, headers or {})
                try:
                    location = response.headers.get("location")
                    target = redirects.target(current, response.status_code, location)
                    if target is not None:
                        current = target
                        continue
                    return self._read(url, current, redirects.moved_to, response)
                finally:
                    response.close()
        raise redirects.too_many()

    def post_form(self, url: str, data: dict[str, str]) -> Document:
        """POST a form to *url* (a WebSub hub's subscription request) on the same guarded
        path as a feed: SSRF check on the connected address, per-host limit, one deadline.
        No redirect is followed (a hub answers the request itself) and the answer's body,
        only ever a message, is cut at ERROR_BODY_BYTES."""
        return self._post(url, data=data)

    def post_bytes(self, url: str, body: bytes, headers: dict[str, str]) -> Document:
        """POST `body` to *url* (a chat webhook's JSON, an encrypted Web Push message) on
        the same guarded path as `post_form`: the address is checked on connect, no
        redirect is followed, one deadline, and the answer is cut at ERROR_BODY_BYTES.
        Issue #31: chat and push addresses are typed by people, as feed addresses are."""
        return self._post(url, data=body, headers=headers)

    def _post(
        self, url: str, *, data: dict[str, str] | bytes, headers: dict[str, str] | None = None
    ) -> Document:
        with self.budget():
            _, host, _ = split_url(url)
            with self.host_slot(host, url):
                try:
                    response = self.session().post(
                        url,
                        data=data,
                        headers=headers,
                        stream=True,
                        allow_redirects=False,
                        timeout=(self.config.connect_timeout, self.config.read_timeout),
                    )
                except requests.exceptions.RequestException as exc:
                    raise self._send_error(url, exc) from None
                except urllib3.exceptions.LocationParseError:
                    raise transport_error(Trouble.BAD_URL, url, self.config) from None
                try:
                    headers = {k.lower(): v for k, v in response.headers.items()}
                    cap = BodyCap(self.config, url, limit=ERROR_BODY_BYTES, refuse=False)
                    body = self._read_body(url, response, cap)
                    return Document(url, url, None, response.status_code, headers, body)
                finally:
                    response.close()

    def _send(self, url: str, headers: dict[str, str]) -> requests.Response:
        try:
            return self.session().get(
                url,
                headers=headers,
                stream=True,
                allow_redirects=False,
                timeout=(self.config.connect_timeout, self.config.read_timeout),
            )
        except requests.exceptions.RequestException as exc:
            raise self._send_error(url, exc) from None
        except urllib3.exceptions.LocationParseError:
            raise transport_error(Trouble.BAD_URL, url, self.config) from None

    def _send_error(self, url: str, exc: requests.exceptions.RequestException) -> FeedError:
        """The FeedError for a request that failed before its body."""
        return transport_error(_send_trouble(exc), url, self.config, exc)

    def _read(
        self, url: str, final_url: str, moved_to: str | None, response: requests.Response
    ) -> Document:
        headers = {k.lower(): v for k, v in response.headers.items()}
        headers["content-location"] = urljoin(final_url, headers.get("content-location", ""))
        cap = BodyCap.of(self.config, url, response.status_code, headers)
        body = self._read_body(url, response, cap)
        return Document(url, final_url, moved_to, response.status_code, headers, body)

    def _read_body(self, url: str, response: requests.Response, cap: BodyCap) -> bytes:
        try:
            for chunk in response.iter_content(CHUNK):
                if not cap.add(chunk):
                    break
        except requests.exceptions.ConnectionError as exc:
            stalled = isinstance(
                exc.args[0] if exc.args else None, urllib3.exceptions.ReadTimeoutError
            )
            trouble = Trouble.STALLED if stalled else Trouble.BROKE_OFF
            raise transport_error(_past_deadline(trouble), url, self.config, exc) from None
        except requests.exceptions.RequestException as exc:
            trouble = _past_deadline(Trouble.BROKE_OFF)
            raise transport_error(trouble, url, self.config, exc) from None
        return cap.body()

    # --- polling ---------------------------------------------------------------------------
    def fetch(
        self, state: FeedState, now: datetime, *, interval: timedelta | None = None
    ) -> FetchResult:
        """Poll *state.url* once; *now* is the poll time used for every scheduling decision."""
        interval = interval or self.config.interval
        headers, base, unconditional = start(state, now)
        try:
            document = self.request(state.url, headers)
        except FeedError as exc:
            return failed(base, exc, interval)
        return classify(base, document, unconditional, interval)


def _past_deadline(trouble: Trouble) -> Trouble:
    return Trouble.DEADLINE if deadline.expired() else trouble


def _send_trouble(exc: requests.exceptions.RequestException) -> Trouble:
    """Past the deadline, any failure (a timeout, or a TLS handshake cut short) is the
    deadline's."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        trouble = Trouble.CONNECT_TIMEOUT
    elif isinstance(exc, requests.exceptions.Timeout):
        trouble = Trouble.ANSWER_TIMEOUT
    elif isinstance(exc, requests.exceptions.SSLError):
        trouble = Trouble.TLS
    elif isinstance(exc, requests.exceptions.InvalidURL):
        trouble = Trouble.BAD_URL
    else:
        trouble = Trouble.UNREACHABLE
    return _past_deadline(trouble)
