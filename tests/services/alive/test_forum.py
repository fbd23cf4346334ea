"""A forum game has no turns or deadlines (issue #30 item 1): its posting windows stand in
for turns, and a window's end for the deadline (pbp.services.alive.plan). Rule: "two posts
a week". Ada posts twice in the first week, Bram not at all."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select

from pbp.models import Campaign, Character, OutboxMessage, User
from pbp.services import campaigns
from pbp.services.alive import activity
from pbp.services.forum import gm, posts
from pbp.services.forum.drafts import Draft
from pbp.services.noteworthy import cadence
from tests.factories import drop_committed_campaign, make_user
from tests.services.mail.test_outbox import SETTINGS

START = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
WEEK_END = START + timedelta(days=7)


@pytest.fixture
def forum_game(engine):
    with Session(engine, expire_on_commit=False) as session:
        gm_user = make_user(session, "Gamemaster")
        campaign = campaigns.create_campaign(
            session=session, referee=gm_user, name="Docks", ruleset="one", now=START
        )
        people = {}
        for name in ("Ada", "Bram"):
            user = make_user(session, name)
            character = campaigns.add_character(
                session=session, campaign=campaign, name=name, user=user
            )
            character.created_at = START
            people[name] = user
        gm.start_campaign(session=session, campaign=campaign, actor=gm_user, now=START)
        first = posts.create_thread(
            session=session, campaign=campaign, author=people["Ada"], title="The docks",
            draft=Draft(body="We wait."), mail=SETTINGS, now=START + timedelta(days=1),
        )  # fmt: skip
        posts.reply(
            session=session, campaign=campaign, thread_id=first.thread_id,
            author=people["Ada"], draft=Draft(body="Still."), mail=SETTINGS,
            now=START + timedelta(days=2),
        )  # fmt: skip
        session.commit()
    yield campaign
    drop_committed_campaign(engine, campaign)


def _kinds(engine, campaign) -> list[tuple[str, str]]:
    with Session(engine) as session:
        rows = session.exec(
            select(User.display_name, OutboxMessage.kind)
            .join(User, User.email == OutboxMessage.recipient)
            .where(OutboxMessage.campaign_id == campaign.id)
        ).all()
    return sorted(
        (name, kind) for name, kind in rows if kind.startswith("forum_") and "post" not in kind
    )


@pytest.mark.db
def test_the_posting_window_is_the_turn_of_a_forum_game(engine, forum_game):
    campaign = forum_game
    for at in (WEEK_END - timedelta(hours=48), WEEK_END - timedelta(hours=24), WEEK_END):
        for _ in range(2):
            cadence.remind_all_due(engine=engine, now=at, mail=SETTINGS)
    assert _kinds(engine, campaign) == [
        ("Bram", "forum_nudge"),
        ("Bram", "forum_nudge"),
        ("Bram", "forum_overdue"),
        ("Gamemaster", "forum_overdue_list"),
    ]
    with Session(engine) as session:
        seen = activity.measure(
            session=session, campaign=session.get(Campaign, campaign.id), now=WEEK_END
        )
        names = {c.id: c.name for c in session.exec(select(Character))}
    assert seen.plan.rule_words == "2 posts every 7 days"
    first = seen.periods[0]
    assert (first.start, first.end, first.finished) == (START, WEEK_END, True)
    cells = {names[r.character_id]: r.cells[0] for r in seen.rows}
    assert (cells["Ada"].posts, cells["Ada"].met) == (2, True)
    assert (cells["Bram"].posts, cells["Bram"].met) == (0, False)
    assert seen.row(next(r.character_id for r in seen.rows if r.name == "Bram")).missed_in_row == 1
