"""Times as people read them: every shown time carries its zone.

`{{ moment | zoned }}` is UTC; `{{ moment | zoned(campaign.time_zone) }}` is the campaign's
zone ("2026-12-01 19:00 CET"). `<time class="local" datetime=...>` elements are also shown
in the reader's own zone by pbp/static/times.js (no inline script: the CSP forbids it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import Flask


def zoned(moment: datetime | None, zone: str = "UTC") -> str:
    if moment is None:
        return ""
    if moment.tzinfo is None:  # stored as naive UTC
        moment = moment.replace(tzinfo=UTC)
    try:
        tz = ZoneInfo(zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        tz = ZoneInfo("UTC")
    local = moment.astimezone(tz)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname() or zone}"


def iso(moment: datetime | None) -> str:
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


def countdown(deadline: datetime | None, now: datetime) -> str:
    """ "closes in 2 days 3 h", "closes in 14 min", or "" once passed."""
    if deadline is None:
        return ""
    if deadline.tzinfo is None:
        deadline = deadline.replace(tzinfo=UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    minutes = int((deadline - now).total_seconds() // 60)
    if minutes <= 0:
        return ""
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"closes in {days} day{'s' if days > 1 else ''} {hours} h"
    if hours:
        return f"closes in {hours} h {mins} min"
    return f"closes in {mins} min"


def init_app(app: Flask) -> None:
    app.jinja_env.filters["zoned"] = zoned
    app.jinja_env.filters["iso"] = iso
