"""The referee's activity check and a player's hiatus through the pages (issue #30 items
2 and 3): who may see them, the settings form refused as typed, the "rule dropped" button,
and "away until ..." on the roster and the board."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select

from pbp.models import Campaign, Character, Hiatus, OutboxMessage, User
from pbp.services.noteworthy import turns
from tests.helpers import T0
from tests.web.test_refused_forms import fields


def _turns(db_session, campaign, count: int) -> None:
    """`count` turns, each resolved, nobody posting; one more open."""
    for n in range(1, count + 1):
        turns.post_event(
            session=db_session, campaign=campaign, text=f"Turn {n}", actor=None,
            now=T0 + timedelta(days=n - 1), deadline=T0 + timedelta(days=n),
        )  # fmt: skip
        turns.close_turn(
            session=db_session, campaign=campaign, actor=None, now=T0 + timedelta(days=n)
        )
        turns.resolve_turn(
            session=db_session, campaign=campaign, actor=None, now=T0 + timedelta(days=n)
        )
    db_session.commit()


def test_only_the_referee_sees_the_activity_check(client, auth, game, db_session, clock):
    campaign, referee, (ada, *_) = game
    url = f"/c/{campaign.slug}/referee/activity"
    auth.login(db_session.get(User, ada.user_id))
    assert client.get(url).status_code == 403
    assert auth.post(url + "/settings", {"rule_count": "2"}).status_code == 403
    auth.logout()
    auth.login(referee)
    page = client.get(url)
    assert page.status_code == 200 and "1 entry per turn" in page.get_data(as_text=True)


def test_three_missed_turns_offer_the_dropped_ruling(client, auth, game, db_session, clock):
    campaign, referee, (ada, *_) = game
    _turns(db_session, campaign, 3)
    clock.now = T0 + timedelta(days=4)
    auth.login(referee)
    page = client.get(f"/c/{campaign.slug}/referee/activity").get_data(as_text=True)
    drop = f"/c/{campaign.slug}/referee/characters/{ada.id}/drop"
    assert f'action="{drop}"' in page and "Rule Ada dropped" in page
    assert auth.post(drop, {"reason": "missed 3 turns in a row"}).status_code == 302
    db_session.expire_all()
    assert db_session.get(Character, ada.id).status == "outsider"
    after = client.get(f"/c/{campaign.slug}/referee/activity").get_data(as_text=True)
    assert "Rule Ada dropped" not in after


def test_the_settings_form_is_refused_as_typed_and_saved(client, auth, game, db_session):
    campaign, referee, _ = game
    auth.login(referee)
    url = f"/c/{campaign.slug}/referee/activity/settings"
    page = auth.post(url, {"nudge_hours": "72, soon", "overdue_hours": "2", "rule_count": "1"})
    assert page.status_code == 422
    assert fields(page)["nudge-hours"] == "72, soon"
    page = auth.post(url, {"nudge_hours": "999", "overdue_hours": "", "rule_count": "1"})
    assert page.status_code == 422, page.status_code
    assert (
        "between 1 hour and 14 days" in page.get_data(as_text=True).split('role="alert"')[1][:200]
    )
    assert fields(page)["nudge-hours"] == "999"
    ok = auth.post(url, {"nudge_hours": "72, 12;2", "overdue_hours": "", "rule_count": "2"})
    assert ok.status_code == 302
    db_session.expire_all()
    kept = db_session.get(Campaign, campaign.id).settings["alive"]
    assert kept == {"nudge_hours": [72, 12, 2], "overdue_hours": None, "rule_count": 2}


def test_away_and_back_show_on_the_roster_and_the_board(client, auth, game, db_session, clock):
    campaign, referee, (ada, *_) = game
    player = db_session.get(User, ada.user_id)
    auth.login(player)
    url = f"/c/{campaign.slug}/me/away"
    assert client.get(url).status_code == 200
    refused = auth.post(url, {"until": "2020-01-01", "note": "Too late"})
    assert refused.status_code == 422 and fields(refused)["away-note"] == "Too late"
    assert auth.post(url, {"until": "2026-07-20", "note": "Exams."}).status_code == 302
    roster = client.get(f"/c/{campaign.slug}/characters/").get_data(as_text=True)
    assert "away until" in roster
    assert "You are marked away" in client.get("/").get_data(as_text=True)
    auth.logout()
    auth.login(referee)
    assert "is away until 2026-07-20" in client.get("/").get_data(as_text=True)
    auth.logout()
    auth.login(player)
    assert auth.post(f"/c/{campaign.slug}/me/back", {}).status_code == 302
    assert "away until" not in client.get(f"/c/{campaign.slug}/characters/").get_data(as_text=True)
    kinds = db_session.exec(
        select(OutboxMessage.kind).where(OutboxMessage.campaign_id == campaign.id)
    ).all()
    assert sorted(k for k in kinds if k in ("away", "back")) == ["away", "back"]
    assert db_session.exec(select(Hiatus)).one().ended_at is not None
