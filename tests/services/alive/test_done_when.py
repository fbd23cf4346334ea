"""Issue #30's "Done when", in one process: three turns on a fast clock, one player silent
and one away (tests/services/alive/scenario.py). Each step runs the scheduler's two jobs
twice, as a second worker would: every nudge is still sent once."""

import pytest

from pbp.services.noteworthy import cadence
from tests.factories import drop_committed_campaign
from tests.services.alive import scenario
from tests.services.mail.test_outbox import SETTINGS


@pytest.mark.db
def test_three_turns_silent_player_nudged_once_each_away_player_never(engine):
    campaign_id = scenario.build(engine)
    try:
        for step, now in enumerate(scenario.STEPS):
            for _ in range(2):
                cadence.advance_all_due(engine=engine, now=now, mail=SETTINGS)
                cadence.remind_all_due(engine=engine, now=now, mail=SETTINGS)
            scenario.between(engine, campaign_id, step)
        scenario.check(engine, campaign_id)
    finally:
        from pbp.models import Campaign

        drop_committed_campaign(engine, Campaign(id=campaign_id))
