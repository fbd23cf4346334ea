"""Errors a feed can cause, each with a message a player or the referee can act on.

The fetcher turns these into a :class:`adapters.fetch.FetchResult` (it never raises them at the
scheduler); ``parse_feed`` and ``check_url`` raise them so the web layer can show the message.
"""

from __future__ import annotations


class FeedError(Exception):
    """Base class. ``reason`` is a short stable code for logs, tests and templates."""

    reason = "feed_error"

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.url = url


class BlockedURL(FeedError):
    """The address is not allowed: not http(s), or it points into a private network (SSRF)."""

    reason = "blocked_url"


class FeedTooLarge(FeedError):
    """The response body is bigger than the cap (10 MiB by default, after decompression)."""

    reason = "too_large"


class FeedTooComplex(FeedError):
    """Parsing the feed would cost too much processor time or memory (adapters.isolate)."""

    reason = "too_complex"


class FeedTimeout(FeedError):
    """The server did not connect or answer in time."""

    reason = "timeout"


class FeedUnreachable(FeedError):
    """DNS failure, refused connection, TLS failure, broken transfer."""

    reason = "unreachable"


class RedirectError(FeedError):
    """A redirect loop, too many redirects, or a redirect to an unusable address."""

    reason = "redirect"


class HTTPStatusError(FeedError):
    """The server answered with an error status (404, 500, ...)."""

    reason = "http_status"

    def __init__(self, message: str, *, status: int, url: str | None = None) -> None:
        super().__init__(message, url=url)
        self.status = status


class ChallengePage(FeedError):
    """A bot-protection page (e.g. Cloudflare's) was served instead of the feed."""

    reason = "challenge_page"


class NotAFeed(FeedError):
    """The bytes are not RSS, Atom or JSON Feed (typically an HTML page)."""

    reason = "not_a_feed"


class UnknownDialect(FeedError):
    """The referee asked for a dialect name that is not in ``adapters.ADAPTERS``."""

    reason = "unknown_dialect"
