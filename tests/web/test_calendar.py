"""Issue #30 item 4: each member's secret calendar address, read back with `icalendar`.

The page makes, replaces and revokes the address; the feed lists every deadline of the
member's Noteworthy campaigns in UTC with stable UIDs (and a scheduled campaign's next
opening), a moved deadline keeps its UID with a higher SEQUENCE, a revoked or replaced
address is 404, and another member's campaigns are not in it. What it must never carry is
in tests/security/test_calendar_secrets.py; the API twin in tests/api/test_calendar_api.py.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from icalendar import Calendar
from sqlmodel import select

from pbp.models import Turn, User
from pbp.services.accounts import calendar as calendars
from tests.conftest import make_test_app
from tests.factories import make_campaign, make_characters, make_user
from tests.helpers import T0

ADDRESS = re.compile(r'value="(http://pbp\.test/calendar/([A-Za-z0-9_-]+)\.ics)"')


def make_address(auth, client, user) -> str:
    """Log in as `user`, press "make" on the calendar page, and read the address there."""
    auth.logout()
    auth.login(user)
    assert auth.post("/account/calendar/new").status_code == 302
    page = client.get("/account/calendar").get_data(as_text=True)
    return ADDRESS.search(page).group(1)


def read(client, url: str) -> Calendar:
    answer = client.get(url.removeprefix("http://pbp.test"))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return Calendar.from_ical(answer.get_data())


def events(calendar: Calendar) -> dict[str, dict]:
    """UID -> the event's fields as Python values."""
    return {
        str(e["UID"]): {
            "start": e.decoded("DTSTART"),
            "end": e.decoded("DTEND"),
            "sequence": int(e.get("SEQUENCE", 0)),
            "summary": str(e["SUMMARY"]),
            "url": str(e["URL"]),
            "description": str(e["DESCRIPTION"]),
        }
        for e in calendar.walk("VEVENT")
    }


def open_turn(auth, campaign, referee, *, hours="30", tz="Europe/Stockholm", cadence=None):
    auth.logout()
    auth.login(referee)
    base = f"/c/{campaign.slug}/referee"
    settings = {"time_zone": tz, "opening_turns": "0", **(cadence or {})}
    assert auth.post(base + "/settings", settings).status_code == 302
    form = {"text": "The duke falls.", "expected_number": "1", "deadline_hours": hours}
    assert auth.post(base + "/event", form).status_code == 302


def player(db_session, character) -> User:
    return db_session.get(User, character.user_id)


def test_the_page_makes_replaces_and_revokes_the_address(client, auth, game, db_session):
    campaign, _referee, (ada, *_) = game
    auth.login(player(db_session, ada))
    page = client.get("/account/calendar")
    assert page.status_code == 200
    assert "You have no calendar address." in page.get_data(as_text=True)
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["Referrer-Policy"] == "no-referrer"

    first = make_address(auth, client, player(db_session, ada))
    page = client.get("/account/calendar").get_data(as_text=True)
    assert 'data-copy="calendar-address"' in page  # the copy button
    assert "webcal://pbp.test/calendar/" in page
    assert read(client, first)  # it works

    second = make_address(auth, client, player(db_session, ada))
    assert second != first
    assert client.get(first.removeprefix("http://pbp.test")).status_code == 404
    assert read(client, second)

    answer = auth.post("/account/calendar/revoke", follow_redirects=True)
    assert "Your calendar address is revoked" in answer.get_data(as_text=True)
    assert client.get(second.removeprefix("http://pbp.test")).status_code == 404
    assert "You have no calendar address." in client.get("/account/calendar").get_data(as_text=True)


def test_the_page_needs_a_login_and_is_linked_from_the_tokens_and_mail_pages(
    client, auth, game, db_session
):
    campaign, _referee, (ada, *_) = game
    for answer in (client.get("/account/calendar"), auth.post("/account/calendar/new")):
        assert answer.status_code == 302 and "/login" in answer.location
    auth.login(player(db_session, ada))
    for page in ("/account/tokens/", f"/c/{campaign.slug}/me/mail"):
        assert 'href="/account/calendar"' in client.get(page).get_data(as_text=True), page


def test_an_unknown_address_is_404(client):
    for secret in ("x" * 43, "short", "a.b", "%00" * 20):
        assert client.get(f"/calendar/{secret}.ics").status_code == 404, secret


def test_the_feed_lists_the_deadline_in_utc_with_a_stable_uid(
    client, auth, game, clock, db_session
):
    campaign, referee, (ada, *_) = game
    open_turn(auth, campaign, referee)  # 30 hours after T0, in a Stockholm campaign
    url = make_address(auth, client, player(db_session, ada))

    answer = client.get(url.removeprefix("http://pbp.test"))
    assert answer.headers["Content-Type"] == "text/calendar; charset=utf-8"
    assert answer.headers["Cache-Control"] == "private"
    text = answer.get_data(as_text=True)
    assert "\r\n" in text and "DTSTART:20260702T150000Z" in text  # UTC, not Stockholm's 17:00
    calendar = Calendar.from_ical(answer.get_data())
    assert str(calendar["VERSION"]) == "2.0" and str(calendar["METHOD"]) == "PUBLISH"
    assert str(calendar["PRODID"]) and str(calendar["X-WR-CALNAME"]).startswith("pbp")
    assert "\r\nREFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n" in text  # RFC 7986: read hourly
    assert "\r\nX-PUBLISHED-TTL:PT1H\r\n" in text  # Outlook's name for it

    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    found = events(calendar)
    assert list(found) == [f"pbp-turn-{turn.id}-deadline@pbp.test"]  # manual cadence: no opening
    (event,) = found.values()
    assert event["start"] == datetime(2026, 7, 2, 15, 0, tzinfo=UTC) == turn.deadline
    assert event["start"].utcoffset() == timedelta(0) and event["end"] > event["start"]
    assert event["sequence"] == 0
    assert event["summary"] == f"{campaign.name}: turn 1 closes"
    assert event["url"] == f"http://pbp.test/c/{campaign.slug}/turns/1"
    assert event["url"] in event["description"]

    clock.now = T0 + timedelta(hours=2)  # read again later: the same event, the same UID
    assert events(read(client, url)).keys() == found.keys()


