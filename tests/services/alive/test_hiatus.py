"""Hiatus (issue #30 item 3): away until a date, with a note; the referee is mailed when a
player goes away and when they are back.

Rules notes (docs/rules-notes.md): "the tally is unchanged, an away character still counts
as active, and the referee can still rule it dropped"."""

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.errors import Conflict, UserError
from pbp.models import OutboxMessage, User
from pbp.services import roster
from pbp.services.alive import activity, hiatus
from pbp.services.noteworthy import turns
from tests.factories import make_campaign, make_characters
from tests.services.mail.test_outbox import SETTINGS

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    ada, bram = make_characters(db_session, campaign, names=("Ada", "Bram"))
    turns.post_event(
        session=db_session, campaign=campaign, text="One", actor=None, now=NOW,
        deadline=NOW + timedelta(days=3),
    )  # fmt: skip
    return campaign, ada, db_session.get(User, ada.user_id)


def _kinds(db_session, campaign):
    rows = db_session.exec(
        select(OutboxMessage.kind).where(OutboxMessage.campaign_id == campaign.id)
    ).all()
    return sorted(k for k in rows if k in ("away", "back"))


def test_away_and_back_mail_the_referee_with_the_note(db_session, game):
    campaign, ada, player = game
    row = hiatus.go_away(
        session=db_session, campaign=campaign, actor=player, until=date(2026, 3, 20),
        note="Exams.", now=NOW, mail=SETTINGS,
    )  # fmt: skip
    assert row.until == datetime(2026, 3, 20, tzinfo=UTC)
    mail = db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "away")).one()
    assert "Exams." in mail.body_text and "Ada" in mail.subject or "User" in mail.subject
    assert hiatus.away_until(session=db_session, campaign=campaign, now=NOW) == {
        player.id: row.until
    }
    hiatus.come_back(session=db_session, campaign=campaign, actor=player, now=NOW, mail=SETTINGS)
    assert _kinds(db_session, campaign) == ["away", "back"]
    assert hiatus.away_until(session=db_session, campaign=campaign, now=NOW) == {}
    with pytest.raises(Conflict):
        hiatus.come_back(session=db_session, campaign=campaign, actor=player, now=NOW)


def test_the_date_coming_tells_the_referee_once(db_session, game):
    campaign, _, player = game
    hiatus.go_away(
        session=db_session, campaign=campaign, actor=player, until=date(2026, 3, 4), note="",
        now=NOW, mail=SETTINGS,
    )  # fmt: skip
    later = datetime(2026, 3, 4, 0, 1, tzinfo=UTC)
    assert hiatus.note_returns(session=db_session, campaign=campaign, now=NOW, mail=SETTINGS) == 0
    assert hiatus.note_returns(session=db_session, campaign=campaign, now=later, mail=SETTINGS) == 1
    assert hiatus.note_returns(session=db_session, campaign=campaign, now=later, mail=SETTINGS) == 0
    assert _kinds(db_session, campaign) == ["away", "back"]


def test_a_date_in_the_past_or_the_referee_is_refused(db_session, game):
    campaign, _, player = game
    with pytest.raises(UserError, match="after today"):
        hiatus.go_away(
            session=db_session, campaign=campaign, actor=player, until=date(2026, 3, 2),
            note="", now=NOW,
        )  # fmt: skip


def test_an_away_character_stays_active_and_the_referee_can_still_rule_it_dropped(db_session, game):
    """ "an away character still counts as active, and the referee can still rule it
    dropped": the ruling overrides the absence."""
    campaign, ada, player = game
    hiatus.go_away(
        session=db_session, campaign=campaign, actor=player, until=date(2026, 4, 1), note="",
        now=NOW,
    )  # fmt: skip
    assert ada.status == "active"
    seen = activity.measure(session=db_session, campaign=campaign, now=NOW + timedelta(days=4))
    assert seen.row(ada.id).cells[0].excused and seen.row(ada.id).away_until is not None
    referee = db_session.exec(
        select(User).where(User.display_name == "Referee").order_by(User.id.desc())
    ).first()
    dropped = roster.drop_character(
        session=db_session, campaign=campaign, character_id=ada.id, reason="gone quiet",
        actor=referee, now=NOW,
    )  # fmt: skip
    assert dropped.status == "outsider"


def test_the_referees_reminder_button_skips_an_away_player(db_session, game):
    """ "Away players get no nudges": the referee's button is a nudge too."""
    from pbp.services.noteworthy import reminders

    campaign, ada, player = game
    hiatus.go_away(
        session=db_session, campaign=campaign, actor=player, until=date(2026, 4, 1), note="",
        now=NOW,
    )  # fmt: skip
    turn = turns.latest_turn(session=db_session, campaign=campaign)
    sent = reminders.remind_missing(
        session=db_session, campaign=campaign, turn=turn, mail=SETTINGS, now=NOW, actor=None
    )
    assert sent == 1  # Bram only
    recipients = db_session.exec(
        select(OutboxMessage.recipient).where(OutboxMessage.kind == "reminder")
    ).all()
    assert player.email not in recipients and len(recipients) == 1


def test_a_character_ruled_dropped_is_asked_for_nothing_after(db_session, game):
    """After the referee's ruling the character is neither nudged nor counted missing."""
    campaign, ada, _ = game
    referee = db_session.exec(
        select(User).where(User.display_name == "Referee").order_by(User.id.desc())
    ).first()
    roster.drop_character(
        session=db_session, campaign=campaign, character_id=ada.id, reason="left",
        actor=referee, now=NOW - timedelta(hours=1),
    )  # fmt: skip
    later = NOW + timedelta(days=4)
    seen = activity.measure(session=db_session, campaign=campaign, now=later)
    cell = seen.row(ada.id).cells[0]
    assert (cell.asked, cell.met, seen.row(ada.id).missed_in_row) == (False, None, 0)
    from pbp.services.alive import nudges

    nudges.run(session=db_session, campaign=campaign, now=later, mail=SETTINGS)
    overdue = db_session.exec(
        select(OutboxMessage.recipient).where(OutboxMessage.kind == "overdue")
    ).all()
    assert db_session.get(User, ada.user_id).email not in overdue and len(overdue) == 1
