"""A person's secret calendar address (blueprint `calendar`, issue #30 item 4).

    GET  /account/calendar          the address to copy; make a new one; revoke it
    POST /account/calendar/new      make the address (a new one: the old stops working)
    POST /account/calendar/revoke   revoke it
    GET  /calendar/<secret>.ics     the feed, for calendar apps: no login; 404 once revoked

The page shows the address, so, like the token page, it is not cached and sends no
Referer. The feed is limited per calendar address (`PBP_CALENDAR_LIMIT`: an app stuck in
a loop) and per client address (`CLIENT_LIMIT`, against floods of guesses; generous,
since Google's and Microsoft's fetchers read many people's calendars from few addresses).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, current_app, render_template, request, url_for

from pbp.request_db import get_session
from pbp.services.accounts import calendar as calendars
from pbp.web.access import login_required, signed_in_account
from pbp.web.actions import Act, action, now
from pbp.web.auth import TOKEN_PAGE_HEADERS

bp = Blueprint("calendar", __name__)

ICS = "text/calendar; charset=utf-8"
CLIENT_LIMIT = "300 per minute"


def init_app(app: Flask) -> None:
    """Register the pages and the limited feed (call after pbp.web.auth made the limiter)."""
    app.register_blueprint(bp)
    limiter = app.extensions["pbp_limiter"]
    view: Any = app.view_functions["calendar.feed"]
    view = limiter.limit(
        app.config.get("PBP_CALENDAR_LIMIT", "60 per hour"),
        key_func=_calendar_address,
        scope="calendar-address",
    )(view)
    view = limiter.limit(CLIENT_LIMIT, scope="calendar-client")(view)
    app.view_functions["calendar.feed"] = view


def _calendar_address() -> str:
    return (request.view_args or {}).get("secret", "")[:64]


@bp.get("/account/calendar")
@login_required
def page():
    feed = calendars.calendar_address(session=get_session(), user=signed_in_account())
    url = None
    if feed is not None:
        url = calendars.address_url(feed, base_url=current_app.config["PBP_BASE_URL"])
    webcal = "webcal://" + url.split("://", 1)[1] if url else None
    body = render_template("account/calendar.html", feed=feed, url=url, webcal=webcal)
    return body, 200, TOKEN_PAGE_HEADERS


@action(bp, "/account/calendar/new", role="user", creates=True, page=page)
def make(act: Act):
    had = calendars.calendar_address(session=act.session, user=act.account) is not None
    calendars.make_address(session=act.session, user=act.account, now=act.now)
    message = "Your calendar address is ready: copy it into your calendar app."
    if had:
        message = (
            "Your new calendar address is ready; the old one no longer works, so give "
            "your calendar app this one."
        )
    return act.done(url_for("calendar.page"), message)


@action(bp, "/account/calendar/revoke", role="user", page=page)
def revoke(act: Act):
    if calendars.revoke_address(session=act.session, user=act.account):
        message = "Your calendar address is revoked: calendar apps can no longer read it."
    else:
        message = "You had no calendar address: nothing to revoke."
    return act.done(url_for("calendar.page"), message)


@bp.get("/calendar/<secret>.ics")
def feed(secret: str):
    body = calendars.calendar_text(
        session=get_session(),
        secret=secret,
        base_url=current_app.config["PBP_BASE_URL"],
        now=now(),
    )
    # private: the address is one person's; shared caches keep nothing of it.
    return Response(body, headers={"Content-Type": ICS, "Cache-Control": "private"})
