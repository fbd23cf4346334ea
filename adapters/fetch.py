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
import hashlib
import importlib.metadata
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from http.cookiejar import DefaultCookiePolicy
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

import requests
import urllib3.exceptions

from adapters import deadline, schedule
from adapters.errors import (
    BlockedURL,
    ChallengePage,
    FeedError,
    FeedTimeout,
    FeedTooLarge,
    FeedUnreachable,
    HTTPStatusError,
    RedirectError,
)
from adapters.ssrf import AddressPolicy, guarded_adapter, split_url

if TYPE_CHECKING:
    from adapters.fetch_async import EventLoop  # it imports this module

MiB = 1024 * 1024
DEFAULT_MAX_BYTES = 10 * MiB
ERROR_BODY_BYTES = 64 * 1024
CHUNK = 64 * 1024
ALERT_AFTER_FAILURES = 3
ACCEPT = (
    "application/atom+xml, application/rss+xml, application/feed+json;q=0.9, "
    "application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, text/html;q=0.5, */*;q=0.1"
)
PERMANENT = (301, 308)
REDIRECTS = (301, 302, 303, 307, 308)
_CHALLENGE_MARKERS = (b"challenge-platform", b"cf-chl", b"just a moment", b"cf_chl_opt")


def _version() -> str:
    try:
        return importlib.metadata.version("pbp")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def user_agent(instance_url: str = "") -> str:
    """``pbp/0.1.0 (+https://games.example; play-by-post feed reader)``: who is asking."""
    where = f"+{instance_url}; " if instance_url else ""
    return f"pbp/{_version()} ({where}play-by-post feed reader)"


class FetchStatus(StrEnum):
    OK = "ok"  # new bytes in ``body``: parse them
    NOT_MODIFIED = "not_modified"  # 304: nothing to parse or write
    UNCHANGED = "unchanged_bytes"  # same hash as last time: nothing to parse
    GONE = "gone"  # 410: mark the blog gone, alert the referee
    FAILED = "failed"  # 404, 5xx, timeout, network, bad redirect: back off and retry
    CHALLENGE = "challenge_page"  # bot protection page instead of the feed
    TOO_LARGE = "too_large"  # body over the cap
    BLOCKED = "blocked_ssrf"  # URL refused by the SSRF rules


FAILURES = frozenset(
    {
        FetchStatus.GONE,
        FetchStatus.FAILED,
        FetchStatus.CHALLENGE,
        FetchStatus.TOO_LARGE,
        FetchStatus.BLOCKED,
    }
)


@dataclass(frozen=True, slots=True)
class FeedState:
    """What ingest stores per feed between polls."""

    url: str
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None
    last_unconditional_at: datetime | None = None
    failure_count: int = 0


@dataclass(frozen=True, slots=True)
class Document:
    """One HTTP answer after redirects, body already read (and capped)."""

    url: str
    final_url: str
    moved_to: str | None
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class FetchResult:
    """Outcome of one poll. Store ``next_state()``; parse ``body`` when ``status`` is OK.

    ``moved_to`` is set whenever the feed permanently redirected (whatever the status): the
    stored URL should become it. ``reason`` is a message for the referee on failures.
    """

    status: FetchStatus
    url: str
    fetched_at: datetime
    next_poll_at: datetime
    failure_count: int
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None
    last_unconditional_at: datetime | None = None
    moved_to: str | None = None
    final_url: str | None = None
    http_status: int | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    retry_after: timedelta | None = None
    reason: str | None = None
    error: FeedError | None = None

    @property
    def failed(self) -> bool:
        return self.status in FAILURES

    @property
    def alert(self) -> bool:
        """Whether the referee should be told (gone, blocked, challenge, too large, or a
        plain failure that has now happened ALERT_AFTER_FAILURES times in a row)."""
        if self.status == FetchStatus.FAILED:
            return self.failure_count >= ALERT_AFTER_FAILURES
        return self.failed

    def next_state(self) -> FeedState:
        return FeedState(
            url=self.moved_to or self.url,
            etag=self.etag,
            last_modified=self.last_modified,
            content_hash=self.content_hash,
            last_unconditional_at=self.last_unconditional_at,
            failure_count=self.failure_count,
        )