def test_a_moved_deadline_keeps_its_uid_with_a_higher_sequence(
    client, auth, game, clock, db_session
):
    """No page moves a deadline yet; whichever service will, the turn counts the move (the
    test moves it on the row, as a service would, after a fresh load from the database)."""
    campaign, referee, (ada, *_) = game
    open_turn(auth, campaign, referee)
    url = make_address(auth, client, player(db_session, ada))
    ((uid, before),) = events(read(client, url)).items()

    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    db_session.expire(turn)  # as a new request finds it: the old deadline is not loaded
    turn.deadline = before["start"] + timedelta(days=1)
    db_session.commit()
    ((uid_after, after),) = events(read(client, url)).items()
    assert uid_after == uid
    assert after["start"] == before["start"] + timedelta(days=1)
    assert after["sequence"] > before["sequence"]

    turn.deadline = after["start"]  # the same time again: no move
    db_session.commit()
    assert events(read(client, url))[uid]["sequence"] == after["sequence"]
    turn.deadline = before["start"]  # moved back: a move too
    db_session.commit()
    assert events(read(client, url))[uid]["sequence"] > after["sequence"]


def test_a_scheduled_campaign_lists_the_next_turns_opening(client, auth, game, clock, db_session):
    campaign, referee, (ada, *_) = game
    daily = {"cadence": "daily", "cadence_at": "20:00"}
    open_turn(auth, campaign, referee, hours="", tz="UTC", cadence=daily)
    url = make_address(auth, client, player(db_session, ada))
    found = events(read(client, url))
    assert len(found) == 2
    opening = found[f"pbp-campaign-{campaign.id}-turn-2-opens@pbp.test"]
    deadline = next(e for uid, e in found.items() if uid.endswith("-deadline@pbp.test"))
    # T0 is 09:00 UTC: the daily cadence closes turn 1 at 20:00 that day, and opens turn 2.
    assert deadline["start"] == opening["start"] == datetime(2026, 7, 1, 20, 0, tzinfo=UTC)
    assert opening["summary"] == f"{campaign.name}: turn 2 opens"
    assert opening["url"] == f"http://pbp.test/c/{campaign.slug}/turns/"

    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    turn.deadline = turn.deadline + timedelta(hours=3)
    db_session.commit()
    moved = events(read(client, url))[f"pbp-campaign-{campaign.id}-turn-2-opens@pbp.test"]
    assert moved["start"] == opening["start"] + timedelta(hours=3)
    assert moved["sequence"] > opening["sequence"]


def test_only_the_members_own_campaigns_are_listed(client, auth, game, db_session):
    campaign, referee, (ada, *_) = game
    other = make_campaign(db_session, name="Someone Else's Game", settings={"opening_turns": 0})
    make_characters(db_session, other, names=("Gus",))
    db_session.add(Turn(campaign_id=other.id, number=1, deadline=T0 + timedelta(days=2)))
    db_session.commit()
    open_turn(auth, campaign, referee)

    for who in (player(db_session, ada), referee):  # a player's and the referee's calendar
        text = client.get(make_address(auth, client, who).removeprefix("http://pbp.test")).get_data(
            as_text=True
        )
        assert campaign.name in text
        assert "Someone Else" not in text and other.slug not in text


def test_a_past_deadline_stays_a_while_then_leaves(client, auth, game, clock, db_session):
    campaign, referee, (ada, *_) = game
    open_turn(auth, campaign, referee)
    assert auth.post(f"/c/{campaign.slug}/referee/close").status_code == 302
    url = make_address(auth, client, player(db_session, ada))
    clock.now = T0 + timedelta(days=60)
    assert len(events(read(client, url))) == 1  # closed, two months ago: still there
    clock.now = T0 + timedelta(days=120)
    assert events(read(client, url)) == {}


def test_a_forum_campaign_has_nothing_dated(client, auth, db_session):
    gm = auth.create_user(display_name="GM")
    make_campaign(db_session, name="Forum Game", referee=gm, ruleset="one")
    db_session.commit()
    calendar = read(client, make_address(auth, client, gm))
    assert events(calendar) == {} and str(calendar["VERSION"]) == "2.0"


def test_the_feed_is_rate_limited_per_address(
    engine, connection, database_url, tmp_path, db_session
):
    app = make_test_app(
        engine, connection, database_url, tmp_path / "i", PBP_CALENDAR_LIMIT="2 per hour"
    )
    client = app.test_client()
    feed = calendars.make_address(session=db_session, user=make_user(db_session), now=T0)
    db_session.commit()
    mine, unknown = f"/calendar/{feed.secret}.ics", "/calendar/" + "u" * 43 + ".ics"
    assert [client.get(mine).status_code for _ in range(3)] == [200, 200, 429]
    assert client.get(unknown).status_code == 404  # another address has its own count
