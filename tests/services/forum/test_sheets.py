"""Character sheets: validated by the ruleset (ONE by `OneSheet`), written only by the
owner or the GM, every change in the AuditLog."""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbp.errors import REFUSALS, Forbidden, UserError
from pbp.models import AuditLog
from pbp.services import campaigns
from pbp.services.forum import sheets
from tests.services.forum.tables import ONE_STATS, T0, make_table


def _save(db_session, table, actor, data, character=None):
    return sheets.save_sheet(
        session=db_session,
        campaign=table.campaign,
        character=character or table.ada,
        data=data,
        actor=actor,
        membership=campaigns.membership(session=db_session, campaign=table.campaign, user=actor),
        now=T0,
    )


def test_a_valid_one_sheet_is_stored_and_logged(db_session):
    table = make_table(db_session)
    sheet = _save(db_session, table, table.ada_user, {"stats": ONE_STATS, "skills": {"club": 2}})
    assert sheet.data == {
        "stats": ONE_STATS,
        "skills": {"Club": 2},
        "hit_points_lost": 0,
        "notes": "",
    }
    (log,) = db_session.exec(select(AuditLog).where(AuditLog.action == "sheet.update")).all()
    assert log.actor_id == table.ada_user.id and log.detail["before"] is None
    assert log.detail["after"]["skills"] == {"Club": 2}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"stats": {**ONE_STATS, "STR": 13}}, "STR is 13"),
        ({"stats": {**ONE_STATS, "STR": 8}}, "exactly 35"),
        ({"stats": ONE_STATS, "skills": {"Short Blade": 8}}, "only 35 to spend"),
        ({"stats": ONE_STATS, "skills": {"Juggling": 1}}, "unknown skill"),
        ({"stats": ONE_STATS, "hit_points_lost": 99}, "hit points lost"),
        ({"stats": ONE_STATS, "skills": {"Club": "two"}}, "whole number"),
        ({"skills": {}}, 'needs "stats"'),
        ([1, 2], "JSON object"),
    ],
)
def test_one_sheets_that_break_the_rules_are_refused(db_session, data, message):
    table = make_table(db_session)
    with pytest.raises(REFUSALS, match=message):  # the service's or the rules' (SheetError)
        _save(db_session, table, table.ada_user, data)
    assert sheets.get_sheet(session=db_session, character=table.ada) is None


def test_only_the_owner_and_the_gm_may_write_a_sheet(db_session):
    table = make_table(db_session)
    data = {"stats": ONE_STATS}
    for intruder in (table.bram_user, table.stranger):
        with pytest.raises(Forbidden):
            _save(db_session, table, intruder, data)
    _save(db_session, table, table.gm, data)
    changed = {"stats": ONE_STATS, "skills": {"Unarmed": 1}}
    _save(db_session, table, table.ada_user, changed)
    logs = db_session.exec(select(AuditLog).where(AuditLog.action == "sheet.update")).all()
    assert [log.actor_id for log in logs] == [table.gm.id, table.ada_user.id]
    assert logs[1].detail["before"]["skills"] == {}


def test_saving_the_same_sheet_again_logs_nothing(db_session):
    table = make_table(db_session)
    _save(db_session, table, table.ada_user, {"stats": ONE_STATS})
    _save(db_session, table, table.ada_user, {"stats": ONE_STATS})
    logs = db_session.exec(select(AuditLog).where(AuditLog.campaign_id == table.campaign.id))
    assert len(logs.all()) == 1


def test_free_form_sheets_for_other_rulesets(db_session):
    table = make_table(db_session, ruleset="sex-and-violence")
    sheet = _save(db_session, table, table.ada_user, {"archetype": "Brute", "notes": ["scar"]})
    assert sheet.data["archetype"] == "Brute"


def test_noir_sheet_numbers_must_be_whole(db_session):
    table = make_table(db_session, ruleset="noir")
    with pytest.raises(UserError, match="whole number"):
        _save(db_session, table, table.ada_user, {"skills": {"Drive": "good"}})
    _save(db_session, table, table.ada_user, {"skills": {"Drive": 7}, "attributes": {"Body": 4}})


def test_skill_lines_and_json_errors_say_where(db_session):
    assert sheets.parse_skill_lines("Short Blade: 3\n\nClub = 1") == {"Short Blade": 3, "Club": 1}
    with pytest.raises(UserError, match="line 2"):
        sheets.parse_skill_lines("Club: 1\nShort Blade three")
    with pytest.raises(UserError, match="not valid JSON"):
        sheets.parse_json("{oops")


def test_one_skill_rows_show_the_score_rolled_under(db_session):
    table = make_table(db_session)
    sheet = _save(db_session, table, table.ada_user, {"stats": ONE_STATS, "skills": {"Club": 2}})
    (row,) = sheets.one_skill_rows(sheet, "Ada")
    assert (row.name, row.levels, row.score) == ("Club", 2, 5)  # DEX 9 // 3 + 2
