"""Turn lifecycle through the services: open -> closed -> resolved, idempotent steps."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.errors import Conflict
from pbp.models import AuditLog, Challenge, Character, Event, Turn
from pbp.services.noteworthy import hosted_blog, tally, turns
from tests.factories import make_campaign, make_characters

DAY = timedelta(days=1)
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign)
    return campaign, chars


def play_turn(db_session, campaign, n, text="Something happens."):
    opened = T0 + (n - 1) * DAY
    turn = turns.post_event(
        session=db_session, campaign=campaign, text=text, actor=None, now=opened
    )
    return turn, opened


def test_first_event_opens_turn_one_with_standings_snapshot(db_session, game):
    campaign, chars = game
    turn, _ = play_turn(db_session, campaign, 1)
    assert turn.number == 1 and turn.status == "open"
    assert turn.start_standings == {str(c.id): "active" for c in chars}
    assert db_session.exec(select(Event).where(Event.turn_id == turn.id)).one().mode == "all"
    assert campaign.status == "running"


def test_next_event_refused_until_turn_resolved(db_session, game):
    campaign, _ = game
    play_turn(db_session, campaign, 1)
    with pytest.raises(Conflict, match="close and resolve"):
        play_turn(db_session, campaign, 2)


def test_retried_post_with_expected_number_opens_once(db_session, game):
    campaign, _ = game
    first = turns.post_event(
        session=db_session, campaign=campaign, text="E", actor=None, now=T0, expected_number=1
    )
    again = turns.post_event(
        session=db_session, campaign=campaign, text="E", actor=None, now=T0, expected_number=1
    )
    assert first.id == again.id
    assert len(db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).all()) == 1


def test_tailored_events_are_stored_per_character(db_session, game):
    campaign, (ada, bram, *_) = game
    turn = turns.post_event(
        session=db_session,
        campaign=campaign,
        text="General",
        actor=None,
        now=T0,
        tailored=[
            turns.Tailored(ada.id, "addition", "Only Ada"),
            turns.Tailored(bram.id, "replacement", "Bram's own"),
        ],
    )
    rows = db_session.exec(select(Event).where(Event.turn_id == turn.id)).all()
    assert {(r.character_id, r.mode) for r in rows} == {
        (None, "all"),
        (ada.id, "addition"),
        (bram.id, "replacement"),
    }


def test_challenge_resolves_and_loser_becomes_outsider(db_session, game):
    campaign, (ada, bram, cleo, dov, eli, fay) = game
    turn, opened = play_turn(db_session, campaign, 1)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="I challenge Bram",
        body_markdown="Bram is a fraud.",
        mood="Challenging",
        now=opened + timedelta(hours=1),
    )
    for who, stance in ((cleo, "support"), (dov, "support"), (eli, "oppose")):
        hosted_blog.store_note(
            session=db_session,
            entry=entry,
            author=who,
            body_markdown="So.",
            stance=stance,
            now=opened + timedelta(hours=2),
        )
    live = tally.tally(session=db_session, campaign=campaign, turn=turn)
    (result,) = live.challenges
    assert result.target_id == bram.id and len(result.supporters) == 2 and not live.closed

    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=opened + DAY / 2)
    resolved, final = turns.resolve_turn(
        session=db_session,
        campaign=campaign,
        actor=None,
        now=opened + DAY / 2,
        consequences={entry.id: "Exile"},
    )
    db_session.refresh(bram)
    assert resolved.status == "resolved" and bram.status == "outsider"
    row = db_session.exec(select(Challenge).where(Challenge.entry_id == entry.id)).one()
    assert row.outcome == "challenger" and row.consequence == "Exile"
    assert resolved.result["eliminated"] == [bram.id]

    again, _ = turns.resolve_turn(
        session=db_session, campaign=campaign, actor=None, now=opened + DAY
    )
    assert again.resolved_at == opened + DAY / 2  # the second resolve changed nothing

    turn2, _ = play_turn(db_session, campaign, 2)
    assert turn2.start_standings[str(bram.id)] == "outsider"
    actions = db_session.exec(select(AuditLog.action).where(AuditLog.campaign_id == campaign.id))
    assert {"post_event", "close_turn", "resolve_turn"} <= set(actions)


def test_resolve_refused_while_a_ruling_is_needed_then_ruling_settles_it(db_session, game):
    campaign, (ada, bram, cleo, *_) = game
    turn, opened = play_turn(db_session, campaign, 1)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Both of you",
        body_markdown="Bram and Cleo, beware.",
        mood="Challenging",
        now=opened + timedelta(hours=1),
    )
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=opened + DAY / 2)
    with pytest.raises(Conflict, match="need a ruling"):
        turns.resolve_turn(session=db_session, campaign=campaign, actor=None, now=opened + DAY)
    turns.add_ruling(
        session=db_session,
        campaign=campaign,
        turn=turn,
        kind="target",
        subject_id=entry.id,
        value=cleo.id,
        reason="Cleo is named first",
        actor=None,
        now=opened + DAY,
    )
    _, result = turns.resolve_turn(
        session=db_session, campaign=campaign, actor=None, now=opened + DAY
    )
    assert result.challenges[0].target_id == cleo.id
    db_session.refresh(ada)
    # Noteworthy: "ties favor the target" — 0-0 included, so the challenger loses.
    assert ada.status == "outsider"
    assert db_session.get(Character, cleo.id).status == "active"
