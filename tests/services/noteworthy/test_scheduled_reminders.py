"""The schedule's reminder: players with no entry yet, a set time before the deadline.

Noteworthy: "In a turn, you post at least one in-character entry."
"""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select

from pbp.models import AuditLog, OutboxMessage, User
from pbp.services.noteworthy import cadence, hosted_blog, turns
from tests.factories import drop_committed_campaign, make_campaign, make_characters
from tests.services.mail.test_outbox import SETTINGS

T0 = datetime(2026, 3, 10, 18, 0, tzinfo=UTC)
DEADLINE = T0 + timedelta(hours=24)


@pytest.fixture
def reminding_game(engine):
    """Committed for real (the job works in its own transactions): turn 1 closes 24 h after
    T0, reminders go 6 h before, and Ada has written this turn. Deleted afterwards."""
    with Session(engine, expire_on_commit=False) as session:
        campaign = make_campaign(
            session,
            name=f"Reminders {uuid.uuid4().hex[:8]}",
            settings={
                "opening_turns": 0,
                "cadence": {"kind": "hours", "hours": 24, "remind_hours": 6},
            },
        )
        ada, bram, cleo = make_characters(session, campaign, names=("Ada", "Bram", "Cleo"))
        turns.post_event(
            session=session, campaign=campaign, text="One", actor=None, now=T0,
            deadline=DEADLINE,
        )  # fmt: skip
        hosted_blog.store_entry(
            session=session, character=ada, title="Present", body_markdown="Here.",
            mood="Calm", now=T0 + timedelta(hours=1),
        )  # fmt: skip
        waiting = sorted(session.get(User, c.user_id).email for c in (bram, cleo))
        session.commit()
    yield campaign, waiting
    drop_committed_campaign(engine, campaign)


def _reminders(engine, campaign, kind="nudge") -> list[str]:
    with Session(engine) as session:
        rows = session.exec(
            select(OutboxMessage.recipient).where(
                OutboxMessage.campaign_id == campaign.id, OutboxMessage.kind == kind
            )
        ).all()
    return sorted(rows)


@pytest.mark.db
def test_players_with_no_entry_are_reminded_once_when_the_deadline_is_that_close(
    engine, reminding_game
):
    """A campaign from before issue #30 keeps its one reminder (cadence remind_hours) as
    its one nudge before the deadline."""
    campaign, waiting = reminding_game
    remind = lambda at: cadence.remind_all_due(engine=engine, now=at, mail=SETTINGS)  # noqa: E731
    assert campaign.id not in remind(DEADLINE - timedelta(hours=6, seconds=1))
    assert _reminders(engine, campaign) == []
    assert remind(DEADLINE - timedelta(hours=6))[campaign.id] == 2
    assert _reminders(engine, campaign) == waiting  # Bram and Cleo; Ada has written
    assert campaign.id not in remind(DEADLINE - timedelta(hours=1))  # once a turn
    assert _reminders(engine, campaign) == waiting
    with Session(engine) as session:
        (line,) = session.exec(
            select(AuditLog).where(AuditLog.campaign_id == campaign.id, AuditLog.action == "nudge")
        ).all()
    assert line.actor_id is None
    assert line.detail == {"count": 2, "turn": 1, "kind": "before:6", "key": "t1"}


@pytest.mark.db
def test_after_the_deadline_the_overdue_nudge_and_without_the_setting_the_defaults(
    engine, reminding_game
):
    campaign, waiting = reminding_game
    # At the deadline: the overdue nudge to each silent player, and the referee's list.
    assert cadence.remind_all_due(engine=engine, now=DEADLINE, mail=SETTINGS)[campaign.id] == 3
    assert _reminders(engine, campaign, "overdue") == waiting
    assert len(_reminders(engine, campaign, "overdue_list")) == 1
    assert _reminders(engine, campaign) == []  # the before-nudge's time is gone
    with Session(engine) as session:
        kept = session.get(type(campaign), campaign.id)
        kept.settings = {**kept.settings, "cadence": {"kind": "hours", "hours": 24}}
        session.add(kept)
        session.commit()
    # Without the old setting, the defaults: 48 h and 24 h before. A 24-hour turn has only
    # the 24 h one (the 48 h one would be before it began), due from the turn's start.
    at = DEADLINE - timedelta(hours=1)
    assert cadence.remind_all_due(engine=engine, now=at, mail=SETTINGS)[campaign.id] == 2
    assert _reminders(engine, campaign) == waiting
