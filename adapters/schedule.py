"""When to poll a feed next: pure functions of the clock value passed in (no hidden ``now``).

Rules (rss2email habits plus politeness):
- a healthy feed is polled every ``interval``;
- a failing feed backs off exponentially (interval × 2^(failures-1)), capped at 6 hours, and
  keeps being retried: a failing feed is never silently abandoned;
- the server's wishes are a lower bound: Retry-After (429/503), Cache-Control max-age, RSS
  ``<ttl>``; but we never wait longer than a day, so a hostile header cannot stop polling;
- every 12 hours one request goes out without ETag/Last-Modified, in case the server's
  validators are stuck.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

DEFAULT_INTERVAL = timedelta(minutes=30)
MAX_BACKOFF = timedelta(hours=6)
MAX_HONOURED_DELAY = timedelta(hours=24)
UNCONDITIONAL_EVERY = timedelta(hours=12)

_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*\"?(\d+)", re.IGNORECASE)


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (UTC)")


def backoff_delay(
    failure_count: int, *, interval: timedelta = DEFAULT_INTERVAL, cap: timedelta = MAX_BACKOFF
) -> timedelta:
    """Delay after *failure_count* consecutive failures: interval, 2×, 4×, … up to *cap*."""
    if failure_count <= 0:
        return interval
    exponent = min(failure_count - 1, 32)  # 2**32 × any interval is far past the cap
    factor: int = 2**exponent
    return min(cap, interval * factor)


def parse_retry_after(value: str | None, now: datetime) -> timedelta | None:
    """Retry-After as a delay: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    _require_aware(now)
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return timedelta(seconds=int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(timedelta(0), when - now)


def parse_max_age(cache_control: str | None) -> timedelta | None:
    """``Cache-Control: max-age=N`` as a delay (None when absent)."""
    if not cache_control:
        return None
    match = _MAX_AGE.search(cache_control)
    return timedelta(seconds=int(match.group(1))) if match else None


def needs_unconditional(
    last_unconditional_at: datetime | None, now: datetime, every: timedelta = UNCONDITIONAL_EVERY
) -> bool:
    """Whether this poll must skip If-None-Match/If-Modified-Since (at least every 12 h)."""
    _require_aware(now)
    return last_unconditional_at is None or now - last_unconditional_at >= every


def next_poll_at(
    now: datetime,
    *,
    interval: timedelta = DEFAULT_INTERVAL,
    failure_count: int = 0,
    retry_after: timedelta | None = None,
    min_interval: timedelta | None = None,
    cap: timedelta = MAX_BACKOFF,
) -> datetime:
    """The next poll time after a poll at *now* that left *failure_count* failures in a row.

    *retry_after* and *min_interval* (Cache-Control max-age, RSS ttl) only ever lengthen the
    delay, and are honoured up to MAX_HONOURED_DELAY.
    """
    _require_aware(now)
    delay = backoff_delay(failure_count, interval=interval, cap=cap)
    for lower_bound in (retry_after, min_interval):
        if lower_bound is not None:
            delay = max(delay, min(lower_bound, MAX_HONOURED_DELAY))
    return now + delay


def apply_ttl(next_poll: datetime, polled_at: datetime, ttl_minutes: int | None) -> datetime:
    """Push *next_poll* back to respect an RSS ``<ttl>`` (known only after parsing)."""
    if not ttl_minutes or ttl_minutes <= 0:
        return next_poll
    earliest = polled_at + min(timedelta(minutes=ttl_minutes), MAX_HONOURED_DELAY)
    return max(next_poll, earliest)
