"""Parse a markup-heavy feed in a child process with CPU and memory limits.

feedparser's cost grows with markup, not bytes: measured on this code, an element with
200,000 attributes (quadratic in xml.sax's attribute lookup), a million unclosed nested
elements (its slow fallback parser) or 10 MiB of entity references each took minutes of CPU
inside the 10 MiB body cap. Counting markup is cheap (``xmlguard.markup_weight``); a feed
light enough is parsed in the poller's own process, as every ordinary feed is; a heavier
one is parsed here, in ``python -m adapters.isolate``, which limits itself
(``resource.setrlimit``) to CPU_SECONDS of processor time and MEMORY_BYTES of address space
before it reads the document. Going over either ends the child, and the feed is refused
with FeedTooComplex, whose message the referee sees on the roster.
"""

from __future__ import annotations

import pickle
import resource
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import cast

from adapters.base import ParsedFeed
from adapters.errors import FeedError, FeedTooComplex

MiB = 1024 * 1024
CPU_SECONDS = 4  # with the child's start-up, a refused feed costs under 5 s
MEMORY_BYTES = 256 * MiB
WALL_SECONDS = 30  # a child starved of CPU on a busy machine still ends
# At most this many children at once: a poll pass's 16 threads meeting 16 heavy feeds must
# not claim 16 × 256 MiB. Heavy feeds are rare; the others wait their turn.
_children = threading.BoundedSemaphore(2)

TOO_COMPLEX = (
    "The feed is too costly to read: {reason}. It was refused; the blog's feed template "
    "needs fixing."
)


def _refusal() -> FeedTooComplex:
    reason = (
        f"parsing it needed more than {CPU_SECONDS} s of processor time or "
        f"{MEMORY_BYTES // MiB} MiB of memory, as it has unusually many tags, attributes, "
        "nesting levels or entity references"
    )
    return FeedTooComplex(TOO_COMPLEX.format(reason=reason))


def parse_in_child(body: bytes, headers: Mapping[str, str], kind: str | None) -> ParsedFeed:
    """``parse_feed(body, headers, kind)`` in a limited child process.

    Returns its ParsedFeed or raises its FeedError (NotAFeed, ...); FeedTooComplex when
    the child ran out of time or memory.
    """
    request = pickle.dumps((body, dict(headers), kind), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        with _children:
            child = subprocess.run(
                [sys.executable, "-m", "adapters.isolate"],
                input=request,
                capture_output=True,
                timeout=WALL_SECONDS,
                check=False,
            )
    except subprocess.TimeoutExpired:  # run() has killed it
        raise _refusal() from None
    if child.returncode != 0 or not child.stdout:
        raise _refusal()
    # our own child's answer: the feed's text only ever travels inside plain data
    ok, value = pickle.loads(child.stdout)  # noqa: S301
    if ok:
        return cast(ParsedFeed, value)  # main() below sends (True, a ParsedFeed)
    raise value


def _limit_self() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def main() -> int:
    from adapters.parse import parse_feed  # loaded before the limits: imports cost memory

    _limit_self()
    body, headers, kind = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 (our parent)
    try:
        answer: tuple[bool, ParsedFeed | FeedError] = (
            True,
            parse_feed(body, headers, kind, isolated=True),
        )
    except FeedError as exc:
        answer = (False, exc)
    sys.stdout.buffer.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


if __name__ == "__main__":
    sys.exit(main())
