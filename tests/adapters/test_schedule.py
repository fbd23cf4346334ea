"""adapters.schedule: polling math with fixed clocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adapters import schedule

NOW = datetime(2024, 4, 3, 12, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("failures", "minutes"),
    [(0, 30), (1, 30), (2, 60), (3, 120), (4, 240), (5, 360), (6, 360), (50, 360), (10**6, 360)],
)
def test_backoff_doubles_and_caps_at_six_hours(failures: int, minutes: int) -> None:
    assert schedule.backoff_delay(failures, interval=30 * MIN) == minutes * MIN


def test_healthy_feed_polls_at_the_interval() -> None:
    assert schedule.next_poll_at(NOW, interval=30 * MIN) == NOW + 30 * MIN


def test_failing_feed_is_retried_forever_within_six_hours() -> None:
    for failures in (1, 10, 1000):
        delay = schedule.next_poll_at(NOW, failure_count=failures) - NOW
        assert timedelta(0) < delay <= timedelta(hours=6)


def test_retry_after_and_max_age_are_lower_bounds() -> None:
    assert schedule.next_poll_at(NOW, retry_after=2 * 60 * MIN) == NOW + timedelta(hours=2)
    assert schedule.next_poll_at(NOW, retry_after=MIN) == NOW + 30 * MIN
    assert schedule.next_poll_at(NOW, min_interval=90 * MIN) == NOW + 90 * MIN
    assert schedule.next_poll_at(NOW, failure_count=5, retry_after=MIN) == NOW + 360 * MIN


def test_hostile_delays_are_capped_at_a_day() -> None:
    far = timedelta(days=365)
    assert schedule.next_poll_at(NOW, retry_after=far) == NOW + timedelta(hours=24)
    assert schedule.next_poll_at(NOW, min_interval=far) == NOW + timedelta(hours=24)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", timedelta(seconds=120)),
        (" 0 ", timedelta(0)),
        ("Wed, 03 Apr 2024 13:30:00 GMT", timedelta(minutes=90)),
        ("Wed, 03 Apr 2024 11:00:00 GMT", timedelta(0)),  # in the past
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(value: str | None, expected: timedelta | None) -> None:
    assert schedule.parse_retry_after(value, NOW) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("public, max-age=3600", timedelta(hours=1)),
        ('max-age="60"', timedelta(minutes=1)),
        ("no-cache", None),
        ("s-maxage=50", None),
        (None, None),
    ],
)
def test_parse_max_age(value: str | None, expected: timedelta | None) -> None:
    assert schedule.parse_max_age(value) == expected


def test_unconditional_get_at_least_every_twelve_hours() -> None:
    assert schedule.needs_unconditional(None, NOW)
    assert not schedule.needs_unconditional(NOW - timedelta(hours=11, minutes=59), NOW)
    assert schedule.needs_unconditional(NOW - timedelta(hours=12), NOW)


def test_ttl_pushes_the_next_poll_back() -> None:
    soon = NOW + 30 * MIN
    assert schedule.apply_ttl(soon, NOW, 60) == NOW + 60 * MIN
    assert schedule.apply_ttl(soon, NOW, 10) == soon
    assert schedule.apply_ttl(soon, NOW, None) == soon
    assert schedule.apply_ttl(soon, NOW, 10**9) == NOW + timedelta(hours=24)


def test_naive_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        schedule.next_poll_at(datetime(2024, 4, 3, 12, 0))
