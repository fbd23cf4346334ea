"""Times as people read them: every shown time carries its zone.

`{{ moment | zoned }}` is UTC; `{{ moment | zoned(campaign.time_zone) }}` is the campaign's
zone ("2026-12-01 19:00 CET"). `{{ moment | time_tag(campaign.time_zone) }}` is the same in a
`<time datetime=...>` element, the form every page uses. `<time class="local" datetime=...>`
elements are also shown in the reader's own zone by pbp/static/times.js (no inline script:
the CSP forbids it).
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Flask
from markupsafe import Markup

from pbp.templating import in_zone, zoned


def iso(moment: datetime | None) -> str:
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat()


def time_tag(
    moment: datetime | None, zone: str = "UTC", seconds: bool = False, cls: str = ""
) -> Markup:
    """`<time datetime="ISO">2026-12-01 19:00 CET</time>`; nothing for no moment. `cls`: its
    class (microformats2's `dt-published` on entries and notes)."""
    if moment is None:
        return Markup("")
    shown = zoned(moment, zone)
    if seconds:  # a roll's moment: to the second, as its record has it
        local = in_zone(moment, zone)
        shown = f"{local:%Y-%m-%d %H:%M:%S} {local.tzname() or zone}"
    if cls:
        return Markup('<time class="{}" datetime="{}">{}</time>').format(cls, iso(moment), shown)
    return Markup('<time datetime="{}">{}</time>').format(iso(moment), shown)


def long_time(moment: datetime, zone: str = "UTC") -> str:
    """ "Thursday 3 December, 03:42 UTC": a deadline as people say it, in `zone`."""
    local = in_zone(moment, zone)
    return f"{local:%A} {local.day} {local:%B}, {local:%H:%M} {local.tzname() or zone}"


def deadline_tag(moment: datetime | None, zone: str = "UTC") -> Markup:
    """A deadline in the campaign's zone, then the reader's own time (issue #27 item 10):
    "Thursday 3 December, 03:42 UTC (04:42 your time)". pbp/static/times.js writes the
    reader's time, with the day when it is another one, and hides it when it is the same
    time; before it runs the page shows the time in UTC (hidden for a campaign in UTC)."""
    if moment is None:
        return Markup("")
    local, utc = in_zone(moment, zone), in_zone(moment, "UTC")
    in_utc = f"{utc:%H:%M} UTC" if utc.date() == local.date() else long_time(moment)
    same = local.utcoffset() == utc.utcoffset()
    return Markup(
        '<time class="deadline" datetime="{iso}">{shown}</time>'
        '<span class="your-time"{hidden}> (<time datetime="{iso}" data-shown="{mark}">'
        "{in_utc}</time>)</span>"
    ).format(
        iso=iso(moment),
        shown=long_time(moment, zone),
        hidden=Markup(" hidden") if same else "",
        mark=f"{local:%Y-%m-%dT%H:%M}",
        in_utc=in_utc,
    )


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
    app.jinja_env.filters["time_tag"] = time_tag
    app.jinja_env.filters["deadline_tag"] = deadline_tag
