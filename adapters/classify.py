"""What an HTTP exchange means for a feed: one classification for both clients.

adapters.fetch (requests) and adapters.fetch_async (aiohttp) each send the request their own
way, then hand what happened to this module: the request headers a poll sends (``start``), the
FetchResult of an answer (``classify``) or of an exchange that failed (``failed``), the error
for each way a transport can fail (``transport_error``: the messages a referee reads, the same
whichever client met it), the redirect rules (``Redirects``) and the body cap (``BodyCap``).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any
from urllib.parse import urljoin

from adapters import schedule
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
from adapters.fetch_types import (
    ERROR_BODY_BYTES,
    Document,
    FeedState,
    FetchConfig,
    FetchResult,
    FetchStatus,
    MiB,
)

PERMANENT = (301, 308)
REDIRECTS = (301, 302, 303, 307, 308)
_CHALLENGE_MARKERS = (b"challenge-platform", b"cf-chl", b"just a moment", b"cf_chl_opt")


class Trouble(Enum):
    """How an exchange broke before a whole answer arrived; each client tells which from its
    own library's exceptions."""

    DEADLINE = "deadline"  # the exchange's total_timeout ran out
    CONNECT_TIMEOUT = "connect_timeout"
    ANSWER_TIMEOUT = "answer_timeout"  # no headers within read_timeout
    STALLED = "stalled"  # the body stopped coming for read_timeout
    TLS = "tls"
    BAD_URL = "bad_url"
    BROKE_OFF = "broke_off"  # the connection dropped during the body
    UNREACHABLE = "unreachable"


def transport_error(
    trouble: Trouble, url: str, config: FetchConfig, cause: object = None
) -> FeedError:
    """The FeedError, with its message for the referee, for *trouble* fetching *url*."""
    if trouble is Trouble.DEADLINE:
        return FeedTimeout(deadline_message(config), url=url)
    if trouble is Trouble.CONNECT_TIMEOUT:
        wait = config.connect_timeout
        return FeedTimeout(f"The server did not accept a connection within {wait:g} s.", url=url)
    if trouble is Trouble.ANSWER_TIMEOUT:
        return FeedTimeout(f"The server did not answer within {config.read_timeout:g} s.", url=url)
    if trouble is Trouble.STALLED:
        wait = config.read_timeout
        return FeedTimeout(f"The server stopped sending for {wait:g} s.", url=url)
    if trouble is Trouble.TLS:
        return FeedUnreachable(f"Secure connection failed: {cause}", url=url)
    if trouble is Trouble.BAD_URL:
        return BlockedURL(f"{url!r} is not a valid web address.", url=url)
    if trouble is Trouble.BROKE_OFF:
        return FeedUnreachable(f"The download broke off: {cause}", url=url)
    return FeedUnreachable(f"Could not connect to the server: {cause}", url=url)


def deadline_message(config: FetchConfig) -> str:
    return f"The feed took longer than {config.total_timeout:g} s to download."


def too_large(config: FetchConfig, url: str) -> FeedTooLarge:
    return FeedTooLarge(
        f"The feed is larger than {config.max_bytes / MiB:.3g} MiB; refused.", url=url
    )


class Redirects:
    """Redirects followed by hand: 301/308 give a new URL to store only while every hop so far
    was permanent; a loop, or more than ``max_redirects`` hops, fails."""

    def __init__(self, url: str, max_redirects: int) -> None:
        self.url, self.max_redirects = url, max_redirects
        self.seen = {url}
        self.moved_to: str | None = None
        self.all_permanent = True

    def hops(self) -> range:
        return range(self.max_redirects + 1)

    def target(self, current: str, status: int, location: str | None) -> str | None:
        """The next URL if this answer is a redirect, else None (the answer is the feed's)."""
        if status not in REDIRECTS or not location:
            return None
        target = urljoin(current, location.strip())
        if status in PERMANENT and self.all_permanent:
            self.moved_to = target
        else:
            self.all_permanent = False
        if target in self.seen:
            raise RedirectError(
                f"The feed address redirects in a loop ({current} → {target}).", url=self.url
            )
        self.seen.add(target)
        return target

    def too_many(self) -> RedirectError:
        return RedirectError(f"The feed address redirects more than {self.max_redirects} times.")


class BodyCap:
    """A body read chunk by chunk, cut at *limit*: past it, refused (FeedTooLarge) if
    *refuse*, else kept up to it. ``of`` gives an answer's cap."""

    def __init__(self, config: FetchConfig, url: str, *, limit: int, refuse: bool) -> None:
        self.config, self.url = config, url
        self.limit, self.refuse = limit, refuse
        self.chunks: list[bytes] = []
        self.total = 0

    @classmethod
    def of(cls, config: FetchConfig, url: str, status: int, headers: dict[str, str]) -> BodyCap:
        """A success's body is capped at ``max_bytes``, refused past it (also up front, when
        its declared length says so); an error page's is only cut at ERROR_BODY_BYTES, as
        its message is all that is read of it."""
        ok = 200 <= status < 300
        limit = config.max_bytes if ok else ERROR_BODY_BYTES
        declared = headers.get("content-length", "")
        plain = "content-encoding" not in headers
        if ok and plain and declared.isdigit() and int(declared) > limit:
            raise too_large(config, url)
        return cls(config, url, limit=limit, refuse=ok)

    def add(self, chunk: bytes) -> bool:
        """Keep *chunk*; False once the body is full (stop reading)."""
        self.total += len(chunk)
        if self.total > self.limit:
            if self.refuse:
                raise too_large(self.config, self.url)
            self.chunks.append(chunk[: self.limit - (self.total - len(chunk))])
            return False
        self.chunks.append(chunk)
        return True

    def body(self) -> bytes:
        return b"".join(self.chunks)


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


def start(state: FeedState, now: datetime) -> tuple[dict[str, str], FetchResult, bool]:
    """(request headers, the result if the request fails, whether it is unconditional):
    what a poll decides before its request."""
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


def failed(base: FetchResult, exc: FeedError, interval: timedelta) -> FetchResult:
    """The result of a request that raised *exc*."""
    status = {
        BlockedURL: FetchStatus.BLOCKED,
        FeedTooLarge: FetchStatus.TOO_LARGE,
    }.get(type(exc), FetchStatus.FAILED)
    return _failure(base, status, exc, interval)


def classify(
    base: FetchResult, doc: Document, unconditional: bool, interval: timedelta
) -> FetchResult:
    """The result of an answer: 304, same bytes, new bytes, or which failure."""
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
        return _failure(base, FetchStatus.FAILED, error, interval)
    if doc.status == 410:
        error = HTTPStatusError(
            "The feed is gone (HTTP 410): the blog was deleted or moved without a redirect.",
            status=410,
            url=base.url,
        )
        return _failure(base, FetchStatus.GONE, error, interval)
    if is_challenge(doc.status, doc.headers, doc.body):
        error = ChallengePage(
            f"The blog's host answered with a bot-check page (HTTP {doc.status}) instead of "
            "the feed. The player should allow feed readers (e.g. Cloudflare 'Bot Fight "
            "Mode' off for the feed URL) or use another feed address.",
            url=base.url,
        )
        return _failure(base, FetchStatus.CHALLENGE, error, interval, retry_after)
    error = HTTPStatusError(
        f"The server answered HTTP {doc.status}; retrying with back-off.",
        status=doc.status,
        url=base.url,
    )
    return _failure(base, FetchStatus.FAILED, error, interval, retry_after)


def _failure(
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
