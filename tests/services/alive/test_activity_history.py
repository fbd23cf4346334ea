"""The activity check's numbers agree with the history page's (issue #30 item 2): the same
turns, each character's standing at each turn's start, and the challenges it made."""

from datetime import timedelta

import pytest
from sqlmodel import Session, select

from pbp.models import Campaign, Character
from pbp.services.alive import activity
from pbp.services.noteworthy import cadence, history, hosted_blog
from tests.factories import drop_committed_campaign
from tests.services.alive import scenario
from tests.services.mail.test_outbox import SETTINGS


@pytest.mark.db
def test_activity_and_history_show_the_same_turns_standings_and_challenges(engine):
    campaign_id = scenario.build(engine)
    try:
        with Session(engine, expire_on_commit=False) as session:
            ada, bram = (
                session.exec(
                    select(Character).where(
                        Character.campaign_id == campaign_id, Character.name == name
                    )
                ).one()
                for name in ("Ada", "Bram")
            )
            # Ada challenges Bram in turn 1 (Noteworthy: a challenge is an entry naming its
            # target with the mood of the action).
            hosted_blog.store_entry(
                session=session, character=ada, title="I challenge Bram",
                body_markdown="Bram, I challenge you.", mood="Challenging",
                now=scenario.T0 + timedelta(hours=2),
            )  # fmt: skip
            session.commit()
        for step, now in enumerate(scenario.STEPS):
            cadence.advance_all_due(engine=engine, now=now, mail=SETTINGS)
            cadence.remind_all_due(engine=engine, now=now, mail=SETTINGS)
            scenario.between(engine, campaign_id, step)
        with Session(engine) as session:
            campaign = session.get(Campaign, campaign_id)
            story = history.campaign_history(session=session, campaign=campaign)
            seen = activity.measure(session=session, campaign=campaign, now=scenario.STEPS[-1])
        assert [p.number for p in seen.periods] == [t.number for t in story.turns]
        for row in seen.rows:
            for cell, line in zip(row.cells, story.turns, strict=True):
                standing = line.standings[row.character_id]
                assert (cell.status, cell.challenges) == (standing.status, standing.made)
        ada_row = seen.row(ada.id)
        assert ada_row.cells[0].entries == 2  # her entry and her challenge
        assert (
            sum(c.challenges for c in ada_row.cells)
            == 1
            == sum(line.standings[ada.id].made for line in story.turns)
        )
    finally:
        drop_committed_campaign(engine, Campaign(id=campaign_id))
