"""The calendar address through the API (issue #30 item 4): the twin of /account/calendar.

Making one answers the address, which a calendar app reads with no token; making another
replaces it; revoking leaves none; the page and the API see the same address.
"""

from __future__ import annotations

from datetime import timedelta

from icalendar import Calendar

from tests.helpers import API_NOW, make_token


def _feed(client, url: str):
    return client.get(url.removeprefix("http://pbp.test"))


def test_make_read_replace_and_revoke(api, client, world, db_session):
    world.turn.deadline = API_NOW + timedelta(days=1)
    db_session.add(world.turn)
    db_session.commit()
    token = world.tokens["player"]
    assert api.get("/me/calendar", token=token).get_json() == {"url": None, "created_at": None}

    made = api.post("/me/calendar", token=token)
    assert made.status_code == 201
    first = made.get_json()["url"]
    assert first.startswith("http://pbp.test/calendar/") and first.endswith(".ics")
    assert api.get("/me/calendar", token=token).get_json()["url"] == first
    answer = _feed(client, first)  # no token: the address is the key
    assert answer.status_code == 200
    (event,) = Calendar.from_ical(answer.get_data()).walk("VEVENT")
    assert str(event["SUMMARY"]) == f"{world.campaign.name}: turn 1 closes"

    second = api.post("/me/calendar", token=token).get_json()["url"]
    assert second != first and _feed(client, first).status_code == 404

    revoked = api.call("DELETE", "/me/calendar", token=token)
    assert revoked.status_code == 200 and revoked.get_json()["url"] is None
    assert _feed(client, second).status_code == 404
    assert api.get("/me/calendar", token=token).get_json()["url"] is None


def test_a_read_token_sees_the_address_but_cannot_make_one(api, world, db_session):
    reader = make_token(db_session, world.users["player"], scope="read")
    db_session.commit()
    assert api.get("/me/calendar", token=reader).status_code == 200
    assert api.post("/me/calendar", token=reader).status_code == 403
    assert api.call("DELETE", "/me/calendar", token=reader).status_code == 403


def test_the_page_and_the_api_show_the_same_address(api, auth, client, world, db_session):
    from pbp.services.accounts import logins as accounts

    user = world.users["player"]
    user.password_hash = accounts.hash_password(auth.password)
    db_session.add(user)
    db_session.commit()
    auth.login(user)
    assert auth.post("/account/calendar/new").status_code == 302
    url = api.get("/me/calendar", token=world.tokens["player"]).get_json()["url"]
    assert url and url in client.get("/account/calendar").get_data(as_text=True)
