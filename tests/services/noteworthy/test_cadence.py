"""Scheduled turns: deadlines from the cadence, and the scheduler's advance."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, col, select

from pbp.errors import Conflict, UserError
from pbp.models import AuditLog, Membership, OutboxMessage, Turn, User
from pbp.services.mail.send import Sender, SmtpTransport
from pbp.services.noteworthy import cadence, hosted_blog, turns
from tests.factories import drop_committed_campaign, make_campaign, make_characters
from tests.services.mail.test_outbox import SETTINGS

T0 = datetime(2026, 3, 10, 18, 0, tzinfo=UTC)


def test_hours_cadence_deadline():
    assert cadence.deadline_after(T0, {"kind": "hours", "hours": 36}, "UTC") == T0 + timedelta(
        hours=36
    )


def test_daily_cadence_uses_the_campaign_time_zone():
    # 18:00 UTC is 19:00 in Paris (winter); "20:00" the same evening is 19:00 UTC.
    deadline = cadence.deadline_after(T0, {"kind": "daily", "at": "20:00"}, "Europe/Paris")
    assert deadline == datetime(2026, 3, 11, 19, 0, tzinfo=UTC)  # within the hour: next day
    early = T0 - timedelta(hours=6)
    assert cadence.deadline_after(early, {"kind": "daily", "at": "20:00"}, "Europe/Paris") == (
        datetime(2026, 3, 10, 19, 0, tzinfo=UTC)
    )


def test_manual_cadence_has_no_deadline():
    assert cadence.deadline_after(T0, {"kind": "manual"}, "UTC") is None


@pytest.mark.parametrize(
    "bad",
    [{"kind": "weekly"}, {"kind": "daily", "at": "25:99"}, {"kind": "hours", "hours": 0}],
)
def test_bad_cadence_is_refused(bad):
    with pytest.raises(UserError):
        cadence.validate(bad, "UTC")


def test_a_reminder_before_the_deadline_is_part_of_any_cadence():
    daily = {"kind": "daily", "at": "20:00", "remind_hours": "6"}
    assert cadence.validate(daily, "UTC") == {"kind": "daily", "at": "20:00", "remind_hours": 6}
    assert cadence.validate({"kind": "manual", "remind_hours": ""}, "UTC") == {"kind": "manual"}
    for bad, words in (("six", "whole number"), (24 * 15, "14 days"), ("-2", "whole number")):
        with pytest.raises(UserError, match=words):
            cadence.validate({"kind": "manual", "remind_hours": bad}, "UTC")


def test_unknown_time_zone_is_refused():
    with pytest.raises(UserError, match="time zone"):
        cadence.validate({"kind": "manual"}, "Mars/Olympus")


@pytest.fixture
def game(db_session):
    campaign = make_campaign(
        db_session, settings={"opening_turns": 0, "cadence": {"kind": "hours", "hours": 24}}
    )
    chars = make_characters(db_session, campaign)
    turns.post_event(
        session=db_session,
        campaign=campaign,
        text="One",
        actor=None,
        now=T0,
        deadline=T0 + timedelta(hours=24),
    )
    return campaign, chars


def test_advance_resolves_and_opens_the_queued_event(db_session, game):
    campaign, _ = game
    campaign.settings = {**campaign.settings, "queued_event": {"text": "Two", "tailored": []}}
    at = T0 + timedelta(hours=24)
    assert cadence.due_campaigns(session=db_session, now=at) == [campaign.id]
    result = cadence.advance(session=db_session, campaign=campaign, now=at)
    assert result.outcome == "advanced"
    numbers = db_session.exec(
        select(Turn.number, Turn.status)
        .where(Turn.campaign_id == campaign.id)
        .order_by(Turn.number)
    ).all()
    assert numbers == [(1, "resolved"), (2, "open")]
    new = db_session.exec(select(Turn).where(Turn.number == 2)).one()
    assert new.deadline == at + timedelta(hours=24)
    assert "queued_event" not in campaign.settings


def test_advance_waits_without_a_queued_event_and_says_so_once(db_session, game):
    campaign, _ = game
    at = T0 + timedelta(hours=24)
    first = cadence.advance(session=db_session, campaign=campaign, now=at)
    second = cadence.advance(session=db_session, campaign=campaign, now=at)
    assert first.outcome == "resolved, no event queued" and "no event" in first.reason
    assert second.outcome == "not due"  # the turn is resolved: nothing more to do
    notes = db_session.exec(select(AuditLog).where(AuditLog.action == "schedule_waiting")).all()
    assert len(notes) == 1


def _mails(db_session, campaign, kind: str) -> list[OutboxMessage]:
    rows = select(OutboxMessage).where(
        OutboxMessage.campaign_id == campaign.id, OutboxMessage.kind == kind
    )
    return list(db_session.exec(rows))


def test_a_turn_the_schedule_cannot_resolve_is_mailed_to_the_referee_once(db_session, game):
    """Nothing happens until the referee rules: the dashboard says so, and so does a mail
    (a referee of a scheduled game has no other reason to open the dashboard)."""
    campaign, (ada, *_) = game
    hosted_blog.store_entry(
        session=db_session, character=ada, title="Bram and Cleo", mood="Challenging",
        body_markdown="Bram and Cleo both.", now=T0 + timedelta(hours=1),
    )  # fmt: skip
    at = T0 + timedelta(hours=24)
    outcomes = [
        cadence.advance(session=db_session, campaign=campaign, now=now, mail=SETTINGS).outcome
        for now in (at, at + timedelta(minutes=1))  # the scheduler's next pass
    ]
    assert outcomes == ["closed, waiting", "not due"]
    (mail,) = _mails(db_session, campaign, "waiting")
    referees = db_session.exec(
        select(User.email)
        .join(Membership, col(Membership.user_id) == User.id)
        .where(Membership.campaign_id == campaign.id, Membership.role == "referee")
    ).all()
    assert [mail.recipient] == referees and mail.subject.endswith("Turn 1 waits for you")
    assert "flag(s) need a ruling before turn 1 resolves" in mail.body_text
    assert f"/c/{campaign.slug}/referee/" in mail.body_text


def test_a_resolved_turn_with_no_event_queued_is_mailed_to_the_referee(db_session, game):
    campaign, _ = game
    at = T0 + timedelta(hours=24)
    result = cadence.advance(session=db_session, campaign=campaign, now=at, mail=SETTINGS)
    assert result.outcome == "resolved, no event queued"
    (mail,) = _mails(db_session, campaign, "waiting")
    assert "no event is queued for the next turn" in mail.body_text


def test_advance_stops_at_flags_for_the_referee(db_session, game):
    campaign, (ada, *_) = game
    hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram and Cleo",
        mood="Challenging",
        body_markdown="Bram and Cleo both.",
        now=T0 + timedelta(hours=1),
    )
    campaign.settings = {**campaign.settings, "queued_event": {"text": "Two", "tailored": []}}
    result = cadence.advance(session=db_session, campaign=campaign, now=T0 + timedelta(hours=24))
    assert result.outcome == "closed, waiting" and "flag" in result.reason
    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    assert turn.status == "closed"


def _sent_to(db_session, campaign, kind: str) -> list[str]:
    rows = db_session.exec(
        select(OutboxMessage).where(
            OutboxMessage.campaign_id == campaign.id, OutboxMessage.kind == kind
        )
    ).all()
    return sorted(row.recipient for row in rows)


def test_a_scheduled_resolve_mails_every_player_the_results(db_session, game):
    """A turn the schedule resolves mails its results as a referee's resolve does (before,
    only the next event went out: players of a scheduled game never heard who lost)."""
    campaign, chars = game
    campaign.settings = {**campaign.settings, "queued_event": {"text": "Two", "tailored": []}}
    at = T0 + timedelta(hours=24)
    result = cadence.advance(session=db_session, campaign=campaign, now=at, mail=SETTINGS)
    assert result.outcome == "advanced"
    players = sorted(db_session.get(User, c.user_id).email for c in chars)
    assert _sent_to(db_session, campaign, "results") == players
    assert _sent_to(db_session, campaign, "event") == players


@pytest.fixture
def due_game(engine):
    """A scheduled campaign whose turn 1 is due, with the next event queued, committed for
    real: the scheduler's job works in its own transactions. Deleted afterwards."""
    with Session(engine, expire_on_commit=False) as session:
        campaign = make_campaign(
            session,
            name=f"Due {uuid.uuid4().hex[:8]}",
            settings={"opening_turns": 0, "cadence": {"kind": "hours", "hours": 24}},
        )
        chars = make_characters(session, campaign, names=("Ada", "Bram", "Cleo"))
        turns.post_event(
            session=session,
            campaign=campaign,
            text="One",
            actor=None,
            now=T0,
            deadline=T0 + timedelta(hours=24),
        )
        queued = {"text": "Two", "tailored": []}  # after turn 1 opened: for turn 2
        campaign.settings = {**campaign.settings, "queued_event": queued}
        emails = sorted(session.get(User, c.user_id).email for c in chars)
        session.commit()
    yield campaign, emails
    drop_committed_campaign(engine, campaign)


