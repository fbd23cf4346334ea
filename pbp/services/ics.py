"""iCalendar (RFC 5545) text for a calendar subscription, written with the `icalendar` package.

What Google Calendar and Outlook need of a subscribed feed: a VCALENDAR with PRODID,
VERSION 2.0, METHOD:PUBLISH and a name (X-WR-CALNAME); how often to read it again
(REFRESH-INTERVAL, RFC 7986, and Outlook's X-PUBLISHED-TTL: an hour); and per event a UID
that never changes, DTSTAMP, DTSTART and DTEND in UTC ("Z": no time zone to get wrong),
SEQUENCE (raised when the event's time moves, so the app moves it rather than keeping
both), SUMMARY, and the event's page as URL and at the end of DESCRIPTION (Google shows
no URL property). Events are TRANSPARENT: a deadline does not make anyone busy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from icalendar import Calendar, Event, vDuration

PRODID = "-//pbp//deadlines//EN"
REFRESH = timedelta(hours=1)
# A deadline is a moment; calendar apps draw an event with no length badly or not at all.
LENGTH = timedelta(minutes=15)


@dataclass(frozen=True)
class Item:
    """One event of the feed: only what the calendar shows."""

    uid: str
    start: datetime
    sequence: int
    summary: str
    description: str
    url: str


def calendar(items: Iterable[Item], *, name: str, now: datetime) -> bytes:
    """The feed's text (CRLF lines, folded at 75 octets, as RFC 5545 wants)."""
    feed = Calendar()
    feed.add("prodid", PRODID)
    feed.add("version", "2.0")
    feed.add("calscale", "GREGORIAN")
    feed.add("method", "PUBLISH")
    feed.add("x-wr-calname", name)
    # Typed by hand: icalendar 6.0 knows no REFRESH-INTERVAL and would write 1:00:00.
    feed.add("refresh-interval", vDuration(REFRESH), parameters={"VALUE": "DURATION"})
    feed.add("x-published-ttl", vDuration(REFRESH))
    stamp = _utc(now)
    for item in items:
        event = Event()
        event.add("uid", item.uid)
        event.add("dtstamp", stamp)
        event.add("dtstart", _utc(item.start))
        event.add("dtend", _utc(item.start) + LENGTH)
        event.add("sequence", item.sequence)
        event.add("summary", item.summary)
        event.add("description", f"{item.description}\n{item.url}")
        event.add("url", item.url)
        event.add("transp", "TRANSPARENT")
        feed.add_component(event)
    return feed.to_ical()


def _utc(moment: datetime) -> datetime:
    """UTC, whole seconds (a naive time is UTC: how pbp's database keeps times)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)
