"""The turn page every event and results mail links to: the event (general and tailored,
each only to whom it is for), the deadline in the campaign's zone with a countdown, the
turn's challenges live while open and the stored result once resolved; and reopening a
closed turn, on the dashboard and through the API."""

from __future__ import annotations

import re
from datetime import timedelta

from markupsafe import escape
from sqlmodel import select

from pbp.models import AuditLog, OutboxMessage, Turn, User
from pbp.services.noteworthy import hosted_blog
from tests.helpers import T0

LINK = re.compile(r"http://pbp\.test(/c/[^\s\"<>]+/turns/\d+)")


def _open_turn(auth, campaign, ada, tz="Europe/Stockholm"):
    base = f"/c/{campaign.slug}/referee"
    answer = auth.post(base + "/settings", {"time_zone": tz, "opening_turns": "0"})
    assert answer.status_code == 302
    return auth.post(
        base + "/event",
        {
            "text": "The duke falls.",
            "expected_number": "1",
            "deadline_hours": "30",
            f"tailor_{ada.id}": "Only Ada saw it.",
            f"mode_{ada.id}": "addition",
        },
    )


def test_event_mail_links_to_the_turn_page_with_the_readers_own_part(
    client, auth, game, clock, db_session
):
    campaign, referee, (ada, bram, *_) = game
    auth.login(referee)
    assert _open_turn(auth, campaign, ada).status_code == 302
    mails = db_session.exec(select(OutboxMessage).where(OutboxMessage.campaign_id == campaign.id))
    links = {m.recipient: LINK.search(m.body_text).group(1) for m in mails}
    ada_user, bram_user = db_session.get(User, ada.user_id), db_session.get(User, bram.user_id)
    assert links[ada_user.email] == f"/c/{campaign.slug}/turns/1"

    page = client.get(links[ada_user.email]).get_data(as_text=True)
    assert "The duke falls." in page and "Only Ada saw it." in page  # the referee sees all
    auth.logout()
    auth.login(ada_user)
    page = client.get(links[ada_user.email])
    assert page.status_code == 200
    assert "Only Ada saw it." in page.get_data(as_text=True)
    auth.logout()
    auth.login(bram_user)
    page = client.get(links[bram_user.email]).get_data(as_text=True)
    assert "The duke falls." in page and "Only Ada saw it." not in page
    auth.logout()
    assert "Only Ada saw it." not in client.get(links[bram_user.email]).get_data(as_text=True)


def test_deadline_in_the_campaigns_zone_with_a_countdown(client, auth, game, clock):
    campaign, referee, (ada, *_) = game
    auth.login(referee)
    _open_turn(auth, campaign, ada)
    page = client.get(f"/c/{campaign.slug}/turns/1").get_data(as_text=True)
    # T0 is 09:00 UTC on 1 July; 30 hours later is 15:00 UTC, 17:00 in Stockholm (CEST).
    assert "Thursday 2 July, 17:00 CEST" in page
    assert ">15:00 UTC</time>)" in page  # the reader's own zone before the script runs
    assert "closes in 1 day 6 h" in page
    clock.now = T0 + timedelta(hours=29, minutes=30)
    assert "closes in 30 min" in client.get(f"/c/{campaign.slug}/turns/1").get_data(as_text=True)


def test_resolved_turn_shows_the_stored_result_not_todays_tally(
    client, auth, game, clock, db_session
):
    campaign, referee, (ada, bram, cleo, dov, eli, _) = game
    auth.login(referee)
    _open_turn(auth, campaign, ada)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram, beware",
        body_markdown="Target: Bram\n\nI challenge you.",
        mood="Challenging",
        now=T0 + timedelta(hours=1),
    )
    for who, stance in ((cleo, "support"), (dov, "oppose")):
        hosted_blog.store_note(
            session=db_session,
            entry=entry,
            author=who,
            body_markdown="noted",
            stance=stance,
            now=T0 + timedelta(hours=2),
        )
    db_session.commit()
    live = client.get(f"/c/{campaign.slug}/turns/1").get_data(as_text=True)
    assert "Challenges so far" in live and "1 support" in live and "1 oppose" in live

    base = f"/c/{campaign.slug}/referee"
    clock.now = T0 + timedelta(hours=12)
    auth.post(base + "/close", {})
    auth.post(base + "/resolve", {})
    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    db_session.refresh(turn)
    assert turn.status == "resolved"
    # A support note that arrives after the resolve changes the stored result in nothing.
    hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=eli,
        body_markdown="late",
        stance="support",
        now=T0 + timedelta(hours=40),
    )
    db_session.commit()
    page = client.get(f"/c/{campaign.slug}/turns/1").get_data(as_text=True)
    assert "Result" in page and "1 support" in page and "2 support" not in page
    # "ties favour the target": the challenger loses and becomes an outsider.
    assert "Became an outsider: Ada." in page
    # Each line of the stored explanation is shown once: under its challenge, or in the
    # turn's list when it is about the turn as a whole.
    lines = turn.result["explanation"]
    assert lines and all(page.count(str(escape(line))) == 1 for line in lines), lines


def test_reopen_a_closed_turn_until_it_is_resolved(client, auth, game, clock, db_session):
    campaign, referee, (ada, *_) = game
    base = f"/c/{campaign.slug}/referee"
    auth.login(referee)
    _open_turn(auth, campaign, ada)
    auth.post(base + "/close", {})
    board = client.get(base + "/").get_data(as_text=True)
    assert "Reopen turn 1" in board and 'data-confirm="Resolve turn 1?' in board
    page = auth.post(base + "/reopen", {}, follow_redirects=True)
    assert "Turn 1 is open again" in page.get_data(as_text=True)
    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    db_session.refresh(turn)
    assert turn.status == "open" and turn.closed_at is None
    actions = db_session.exec(
        select(AuditLog.action).where(AuditLog.campaign_id == campaign.id)
    ).all()
    assert "reopen_turn" in actions
    assert "reopened turn 1" in client.get(base + "/audit").get_data(as_text=True)

    auth.post(base + "/close", {})
    auth.post(base + "/resolve", {})
    refused = auth.post(base + "/reopen", {})
    assert refused.status_code == 409  # back on the dashboard, the reason beside the form
    assert "cannot reopen" in refused.get_data(as_text=True)


def test_unknown_turn_is_a_404_page(client, game):
    campaign, _, _ = game
    page = client.get(f"/c/{campaign.slug}/turns/9")
    assert page.status_code == 404
    assert "has no turn 9 yet" in page.get_data(as_text=True)


def test_resolved_turn_shows_the_referees_consequence(client, auth, game, clock, db_session):
    """Issue #27 item 7: the results mail links to the turn page, which shows the
    consequence the referee wrote when resolving, under its challenge."""
    campaign, referee, (ada, bram, cleo, *_) = game
    auth.login(referee)
    _open_turn(auth, campaign, ada)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram, beware",
        body_markdown="Target: Bram\n\nI challenge you.",
        mood="Challenging",
        now=T0 + timedelta(hours=1),
    )
    hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=cleo,
        body_markdown="noted",
        stance="support",
        now=T0 + timedelta(hours=2),
    )
    db_session.commit()
    base = f"/c/{campaign.slug}/referee"
    clock.now = T0 + timedelta(hours=12)
    auth.post(base + "/close", {})
    words = "Bram is run out of the guild hall at dawn."
    auth.post(base + "/resolve", {f"consequence_{entry.id}": words})
    auth.logout()
    auth.login(db_session.get(User, bram.user_id))
    page = client.get(f"/c/{campaign.slug}/turns/1").get_data(as_text=True)
    assert "Result" in page and words in page
