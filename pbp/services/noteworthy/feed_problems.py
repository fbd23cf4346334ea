"""A blog's failed read in plain words for the referee and the player, the library's own
text kept as the details (shown behind a toggle).

The blog row keeps only the last error's message (`Blog.last_error`) and whether the feed
is gone; the kind of error is read back from the message by `adapters.errors`, which wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapters.errors import kind_of_message
from pbp.models import Blog

PLAIN = {
    "blocked_url": "pbp may not read this address: it is not a public web address.",
    "gone": "The blog is gone: its server says the feed was deleted or moved.",
    "challenge_page": "The blog's host shows a bot check instead of the feed.",
    "too_large": "The feed is larger than pbp accepts ({size}).",
    "too_complex": "The feed is too costly to read: the blog's feed template needs fixing.",
    "timeout": "The blog's server did not answer in time.",
    "redirect": "The feed address sends pbp round in circles (too many redirects).",
    "empty": "The feed address answered with nothing.",
    "not_a_feed": "The address is not a feed.",
    "unreachable": "The blog's server did not answer.",
    "http_status": "The blog's server answered with an error (HTTP {status}).",
    "not_found": "The blog's server has nothing at this address (HTTP 404).",
    "internal": "pbp read the feed but could not store it; it tries again later.",
}

_STATUS = re.compile(r"HTTP (\d{3})")
_SIZE = re.compile(r"larger than ([\d.]+ ?[KMG]i?B)")


@dataclass(frozen=True)
class FeedProblem:
    kind: str
    plain: str  # one sentence a referee understands
    details: str  # the library's message, as stored


def feed_problem(blog: Blog) -> FeedProblem | None:
    """What is wrong with this blog's feed, or None when its last read worked."""
    if not blog.last_error and not blog.gone:
        return None
    details = blog.last_error or ""
    kind = "gone" if blog.gone else (kind_of_message(details) or "internal")
    status = _STATUS.search(details)
    if kind == "http_status" and status and status.group(1) == "404":
        kind = "not_found"
    size = _SIZE.search(details)
    plain = PLAIN[kind].format(
        status=status.group(1) if status else "?",
        size=size.group(1) if size else "the size limit",
    )
    return FeedProblem(kind, plain, details)
