"""The dice record: the seed and its commitment, rolls made once at submit from
HMAC(seed, roll id), append-only storage, and named skills read from the sheet."""

from __future__ import annotations

import hashlib
import json

import pytest
import sqlalchemy as sa
from sqlmodel import select

from pbp.errors import REFUSALS, Conflict, Forbidden
from pbp.models.forum import CampaignSecret, Post, Roll, Thread
from pbp.rules import dice
from pbp.rules.dice import RollError
from pbp.services import campaigns
from pbp.services.forum import gm, rolls, sheets
from tests.services.forum.tables import T0, give_one_sheet, make_table, write


@pytest.fixture
def table(db_session):
    return make_table(db_session)


def _rolls(db_session, post: Post) -> list[Roll]:
    return list(
        db_session.exec(select(Roll).where(Roll.post_id == post.id).order_by(Roll.position))
    )


def test_secret_is_made_once_and_commits_to_its_seed(db_session, table):
    first = rolls.ensure_secret(session=db_session, campaign=table.campaign, now=T0)
    again = rolls.ensure_secret(session=db_session, campaign=table.campaign, now=T0)
    assert first.id == again.id
    seed = bytes.fromhex(first.seed)
    assert len(seed) == rolls.SEED_BYTES
    assert first.commitment == hashlib.sha256(seed).hexdigest()
    assert rolls.revealed_seed(first) is None  # secret until the end


def test_two_campaigns_get_different_seeds(db_session, table):
    other = make_table(
        db_session,
        users=[table.gm, table.ada_user, table.bram_user, table.cleo_user, table.stranger],
    )
    a = rolls.ensure_secret(session=db_session, campaign=table.campaign, now=T0)
    b = rolls.ensure_secret(session=db_session, campaign=other.campaign, now=T0)
    assert a.seed != b.seed


def test_rolls_are_derived_from_the_seed_and_their_id(db_session, table):
    post = write(db_session, table, table.ada_user, "I strike.\n/roll 3d6+1 # strike\n/roll d20")
    secret = rolls.get_secret(session=db_session, campaign=table.campaign)
    made = _rolls(db_session, post)
    assert [r.position for r in made] == [1, 2]
    assert [r.number for r in made] == [1, 2]
    for roll in made:
        assert len(roll.id) >= 20 and roll.id.isascii()
        expected = dice.execute(
            dice.parse_roll_command(roll.command),
            dice.derive_rng(bytes.fromhex(secret.seed), roll.id),
        )
        assert roll.result == json.loads(json.dumps(expected.to_dict()))
        assert roll.roller_id == table.ada_user.id and roll.character_id == table.ada.id
    assert made[0].result["total"] == sum(f[1] for f in made[0].result["faces"]) + 1
    assert post.body == "I strike."  # the /roll lines became rolls, not text


def test_roll_numbers_continue_across_posts(db_session, table):
    first = write(db_session, table, table.ada_user, "/roll d6")
    thread = db_session.get(Thread, first.thread_id)
    second = write(db_session, table, table.bram_user, "/roll d6\n/roll d8", thread=thread)
    assert [r.number for r in _rolls(db_session, second)] == [2, 3]


def test_a_stored_roll_cannot_be_changed_or_deleted_through_the_orm(db_session, table):
    post = write(db_session, table, table.ada_user, "/roll d6")
    db_session.commit()
    roll = _rolls(db_session, post)[0]
    roll.command = "/roll d20"
    with pytest.raises(sa.exc.InvalidRequestError, match="permanent dice record"):
        db_session.flush()
    db_session.rollback()
    roll = db_session.get(Roll, roll.id)
    db_session.delete(roll)
    with pytest.raises(sa.exc.InvalidRequestError, match="cannot be changed"):
        db_session.flush()


