"""Your secret calendar address (issue #30 item 4), the API twin of /account/calendar.

Making one replaces the old address, which stops working; revoking deletes it. The feed
itself (`GET /calendar/<secret>.ics`) is for calendar apps and needs no token.
"""

from __future__ import annotations

from flask import current_app

from pbp.api import schemas as s
from pbp.api.registry import Call, operation
from pbp.models import CalendarFeed
from pbp.services.accounts import calendar as calendars


def _out(feed: CalendarFeed | None) -> s.CalendarOut:
    if feed is None:
        return s.CalendarOut(url=None, created_at=None)
    url = calendars.address_url(feed, base_url=current_app.config["PBP_BASE_URL"])
    return s.CalendarOut(url=url, created_at=feed.created_at)


@operation("GET", "/me/calendar", tag="account", access="user", response=s.CalendarOut)
def get_calendar(call: Call) -> s.CalendarOut:
    """Your secret calendar address, if you made one."""
    return _out(calendars.calendar_address(session=call.session, user=call.account))


@operation("POST", "/me/calendar", tag="account", access="user", response=s.CalendarOut, status=201)
def make_calendar(call: Call) -> s.CalendarOut:
    """Make a new secret calendar address; the old one, if any, stops working.

    It lists the deadline of every turn of your Noteworthy campaigns, and when a scheduled
    campaign opens its next turn: the public facts of the turn pages, never an event's
    text."""
    return _out(calendars.make_address(session=call.session, user=call.account, now=call.now))


@operation("DELETE", "/me/calendar", tag="account", access="user", response=s.CalendarOut)
def revoke_calendar(call: Call) -> s.CalendarOut:
    """Revoke your calendar address: calendar apps can no longer read it."""
    calendars.revoke_address(session=call.session, user=call.account)
    return _out(None)