@pytest.mark.db
def test_the_scheduler_sends_what_an_advance_queued_right_after_its_commit(engine, due_game, smtp):
    """Not at the outbox sweep, up to 30 s later: the results and the next event reach every
    player when the scheduler's advance commits."""
    campaign, emails = due_game
    transport = SmtpTransport(host=smtp.host, port=smtp.port, timeout=10)
    sender = Sender(engine, transport, background=False)
    done = cadence.advance_all_due(
        engine=engine, now=T0 + timedelta(hours=24), mail=SETTINGS, sender=sender
    )
    assert [a.outcome for a in done if a.campaign_id == campaign.id] == ["advanced"]
    received: dict[str, list[str]] = {}
    for message in smtp.messages:
        if message.recipient in emails:
            received.setdefault(message.recipient, []).append(message.message["Subject"])
    assert sorted(received) == emails
    for subjects in received.values():
        first, second = sorted(subjects)  # each "[campaign] subject"
        assert first.endswith("] Turn 1: results") and "] Turn 2: a new event for " in second


def test_a_won_game_opens_no_next_turn_though_an_event_is_queued(db_session):
    """Noteworthy: "The last PC left wins." Before, the schedule posted the queued event
    after the winning turn: players were mailed a turn nobody could play, and the ended
    campaign was set running again."""
    campaign = make_campaign(
        db_session, settings={"opening_turns": 0, "cadence": {"kind": "hours", "hours": 24}}
    )
    ada, bram = make_characters(db_session, campaign, names=("Ada", "Bram"))
    bram.status = "outsider"  # Ada is the last active character
    db_session.add(bram)
    turns.post_event(
        session=db_session, campaign=campaign, text="One", actor=None, now=T0,
        deadline=T0 + timedelta(hours=24), mail=SETTINGS,
    )  # fmt: skip
    campaign.settings = {**campaign.settings, "queued_event": {"text": "Two", "tailored": []}}
    at = T0 + timedelta(hours=24)
    result = cadence.advance(session=db_session, campaign=campaign, now=at, mail=SETTINGS)
    assert result.outcome == "resolved, the game is won"
    numbers = db_session.exec(select(Turn.number).where(Turn.campaign_id == campaign.id)).all()
    assert numbers == [1] and campaign.status == "ended"
    assert db_session.get(type(ada), ada.id).status == "winner"
    assert _sent_to(db_session, campaign, "event") == sorted(
        db_session.get(User, c.user_id).email for c in (ada, bram)
    )  # turn 1's, and no other
    assert len(_sent_to(db_session, campaign, "results")) == 2


