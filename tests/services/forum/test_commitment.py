"""Issue #35 item 1: "No roll before its commitment." The seed's SHA-256 is "published when
a campaign starts, before any roll is made" (pbp.rules.dice.source): a forum campaign gets
its seed with the campaign, so its commitment is visible before the first roll, even one
posted while the campaign is still in setup; every export says when it was published."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

import pytest

from pbp.models.forum import Thread
from pbp.rules import dice
from pbp.services import campaigns
from pbp.services.cards import tables as cards
from pbp.services.forum import gm, rolls
from pbp.services.forum.export import export_forum
from pbp.services.forum.rolls import ANONYMOUS
from tests.factories import make_user
from tests.services.forum.tables import MADE, MAIL, T0, make_table, write


@pytest.mark.parametrize("ruleset", ["one", "noir", "sex-and-violence", "one-can-have-her"])
def test_a_forum_campaign_has_its_commitment_from_its_creation(db_session, ruleset):
    made = T0 - timedelta(hours=2)
    campaign = campaigns.create_campaign(
        session=db_session, referee=make_user(db_session), name=f"Made {ruleset}",
        ruleset=ruleset, now=made,
    )  # fmt: skip
    secret = rolls.get_secret(session=db_session, campaign=campaign)
    assert secret is not None and secret.created_at == made == campaign.created_at
    assert secret.commitment == hashlib.sha256(bytes.fromhex(secret.seed)).hexdigest()
    assert rolls.revealed_seed(secret) is None


def test_a_blog_campaign_has_no_dice_seed(db_session):
    campaign = campaigns.create_campaign(
        session=db_session, referee=make_user(db_session), name="Blogs", now=T0
    )
    assert rolls.get_secret(session=db_session, campaign=campaign) is None


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value)


def test_every_roll_in_every_export_follows_its_commitment(db_session):
    table = make_table(db_session, ruleset="sex-and-violence")
    campaign = table.campaign
    seen = rolls.commitment(session=db_session, campaign=campaign)  # before any roll
    assert seen is not None and campaign.status == "setup"
    opening = write(db_session, table, table.ada_user, "Before the start.\n/roll 2d6")
    gm.start_campaign(session=db_session, campaign=campaign, actor=table.gm, now=T0)
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.gm, "/roll d20 # the GM", thread=thread, minutes=5)
    game = cards.create_game(
        session=db_session, campaign=campaign, thread=thread, user=table.gm, settings={},
        mail=MAIL, now=T0 + timedelta(minutes=6),
    )  # fmt: skip
    gm.end_campaign(session=db_session, campaign=campaign, actor=table.gm, now=T0 + timedelta(1))

    forum = export_forum(session=db_session, campaign=campaign, viewer=ANONYMOUS, now=T0)
    table_export = cards.export_game(
        session=db_session, campaign=campaign, game=game, viewer=ANONYMOUS, now=T0
    )
    for export in (forum, table_export):
        assert export["fairness"]["commitment"] == seen
        assert _when(export["fairness"]["committed_at"]) == MADE
    assert len(forum["rolls"]) == 2
    assert all(_when(r["created_at"]) > MADE for r in forum["rolls"])
    assert rolls.verify_export(forum).ok
    assert dice.seed_commitment(bytes.fromhex(forum["fairness"]["seed"])) == seen


def test_a_roll_dated_before_the_commitment_is_reported(db_session):
    table = make_table(db_session)
    write(db_session, table, table.ada_user, "/roll 3d6")
    gm.end_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=T0)
    export = export_forum(session=db_session, campaign=table.campaign, viewer=ANONYMOUS, now=T0)
    assert rolls.verify_export(export).ok
    export["fairness"]["committed_at"] = (T0 + timedelta(hours=1)).isoformat()
    report = rolls.verify_export(export)
    assert not report.ok
    assert [m.field for m in report.mismatches] == ["time, before the commitment's"]
