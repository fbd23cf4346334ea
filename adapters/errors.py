"""Errors a feed can cause, each with a message a player or the referee can act on.

The fetchers turn these into a :class:`adapters.fetch_types.FetchResult` (they never raise them
at the scheduler); ``parse_feed`` and ``check_url`` raise them so the web layer can show the
message.
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


# What kind of error a stored message is. Blogs keep only the message of their last failed
# read (pbp's `blog.last_error`), not its class; the messages above are written here in
# adapters, so the phrases that tell them apart live here too. Order matters: a blocked
# address may show up inside a connection error's text.
_KIND_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        BlockedURL.reason,
        (
            "addresses are not allowed",
            "Connected to a",
            "is not a valid web address",
            "feed addresses are allowed",
            "has no host name",
            "proxies are not",
        ),
    ),
    ("gone", ("(HTTP 410)",)),
    (ChallengePage.reason, ("bot-check page",)),
    (FeedTooLarge.reason, ("The feed is larger than",)),
    (FeedTooComplex.reason, ("too costly to read",)),
    (
        FeedTimeout.reason,
        (
            "did not accept a connection within",
            "did not answer within",
            "stopped sending for",
            "took longer than",
        ),
    ),
    (RedirectError.reason, ("redirects in a loop", "redirects more than")),
    ("empty", ("returned an empty",)),
    (HTTPStatusError.reason, ("answered HTTP",)),
    (
        NotAFeed.reason,
        (
            "not a feed",
            "not an RSS",
            "does not serve an RSS",
            "not a JSON Feed",
        ),
    ),
    (
        FeedUnreachable.reason,
        ("Could not connect to the server", "Secure connection failed", "The download broke off"),
    ),
)


def kind_of_message(message: str | None) -> str | None:
    """The `reason` code of the FeedError a stored message came from ("gone" for a 410),
    or None when it is none of them (then it is pbp's own failure to store the feed)."""
    if not message:
        return None
    for kind, phrases in _KIND_PHRASES:
        if any(phrase in message for phrase in phrases):
            return kind
    return None