def test_no_event_can_open_a_turn_once_the_game_is_won(db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    _ada, bram = make_characters(db_session, campaign, names=("Ada", "Bram"))
    bram.status = "outsider"
    db_session.add(bram)
    turns.post_event(session=db_session, campaign=campaign, text="One", actor=None, now=T0)
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=T0)
    turns.resolve_turn(session=db_session, campaign=campaign, actor=None, now=T0)
    assert campaign.status == "ended"
    with pytest.raises(Conflict, match="the game is over"):
        turns.post_event(session=db_session, campaign=campaign, text="Two", actor=None, now=T0)
    assert campaign.status == "ended"


def test_an_event_posted_by_hand_uses_up_the_queued_one(db_session, game):
    """The referee queued turn 2's event, then (say, after ruling on a flag) resolved turn 1
    and posted turn 2 by hand. Before, the queued event stayed and the schedule posted it
    again as turn 3's."""
    campaign, _ = game
    campaign.settings = {**campaign.settings, "queued_event": {"text": "Two", "tailored": []}}
    at = T0 + timedelta(hours=2)
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=at)
    turns.resolve_turn(session=db_session, campaign=campaign, actor=None, now=at)
    turns.post_event(
        session=db_session, campaign=campaign, text="Two", actor=None, now=at,
        deadline=at + timedelta(hours=24),
    )  # fmt: skip
    assert "queued_event" not in campaign.settings
    result = cadence.advance(session=db_session, campaign=campaign, now=at + timedelta(hours=24))
    assert result.outcome == "resolved, no event queued"
    numbers = db_session.exec(select(Turn.number).where(Turn.campaign_id == campaign.id)).all()
    assert sorted(numbers) == [1, 2]