def test_the_database_itself_refuses_to_change_a_roll(db_session, table):
    post = write(db_session, table, table.ada_user, "/roll d6")
    roll_id = _rolls(db_session, post)[0].id
    db_session.commit()
    with pytest.raises(sa.exc.DatabaseError, match="append-only"), db_session.begin_nested():
        db_session.execute(
            sa.text("UPDATE forum_roll SET result = :r WHERE id = :id"),
            {"r": '{"total": 99}', "id": roll_id},
        )


def test_one_named_skill_is_read_from_the_sheet(db_session, table):
    give_one_sheet(db_session, table, skills={"Short Blade": 4})
    post = write(db_session, table, table.ada_user, '/roll one skill="short blade" mod=-1')
    (roll,) = _rolls(db_session, post)
    # DEX 9 -> Base 3; 4 levels bought: score 7.
    assert roll.command == '/roll one check skill="short blade" score=7 mod=-1'
    assert roll.result["reading"]["target"] == 6
    assert "7 from Ada's sheet" in roll.note


def test_a_wounded_one_character_rolls_at_minus_two(db_session, table):
    give_one_sheet(db_session, table, skills={"Short Blade": 4}, lost=6)  # HLT 6: wounded
    post = write(db_session, table, table.ada_user, '/roll one skill="Short Blade"')
    (roll,) = _rolls(db_session, post)
    assert roll.command.endswith("score=7 mod=-2")
    assert roll.result["reading"]["target"] == 5
    assert "wounded -2" in roll.note


def test_noir_named_skill_is_read_from_the_free_form_sheet(db_session):
    table = make_table(db_session, ruleset="noir")
    sheets.save_sheet(
        session=db_session,
        campaign=table.campaign,
        character=table.ada,
        data={"skills": {"Drive": 7}},
        actor=table.gm,
        membership=campaigns.membership(session=db_session, campaign=table.campaign, user=table.gm),
        now=T0,
    )
    post = write(db_session, table, table.ada_user, '/roll noir difficulty skill="Drive" mod=+5')
    (roll,) = _rolls(db_session, post)
    assert "score=7" in roll.command and roll.result["reading"]["score"] == 7


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('/roll one skill="Short Blade"', "has no sheet"),
        ('/roll one skill="Basket Weaving"', "no skill or stat"),
    ],
)
def test_unresolvable_named_skill_is_refused_before_anything_is_stored(
    db_session, table, body, message
):
    if "Basket" in body:
        give_one_sheet(db_session, table)
    with pytest.raises(REFUSALS, match=message):  # a RollError or the sheet's SheetError
        write(db_session, table, table.ada_user, body)
    assert db_session.exec(select(Post)).all() == []
    assert db_session.exec(select(Roll)).all() == []


def test_named_skill_without_a_character_says_how_to_roll(db_session, table):
    with pytest.raises(RollError, match="skill=8"):
        write(db_session, table, table.gm, '/roll one skill="Short Blade"')


def test_no_rolls_once_the_seed_is_revealed(db_session, table):
    first = write(db_session, table, table.ada_user, "Before the end.")
    gm.end_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=T0)
    thread = db_session.get(Thread, first.thread_id)
    with pytest.raises(Conflict, match="ended"):
        write(db_session, table, table.ada_user, "/roll d6", thread=thread)


def test_start_publishes_and_end_reveals_the_same_seed(db_session, table):
    commitment = gm.start_campaign(
        session=db_session, campaign=table.campaign, actor=table.gm, now=T0
    )
    assert table.campaign.status == "running"
    seed = gm.end_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=T0)
    assert dice.seed_commitment(bytes.fromhex(seed)) == commitment
    secret = db_session.exec(select(CampaignSecret)).one()
    assert rolls.revealed_seed(secret) == seed and table.campaign.status == "ended"


def test_only_the_gm_starts_or_ends(db_session, table):
    for action in (gm.start_campaign, gm.end_campaign):
        with pytest.raises(Forbidden):
            action(session=db_session, campaign=table.campaign, actor=table.ada_user, now=T0)
    secret = rolls.get_secret(session=db_session, campaign=table.campaign)
    assert table.campaign.status == "setup" and rolls.revealed_seed(secret) is None
