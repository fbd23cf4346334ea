"""Issue #27 item 3: a forum player invited with no character makes one and its sheet (the
ruleset checks it), or the GM makes one and hands it over; a player plays one at a time."""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbp.errors import REFUSALS, Conflict, Forbidden, UserError
from pbp.models import AuditLog, Character, Membership
from pbp.models.forum import Sheet
from pbp.services.forum import characters
from tests.factories import make_user
from tests.services.forum.tables import ONE_STATS, T0, make_table

SECRET = "s" * 32


def _newcomer(db_session, table):
    """A player who joined by an invitation without a character: a membership, no character."""
    pip = make_user(db_session, "Pip")
    db_session.add(Membership(campaign_id=table.campaign.id, user_id=pip.id, role="player"))
    db_session.flush()
    return pip


def _make(db_session, table, actor, name="Dash", sheet=None):
    return characters.make_own_character(
        session=db_session,
        campaign=table.campaign,
        actor=actor,
        name=name,
        sheet={"stats": ONE_STATS, "skills": {"Short Blade": 2}} if sheet is None else sheet,
        now=T0,
    )


def _for(db_session, table, player, name="Dash", actor=None):
    return characters.make_character_for(
        session=db_session,
        campaign=table.campaign,
        actor=actor or table.gm,
        player_id=player.id,
        name=name,
        sheet=None,
        now=T0,
        secret_key=SECRET,
        base_url="http://pbp.test",
    )


def _named(db_session, name):
    return db_session.exec(select(Character).where(Character.name == name)).all()


def test_a_player_with_no_character_makes_one_with_its_sheet(db_session):
    table = make_table(db_session)
    pip = _newcomer(db_session, table)
    campaign = table.campaign
    assert characters.needs_character(session=db_session, campaign=campaign, user=pip)
    made = _make(db_session, table, pip)
    assert made.character.user_id == pip.id and made.character.campaign_id == campaign.id
    assert made.sheet is not None and made.sheet.data["skills"] == {"Short Blade": 2}
    assert not characters.needs_character(session=db_session, campaign=campaign, user=pip)
    logged = db_session.exec(select(AuditLog).where(AuditLog.campaign_id == campaign.id)).all()
    assert {"character.made", "sheet.update"} <= {row.action for row in logged}


def test_a_sheet_the_ruleset_refuses_makes_no_character(db_session):
    table = make_table(db_session)
    pip = _newcomer(db_session, table)
    too_strong = {"stats": {**ONE_STATS, "STR": 12}}  # ONE: 35 stat points in all
    with pytest.raises(REFUSALS, match="35"):
        _make(db_session, table, pip, sheet=too_strong)
    with pytest.raises(UserError, match="stats"):
        _make(db_session, table, pip, sheet={})
    assert _named(db_session, "Dash") == []


def test_a_noir_sheet_needs_whole_numbers(db_session):
    table = make_table(db_session, ruleset="noir")
    pip = _newcomer(db_session, table)
    with pytest.raises(UserError, match="whole number"):
        _make(db_session, table, pip, sheet={"skills": {"Drive": "seven"}})
    made = _make(db_session, table, pip, sheet={"skills": {"Drive": 7}})
    assert made.sheet.data == {"skills": {"Drive": 7}}


def test_one_character_per_player_and_players_only(db_session):
    table = make_table(db_session)
    with pytest.raises(Conflict, match="already play Ada"):
        _make(db_session, table, table.ada_user)
    with pytest.raises(Forbidden):
        _make(db_session, table, table.gm)  # the GM adds characters on the dashboard
    with pytest.raises(Forbidden):
        _make(db_session, table, table.stranger)
    pip = _newcomer(db_session, table)
    _make(db_session, table, pip)
    with pytest.raises(Conflict, match="already play Dash"):
        _make(db_session, table, pip, name="Dot")


def test_no_new_character_after_the_end(db_session):
    table = make_table(db_session)
    pip = _newcomer(db_session, table)
    table.campaign.status = "ended"
    with pytest.raises(Conflict, match="ended"):
        _make(db_session, table, pip)
    with pytest.raises(Conflict, match="ended"):
        _for(db_session, table, pip)
    assert not characters.needs_character(session=db_session, campaign=table.campaign, user=pip)


def test_the_gm_makes_a_character_and_hands_it_over(db_session):
    table = make_table(db_session)
    pip = _newcomer(db_session, table)
    waiting = characters.players_without_character(session=db_session, campaign=table.campaign)
    assert [m.user_id for m in waiting] == [pip.id]
    made = _for(db_session, table, pip)
    assert made.character.user_id == pip.id and made.sheet is None
    assert characters.players_without_character(session=db_session, campaign=table.campaign) == []
    actions = {row.action for row in db_session.exec(select(AuditLog))}
    assert {"add_character", "character.handed_over"} <= actions
    assert db_session.exec(select(Sheet).where(Sheet.character_id == made.character.id)).all() == []


def test_the_gm_cannot_give_a_second_character_and_a_player_cannot_give_any(db_session):
    table = make_table(db_session)
    with pytest.raises(Conflict, match="already plays Ada"):
        _for(db_session, table, table.ada_user, name="Extra")
    pip = _newcomer(db_session, table)
    with pytest.raises(Forbidden):
        _for(db_session, table, pip, actor=table.ada_user)
    with pytest.raises(UserError, match="choose a player"):
        _for(db_session, table, table.stranger, name="Nobody's")