def is_challenge(status: int, headers: dict[str, str], body_start: bytes) -> bool:
    """A bot-protection interstitial rather than an error or a feed."""
    if headers.get("cf-mitigated", "").lower() == "challenge":
        return True
    if "html" not in headers.get("content-type", "").lower():
        return False
    if status == 403:
        return True
    lowered = body_start[:ERROR_BODY_BYTES].lower()
    return status in (429, 503) and any(marker in lowered for marker in _CHALLENGE_MARKERS)


def content_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class Fetcher:
    """HTTP for feeds. Timeouts, body cap and the SSRF policy are parameters (tests shrink
    them; production uses 5 s connect, 15 s read, 30 s in all, 10 MiB)."""

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
        self.policy = AddressPolicy.build(allow_private, allowed_networks)
        self.user_agent = user_agent(instance_url)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout = total_timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.interval = interval
        self.pool_maxsize = pool_maxsize
        self.max_per_host = max_per_host
        self._host_slots: dict[str, threading.BoundedSemaphore] = {}
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()
        # adapters.fetch_async.event_loop: the poll passes' loop
        self._event_loop: EventLoop | None = None

    # --- sessions --------------------------------------------------------------------------
    def session(self) -> requests.Session:
        """This thread's session (created on first use)."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.trust_env = False  # no proxies or .netrc from the environment
            session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
            session.headers.update({"User-Agent": self.user_agent, "Accept": ACCEPT})
            adapter = guarded_adapter(
                self.policy, pool_connections=32, pool_maxsize=self.pool_maxsize, max_retries=0
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
            raise FeedTimeout(self._deadline_message(), url=url or None)
        try:
            yield
        finally:
            slot.release()

    def budget(self) -> contextlib.AbstractContextManager[None]:
        """Every fetch inside ends within ``total_timeout`` of now, all of them together."""
        return deadline.deadline(self.total_timeout)

    def _deadline_message(self) -> str:
        return f"The feed took longer than {self.total_timeout:g} s to download."

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = self._sessions, []
            loop, self._event_loop = self._event_loop, None
        if loop is not None:
            loop.close()
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
        seen = {url}
        moved_to: str | None = None
        all_permanent = True
        for _ in range(self.max_redirects + 1):
            _, host, _ = split_url(current)  # addresses are checked when connecting
            with self.host_slot(host, current):
                response = self._send(current, headers or {})
                try:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECTS and location:
                        target = urljoin(current, location.strip())
                        if response.status_code in PERMANENT and all_permanent:
                            moved_to = target
                        else:
                            all_permanent = False
                        if target in seen:
                            raise RedirectError(
                                f"The feed address redirects in a loop ({current} → {target}).",
                                url=url,
                            )
                        seen.add(target)
                        current = target
                        continue
                    return self._read(url, current, moved_to, response)
                finally:
                    response.close()
        raise RedirectError(f"The feed address redirects more than {self.max_redirects} times.")

    def post_form(self, url: str, data: dict[str, str]) -> Document:
        """POST a form to *url* (a WebSub hub's subscription request) on the same guarded
        path as a feed: SSRF check on the connected address, per-host limit, one deadline.
        No redirect is followed (a hub answers the request itself) and the answer's body,
        only ever a message, is cut at ERROR_BODY_BYTES."""
        with self.budget():
            _, host, _ = split_url(url)
            with self.host_slot(host, url):
                try:
                    response = self.session().post(
                        url,
                        data=data,
                        stream=True,
                        allow_redirects=False,
                        timeout=(self.connect_timeout, self.read_timeout),
                    )
                except requests.exceptions.RequestException as exc:
                    raise self._send_error(url, exc) from None
                except urllib3.exceptions.LocationParseError:
                    raise BlockedURL(f"{url!r} is not a valid web address.", url=url) from None
                try:
                    headers = {k.lower(): v for k, v in response.headers.items()}
                    body = self._read_body(url, response, ERROR_BODY_BYTES, truncate=True)
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
                timeout=(self.connect_timeout, self.read_timeout),
            )
        except requests.exceptions.RequestException as exc:
            raise self._send_error(url, exc) from None
        except urllib3.exceptions.LocationParseError:
            raise BlockedURL(f"{url!r} is not a valid web address.", url=url) from None

    def _send_error(self, url: str, exc: requests.exceptions.RequestException) -> FeedError:
        """The FeedError for a request that failed before its body. Past the deadline, any
        failure (a timeout, or a TLS handshake cut short) is the deadline's."""
        if deadline.expired():
            return FeedTimeout(self._deadline_message(), url=url)
        if isinstance(exc, requests.exceptions.ConnectTimeout):
            wait = self.connect_timeout
            return FeedTimeout(
                f"The server did not accept a connection within {wait:g} s.", url=url
            )
        if isinstance(exc, requests.exceptions.Timeout):
            return FeedTimeout(
                f"The server did not answer within {self.read_timeout:g} s.", url=url
            )
        if isinstance(exc, requests.exceptions.SSLError):
            return FeedUnreachable(f"Secure connection failed: {exc}", url=url)
        if isinstance(exc, requests.exceptions.InvalidURL):
            return BlockedURL(f"{url!r} is not a valid web address.", url=url)
        return FeedUnreachable(f"Could not connect to the server: {exc}", url=url)

    def _read(
        self, url: str, final_url: str, moved_to: str | None, response: requests.Response
    ) -> Document:
        headers = {k.lower(): v for k, v in response.headers.items()}
        headers["content-location"] = urljoin(final_url, headers.get("content-location", ""))
        ok = 200 <= response.status_code < 300
        limit = self.max_bytes if ok else ERROR_BODY_BYTES
        declared = headers.get("content-length", "")
        plain = "content-encoding" not in headers
        if ok and plain and declared.isdigit() and int(declared) > limit:
            raise FeedTooLarge(self._too_large_message(), url=url)
        body = self._read_body(url, response, limit, truncate=not ok)
        return Document(url, final_url, moved_to, response.status_code, headers, body)

    def _too_large_message(self) -> str:
        return f"The feed is larger than {self.max_bytes / MiB:.3g} MiB; refused."

    def _read_body(
        self, url: str, response: requests.Response, limit: int, *, truncate: bool
    ) -> bytes:
        chunks: list[bytes] = []
        total = 0
        try:
            for chunk in response.iter_content(CHUNK):
                total += len(chunk)
                if total > limit:
                    if truncate:
                        chunks.append(chunk[: limit - (total - len(chunk))])
                        break
                    raise FeedTooLarge(self._too_large_message(), url=url)
                chunks.append(chunk)
        except requests.exceptions.ConnectionError as exc:
            if deadline.expired():
                raise FeedTimeout(self._deadline_message(), url=url) from None
            if isinstance(exc.args[0] if exc.args else None, urllib3.exceptions.ReadTimeoutError):
                raise FeedTimeout(
                    f"The server stopped sending for {self.read_timeout:g} s.", url=url
                ) from None
            raise FeedUnreachable(f"The download broke off: {exc}", url=url) from None
        except requests.exceptions.RequestException as exc:
            if deadline.expired():
                raise FeedTimeout(self._deadline_message(), url=url) from None
            raise FeedUnreachable(f"The download broke off: {exc}", url=url) from None
        return b"".join(chunks)

    # --- polling ---------------------------------------------------------------------------
    def fetch(
        self, state: FeedState, now: datetime, *, interval: timedelta | None = None
    ) -> FetchResult:
        """Poll *state.url* once; *now* is the poll time used for every scheduling decision."""
        interval = interval or self.interval
        headers, base, unconditional = self.start(state, now)
        try:
            document = self.request(state.url, headers)
        except FeedError as exc:
            return self.failed(base, exc, interval)
        return self.classify(base, document, unconditional, interval)

    def start(self, state: FeedState, now: datetime) -> tuple[dict[str, str], FetchResult, bool]:
        """(request headers, the result if the request fails, whether it is unconditional):
        what a poll decides before its request (shared with adapters.fetch_async)."""
        unconditional = schedule.needs_unconditional(state.last_unconditional_at, now)
        headers: dict[str, str] = {}
        if not unconditional:
            if state.etag:
                headers["If-None-Match"] = state.etag
            if state.last_modified:
                headers["If-Modified-Since"] = state.last_modified
        base = FetchResult(
            status=FetchStatus.FAILED,
            url=state.url,
            fetched_at=now,
            next_poll_at=now,
            failure_count=state.failure_count,
            etag=state.etag,
            last_modified=state.last_modified,
            content_hash=state.content_hash,
            last_unconditional_at=state.last_unconditional_at,
        )
        return headers, base, unconditional

    def failed(self, base: FetchResult, exc: FeedError, interval: timedelta) -> FetchResult:
        """The result of a request that raised *exc*."""
        status = {
            BlockedURL: FetchStatus.BLOCKED,
            FeedTooLarge: FetchStatus.TOO_LARGE,
        }.get(type(exc), FetchStatus.FAILED)
        return self._failure(base, status, exc, interval)

    def classify(
        self, base: FetchResult, doc: Document, unconditional: bool, interval: timedelta
    ) -> FetchResult:
        now = base.fetched_at
        answer: dict[str, Any] = {
            "moved_to": doc.moved_to,
            "final_url": doc.final_url,
            "http_status": doc.status,
        }
        if doc.status == 304 or (200 <= doc.status < 300 and doc.body.strip()):
            # One copy of `base` for a success (not one per field group): a poll pass
            # classifies thousands of answers, most of them 304s.
            max_age = schedule.parse_max_age(doc.headers.get("cache-control"))
            answer.update(
                failure_count=0,
                next_poll_at=schedule.next_poll_at(now, interval=interval, min_interval=max_age),
                last_unconditional_at=now if unconditional else base.last_unconditional_at,
                headers=doc.headers,
            )
            if doc.status == 304:
                return replace(
                    base,
                    status=FetchStatus.NOT_MODIFIED,
                    etag=doc.headers.get("etag") or base.etag,
                    last_modified=doc.headers.get("last-modified") or base.last_modified,
                    **answer,
                )
            digest = content_hash(doc.body)
            answer.update(
                etag=doc.headers.get("etag"),
                last_modified=doc.headers.get("last-modified"),
                content_hash=digest,
            )
            if digest == base.content_hash:
                return replace(base, status=FetchStatus.UNCHANGED, **answer)
            return replace(base, status=FetchStatus.OK, body=doc.body, **answer)
        base = replace(base, **answer)
        retry_after = schedule.parse_retry_after(doc.headers.get("retry-after"), now)
        if 200 <= doc.status < 300:
            error = FeedError("The feed address returned an empty response.", url=base.url)
            return self._failure(base, FetchStatus.FAILED, error, interval)
        if doc.status == 410:
            error = HTTPStatusError(
                "The feed is gone (HTTP 410): the blog was deleted or moved without a redirect.",
                status=410,
                url=base.url,
            )
            return self._failure(base, FetchStatus.GONE, error, interval)
        if is_challenge(doc.status, doc.headers, doc.body):
            error = ChallengePage(
                f"The blog's host answered with a bot-check page (HTTP {doc.status}) instead of "
                "the feed. The player should allow feed readers (e.g. Cloudflare 'Bot Fight "
                "Mode' off for the feed URL) or use another feed address.",
                url=base.url,
            )
            return self._failure(base, FetchStatus.CHALLENGE, error, interval, retry_after)
        error = HTTPStatusError(
            f"The server answered HTTP {doc.status}; retrying with back-off.",
            status=doc.status,
            url=base.url,
        )
        return self._failure(base, FetchStatus.FAILED, error, interval, retry_after)

    def _failure(
        self,
        base: FetchResult,
        status: FetchStatus,
        error: FeedError,
        interval: timedelta,
        retry_after: timedelta | None = None,
    ) -> FetchResult:
        failures = base.failure_count + 1
        return replace(
            base,
            status=status,
            failure_count=failures,
            next_poll_at=schedule.next_poll_at(
                base.fetched_at, interval=interval, failure_count=failures, retry_after=retry_after
            ),
            retry_after=retry_after,
            reason=error.message,
            error=error,
        )
