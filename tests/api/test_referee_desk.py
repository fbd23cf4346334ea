"""The referee's desk over the API (pbp.api.referee, #18): settings, the queued event, the
final notice, reminders, a campaign-wide poll, unmapped commenters, the outbox, the audit
log, new invitations, and the history. Each answers as the dashboard does, and refuses in
words (problem+json). The world is tests/api/conftest.py's: turn 1 open, Ada (the player's)
challenges Bram (the other player's), four more characters without a player.
"""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbp.errors import Forbidden
from pbp.models import Blog, Note
from pbp.services.noteworthy import referee

pytestmark = pytest.mark.db


def refused(response, status: int, words: str) -> str:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    detail = response.get_json()["detail"]
    assert words in detail, detail
    return detail


def test_settings_read_and_change(api, world):
    ref = world.tokens["referee"]
    path = f"/campaigns/{world.slug}/settings"
    before = api.get(path, token=ref).get_json()
    assert before["opening_turns"] == 0 and before["cadence"] == {
        "kind": "manual",
        "at": None,
        "hours": None,
        "remind_hours": None,
    }
    changed = {
        "opening_turns": 2,
        "fair_interval_hours": 12,
        "custom_moods": {"Gloomy": "broods in a corner"},
        "time_zone": "Europe/Stockholm",
        "cadence": {"kind": "daily", "at": "20:00", "remind_hours": 6},
    }
    response = api.put(path, token=ref, json=changed)
    assert response.status_code == 200, response.get_data(as_text=True)
    after = api.get(path, token=ref).get_json()
    assert after["opening_turns"] == 2 and after["fair_interval_hours"] == 12
    assert after["time_zone"] == "Europe/Stockholm"
    assert after["cadence"] == {"kind": "daily", "at": "20:00", "hours": None, "remind_hours": 6}
    assert after["custom_moods"] == {"Gloomy": "broods in a corner"}
    audit = api.get(f"/campaigns/{world.slug}/audit", token=ref).get_json()["lines"]
    assert audit and "setting" in audit[0]["sentence"].lower()


@pytest.mark.parametrize(
    "change, words",
    [
        ({"time_zone": "Mars/Olympus"}, "unknown time zone"),
        ({"cadence": {"kind": "daily"}}, "time of day"),
        ({"custom_moods": {"Challenging": "a duel"}}, "already means a challenge"),
    ],
)
def test_settings_refused_in_words_and_unchanged(api, world, change, words):
    ref = world.tokens["referee"]
    path = f"/campaigns/{world.slug}/settings"
    body = {"opening_turns": 3, "time_zone": "UTC", "cadence": {"kind": "manual"}, **change}
    refused(api.put(path, token=ref, json=body), 422, words)
    assert api.get(path, token=ref).get_json()["opening_turns"] == 0


def test_queued_event_kept_read_and_cleared(api, world):
    ref = world.tokens["referee"]
    path = f"/campaigns/{world.slug}/queued-event"
    cleo = world.characters["Cleo"].id
    body = {
        "text": "The duel at noon.",
        "tailored": [{"character_id": cleo, "mode": "addition", "text": "You hold the coats."}],
    }
    assert api.put(path, token=ref, json=body).status_code == 200
    kept = api.get(path, token=ref).get_json()
    assert kept["text"] == "The duel at noon."
    assert kept["tailored"] == [
        {"character_id": cleo, "mode": "addition", "text": "You hold the coats."}
    ]
    assert api.put(path, token=ref, json={"text": ""}).status_code == 200
    assert api.get(path, token=ref).get_json() == {"text": "", "tailored": []}


def test_queued_event_for_a_character_of_another_campaign_is_refused(api, world):
    body = {"text": "x", "tailored": [{"character_id": 2147483647, "text": "for nobody"}]}
    response = api.put(
        f"/campaigns/{world.slug}/queued-event", token=world.tokens["referee"], json=body
    )
    refused(response, 422, "character of this campaign")


def test_final_notice_published_and_mailed_to_everyone_once(api, world):
    ref = world.tokens["referee"]
    path = f"/campaigns/{world.slug}/final-notice"
    for _ in range(2):
        response = api.post(path, token=ref, json={"text": "  The ball is over.  "})
        assert response.status_code == 200
        assert response.get_json() == {"text": "The ball is over."}
    box = api.get(f"/campaigns/{world.slug}/outbox", token=ref).get_json()
    finals = [m for m in box["messages"] if m["kind"] == "final"]
    # Both players and the referee, once each however often it is published.
    assert sorted(m["recipient"].split("-")[1].split("@")[0] for m in finals) == [
        "other_player",
        "player",
        "referee",
    ]
    # Delivered right after the commit, as an event's mail is.
    assert {m["status"] for m in finals} == {"sent"} and box["counts"]["sent"] >= 3


def test_a_blank_final_notice_is_refused(api, world):
    response = api.post(
        f"/campaigns/{world.slug}/final-notice",
        token=world.tokens["referee"],
        json={"text": "   "},
    )
    refused(response, 422, "needs some text")


