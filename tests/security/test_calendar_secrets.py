"""Issue #30 item 4: a calendar is a channel out of pbp, so it carries no secret.

Markers are planted in a turn's event: its text for everyone, an addition tailored to Ada
and a replacement tailored to Bram, and in the event the referee queued for the next turn
(with a part tailored to Cleo). The calendar of each player and of the referee lists the
turn's deadline and the scheduled opening of the next turn, and none of the markers:
neither another character's tailored text, nor even the text the reader may see on the
turn page (a calendar is synced to phones and shared; it says when, never what).
The forum's markers are searched in every member's calendar by
tests/security/test_secret_markers.py, which fetches every GET route.
"""

from __future__ import annotations

from pbp.models import User
from tests.web.conftest import clock, game  # noqa: F401  (the web tests' fixtures, shared)
from tests.web.test_calendar import events, make_address

MARKERS = ("MKEVENT", "MKADA", "MKBRAM", "MKQUEUED", "MKQUEUEDCLEO")


def _plant(auth, campaign, referee, ada, bram, cleo) -> None:
    auth.login(referee)
    base = f"/c/{campaign.slug}/referee"
    daily = {"opening_turns": "0", "cadence": "daily", "cadence_at": "20:00", "time_zone": "UTC"}
    assert auth.post(base + "/settings", daily).status_code == 302
    event = {
        "text": "MKEVENT The duke falls.",
        "expected_number": "1",
        f"tailor_{ada.id}": "MKADA Only Ada saw it.",
        f"mode_{ada.id}": "addition",
        f"tailor_{bram.id}": "MKBRAM Bram saw something else.",
        f"mode_{bram.id}": "replacement",
    }
    assert auth.post(base + "/event", event).status_code == 302
    queued = {"text": "MKQUEUED The duchess returns.", f"tailor_{cleo.id}": "MKQUEUEDCLEO Hide."}
    assert auth.post(base + "/queue", queued).status_code == 302


def test_no_calendar_carries_an_events_text(client, auth, game, clock, db_session):  # noqa: F811
    campaign, referee, (ada, bram, cleo, *_) = game
    _plant(auth, campaign, referee, ada, bram, cleo)
    readers = {c.name: db_session.get(User, c.user_id) for c in (ada, bram, cleo)}
    readers["referee"] = referee
    for who, user in readers.items():
        url = make_address(auth, client, user)
        raw = client.get(url.removeprefix("http://pbp.test")).get_data(as_text=True)
        text = raw.replace("\r\n ", "")  # unfolded: a marker split by a line fold still counts
        found = events(_parse(raw))
        summaries = sorted(e["summary"] for e in found.values())
        assert summaries == [f"{campaign.name}: turn 1 closes", f"{campaign.name}: turn 2 opens"]
        for marker in MARKERS:
            assert marker not in text, f"{who}'s calendar carries {marker}"


def test_the_markers_are_really_there(client, auth, game, clock, db_session):  # noqa: F811
    """The test above can fail: the queue holds its markers, Ada's turn page shows hers."""
    campaign, referee, (ada, bram, cleo, *_) = game
    _plant(auth, campaign, referee, ada, bram, cleo)
    db_session.refresh(campaign)
    queued = campaign.settings["queued_event"]
    assert "MKQUEUED" in queued["text"] and "MKQUEUEDCLEO" in queued["tailored"][0]["text"]
    auth.logout()
    auth.login(db_session.get(User, ada.user_id))
    page = client.get(f"/c/{campaign.slug}/turns/1").get_data(as_text=True)
    assert "MKEVENT" in page and "MKADA" in page and "MKBRAM" not in page


def _parse(raw: str):
    from icalendar import Calendar

    return Calendar.from_ical(raw)
