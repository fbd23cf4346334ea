"""Issue #30's "Done when": a scheduled campaign runs for three turns on a fast clock, with
Ada posting, Bram silent and Cleo away. Shared by the in-process test and the two-process
one on PostgreSQL (tests/deploy), which run the scheduler's two jobs at each `STEPS` time
and call `between` after each step.

Turns last 72 h (cadence "hours"); the nudges are the defaults: 48 h and 24 h before the
deadline and one at it.
"""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta

from sqlmodel import Session, col, select

from pbp.models import Campaign, Character, OutboxMessage, User
from pbp.services.alive import activity, hiatus
from pbp.services.noteworthy import hosted_blog, referee, turns
from tests.factories import make_campaign, make_characters
from tests.services.mail.test_outbox import SETTINGS

T0 = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
TURN = timedelta(hours=72)
TURNS = 3
# (turn index, hours into the turn): 48 h before, 24 h before, at the deadline.
STEPS = [T0 + k * TURN + timedelta(hours=h) for k in range(TURNS) for h in (24, 48, 72)]


def build(engine) -> int:
    """The campaign, committed; returns its id."""
    with Session(engine, expire_on_commit=False) as session:
        campaign = make_campaign(
            session,
            name=f"Alive {uuid.uuid4().hex[:8]}",
            settings={"opening_turns": 0, "cadence": {"kind": "hours", "hours": 72}},
        )
        campaign.created_at = T0 - timedelta(days=1)
        make_characters(session, campaign, names=("Ada", "Bram", "Cleo"))
        turns.post_event(
            session=session, campaign=campaign, text="One", actor=None, now=T0,
            deadline=T0 + TURN,
        )  # fmt: skip
        cleo = _user(session, campaign, "Cleo")
        hiatus.go_away(
            session=session, campaign=campaign, actor=cleo, until=date(2026, 4, 1),
            note="Moving house.", now=T0, mail=SETTINGS,
        )  # fmt: skip
        _ada_writes_and_referee_queues(session, campaign, T0 + timedelta(hours=1))
        session.commit()
        return campaign.id


def _user(session: Session, campaign: Campaign, name: str) -> User:
    character = session.exec(
        select(Character).where(Character.campaign_id == campaign.id, Character.name == name)
    ).one()
    user = session.get(User, character.user_id)
    assert user is not None
    return user


def _referee(session: Session, campaign: Campaign) -> User:
    from pbp.services.mail.alive_mail import referees

    return referees(session, campaign)[0][1]


def _ada_writes_and_referee_queues(session: Session, campaign: Campaign, at: datetime) -> None:
    ada = session.exec(
        select(Character).where(Character.campaign_id == campaign.id, Character.name == "Ada")
    ).one()
    hosted_blog.store_entry(
        session=session, character=ada, title=f"Present {at:%d %H}", body_markdown="Here.",
        mood="Calm", now=at,
    )  # fmt: skip
    referee.queue_event(
        session=session, campaign=campaign, actor=_referee(session, campaign), text="Next"
    )


def between(engine, campaign_id: int, step: int) -> None:
    """After a deadline (the last step of each turn): Ada writes in the new turn, and the
    referee queues the event after it."""
    if step % 3 != 2 or step == len(STEPS) - 1:
        return
    with Session(engine, expire_on_commit=False) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        _ada_writes_and_referee_queues(session, campaign, STEPS[step] + timedelta(minutes=5))
        session.commit()


def letters(engine, campaign_id: int) -> Counter:
    """(recipient's name, kind, dedupe key) -> how many outbox rows."""
    with Session(engine) as session:
        rows = session.exec(
            select(OutboxMessage.recipient, OutboxMessage.kind, OutboxMessage.dedupe_key)
            .where(OutboxMessage.campaign_id == campaign_id)
            .order_by(col(OutboxMessage.id))
        ).all()
        names = {u.email: u.display_name for u in session.exec(select(User))}
    return Counter((names.get(r, r), kind, key) for r, kind, key in rows)


def check(engine, campaign_id: int) -> None:
    """Everything issue #30's "Done when" says, over the three turns."""
    sent = letters(engine, campaign_id)
    assert all(n == 1 for n in sent.values()), sent  # one row per key: by construction
    kinds = Counter((name, kind) for name, kind, _ in sent)
    # Bram: the 48 h, 24 h and overdue nudges, once each per turn.
    assert kinds[("Bram", "nudge")] == 2 * TURNS
    assert kinds[("Bram", "overdue")] == TURNS
    for n in range(1, TURNS + 1):
        mine = sorted(
            ":".join(key.split(":")[4:])
            for name, _, key in sent
            if name == "Bram" and key.split(":")[2] == f"t{n}"
        )
        assert mine == ["before:24", "before:48", "overdue"], (n, mine)
    # Cleo is away: nothing; Ada posted: nothing.
    nudging = ("nudge", "overdue", "overdue_list")
    assert not [k for k in kinds if k[0] in ("Cleo", "Ada") and k[1] in nudging], kinds
    # The referee: Cleo's going away, and the overdue list of every turn.
    assert kinds[("Referee", "away")] == 1
    assert kinds[("Referee", "overdue_list")] == TURNS
    with Session(engine) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        bodies = session.exec(
            select(OutboxMessage.body_text)
            .where(OutboxMessage.campaign_id == campaign_id, OutboxMessage.kind == "overdue_list")
            .order_by(col(OutboxMessage.id))
        ).all()
        assert "Bram" in bodies[-1] and "3 turns in a row" in bodies[-1], bodies[-1]
        assert "Cleo" not in bodies[-1] and "Ada" not in bodies[-1]
        seen = activity.measure(session=session, campaign=campaign, now=STEPS[-1])
        bram = next(r for r in seen.rows if r.name == "Bram")
        cleo = next(r for r in seen.rows if r.name == "Cleo")
        assert bram.missed_in_row == 3
        assert [c.excused for c in cleo.cells[:TURNS]] == [True] * TURNS
        assert cleo.missed_in_row == 0