def test_reminders_go_to_players_without_an_entry(api, world):
    """Ada wrote her entry this turn; Bram has not: only Bram's player is reminded, and a
    second click in the same hour queues nothing more."""
    ref = world.tokens["referee"]
    path = f"/campaigns/{world.slug}/reminders"
    assert api.post(path, token=ref).get_json() == {"queued": 1}
    assert api.post(path, token=ref).get_json() == {"queued": 1}
    # Sent right after the commit (a testing app sends in the request): any state.
    box = api.get(f"/campaigns/{world.slug}/outbox", token=ref).get_json()
    reminders = [m for m in box["messages"] if m["kind"] == "reminder"]
    assert [m["recipient"] for m in reminders] == [world.users["other_player"].email]


def test_a_player_cannot_send_reminders(api, world):
    response = api.post(f"/campaigns/{world.slug}/reminders", token=world.tokens["player"])
    refused(response, 403, "only the referee")


def test_outbox_refuses_an_unknown_state(api, world):
    response = api.get(f"/campaigns/{world.slug}/outbox?status=lost", token=world.tokens["referee"])
    assert response.status_code == 400
    assert response.mimetype == "application/problem+json"


def test_poll_all_makes_every_external_blog_due(api, world, db_session):
    ref = world.tokens["referee"]
    added = api.post(
        f"/campaigns/{world.slug}/characters",
        token=ref,
        json={"name": "Gus", "feed_url": "http://127.0.0.1:9/feed.xml"},
    )
    assert added.status_code == 201, added.get_data(as_text=True)
    assert api.post(f"/campaigns/{world.slug}/poll", token=ref).get_json() == {"due": 1}
    (blog,) = db_session.exec(select(Blog).where(Blog.kind == "external")).all()
    assert blog.next_poll_at is not None


def test_unmapped_commenters_listed_until_mapped(api, world, db_session):
    ref = world.tokens["referee"]
    db_session.add(
        Note(
            entry_id=world.challenge.id,
            source_id="c1",
            author_name="cleo_at_the_ball",
            author_uri="https://cleo.example/me",
        )
    )
    db_session.commit()
    path = f"/campaigns/{world.slug}/commenters/unmapped"
    (row,) = api.get(path, token=ref).get_json()["commenters"]
    assert row["name"] == "cleo_at_the_ball" and row["notes"] == 1
    mapped = api.post(
        f"/campaigns/{world.slug}/commenters",
        token=ref,
        json={
            "character_id": world.characters["Cleo"].id,
            "kind": "uri",
            "value": "https://cleo.example/me",
        },
    )
    assert mapped.get_json() == {"mapped_notes": 1}
    assert api.get(path, token=ref).get_json() == {"commenters": []}


def test_invitation_made_with_its_character_and_mailed(api, world):
    ref = world.tokens["referee"]
    response = api.post(
        f"/campaigns/{world.slug}/invites",
        token=ref,
        json={"email": "cleo@example.test", "character": "cleo", "days": 7},
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    made = response.get_json()
    assert made["character"] == "cleo" and made["url"].startswith("http://pbp.test/invite/")
    listed = api.get(f"/campaigns/{world.slug}/invites", token=ref).get_json()["items"]
    assert [i["id"] for i in listed] == [made["id"]]
    box = api.get(f"/campaigns/{world.slug}/outbox", token=ref).get_json()
    assert [m["recipient"] for m in box["messages"] if m["kind"] == "invite"] == [
        "cleo@example.test"
    ]


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"character": "ada"}, 409, "already has a player"),
        ({"character": "nobody"}, 422, "no character 'nobody'"),
        ({"character": "cleo", "role": "referee"}, 422, "only a player invite"),
    ],
)
def test_invitation_refused_in_words(api, world, body, status, words):
    response = api.post(
        f"/campaigns/{world.slug}/invites", token=world.tokens["referee"], json=body
    )
    refused(response, status, words)


def test_history_for_members(api, world):
    response = api.get(f"/campaigns/{world.slug}/history", token=world.tokens["player"])
    assert response.status_code == 200
    story = response.get_json()
    assert {c["name"] for c in story["characters"]} == {"Ada", "Bram", "Cleo", "Dov", "Eli", "Fay"}
    (turn,) = story["turns"]
    assert turn["number"] == 1 and turn["status"] == "open" and turn["resolved_at"] is None
    refused(
        api.get(f"/campaigns/{world.slug}/history", token=world.tokens["stranger"]), 403, "member"
    )


def test_the_service_checks_the_referee_itself(world, db_session):
    """A caller that forgets the page's check still cannot act: the action refuses."""
    with pytest.raises(Forbidden, match="only the referee"):
        referee.publish_final_notice(
            session=db_session,
            campaign=world.campaign,
            actor=world.users["player"],
            now=world.turn.opened_at,
            text="It is over.",
        )
    with pytest.raises(Forbidden):
        referee.poll_soon(
            session=db_session, campaign=world.campaign, actor=None, now=world.turn.opened_at
        )
