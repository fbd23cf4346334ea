"""Fairness, end to end: play with every kind of roll, end the campaign, export the forum
and recompute every roll offline with `pbp verify-rolls`; any tampering is caught."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from pbp.errors import UserError
from pbp.forum_cli import verify_rolls
from pbp.models.forum import Thread
from pbp.services.forum import export, gm, rolls
from tests.services.forum.tables import T0, give_one_sheet, make_table, write

SCENE = """The car stops under the streetlight.
/roll 2d6+1 # nerves
/roll 4d6kh3
/roll 3d10! # exploding
"""


@pytest.fixture
def ended_export(db_session):
    """A ONE campaign with public, GM-only, blind and whispered rolls, ended and exported
    as a player sees it."""
    table = make_table(db_session)
    give_one_sheet(db_session, table, skills={"Short Blade": 4}, lost=6)
    gm.start_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=T0)
    first = write(db_session, table, table.ada_user, SCENE)
    thread = db_session.get(Thread, first.thread_id)
    write(
        db_session,
        table,
        table.ada_user,
        '/roll one skill="Short Blade" mod=-1',
        thread=thread,
        minutes=1,
    )
    write(
        db_session,
        table,
        table.bram_user,
        "/roll one quick skill=7 vs=8",
        thread=thread,
        roll_visibility="gm",
        minutes=2,
    )
    write(
        db_session,
        table,
        table.gm,
        "/roll noir opposed skill=6 vs=8\n/roll noir damage 3T+2",
        thread=thread,
        roll_visibility="blind",
        minutes=3,
    )
    write(
        db_session,
        table,
        table.gm,
        "/roll noir difficulty skill=7 mod=+5 # lockpick",
        thread=thread,
        audience="whisper",
        recipient_ids=(table.bram_user.id,),
        minutes=4,
    )
    gm.end_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=T0)
    data = export.export_forum(
        session=db_session, campaign=table.campaign, viewer=table.viewer(table.cleo_user), now=T0
    )
    return json.loads(json.dumps(data))  # as it would be read back from the file


def _run(tmp_path, data) -> tuple[int, str]:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = CliRunner().invoke(verify_rolls, [str(path)])
    return result.exit_code, result.output


def test_every_roll_of_an_ended_campaign_verifies(ended_export, tmp_path):
    assert len(ended_export["rolls"]) == 8
    assert not any(r.get("hidden") for r in ended_export["rolls"])
    report = rolls.verify_export(ended_export)
    assert report.ok, report.mismatches
    code, output = _run(tmp_path, ended_export)
    assert code == 0
    assert output == "8 rolls verified\n"


def test_the_export_publishes_whispered_dice_without_their_words(ended_export):
    text = json.dumps(ended_export)
    assert "lockpick" not in text  # the label of a roll in a whisper Cleo never saw
    assert any(
        r["command"] == "/roll noir difficulty skill=7 mod=+5" for r in ended_export["rolls"]
    )


def test_the_wounded_named_skill_roll_verifies_from_its_stored_command(ended_export):
    """Issue #35 item 4: the command stays as written; what pbp rolled is beside it."""
    one_roll = next(r for r in ended_export["rolls"] if "Short Blade" in r["command"])
    assert one_roll["command"] == '/roll one skill="Short Blade" mod=-1'
    assert one_roll["resolved"].endswith("score=7 mod=-3")


def test_an_export_from_before_the_typed_command_still_verifies(ended_export):
    """Older exports carry only `command`, the command as rolled."""
    old = copy.deepcopy(ended_export)
    for roll in old["rolls"]:
        roll["command"] = roll.pop("resolved")
    assert rolls.verify_export(old).ok


@pytest.mark.parametrize(
    ("tamper", "field"),
    [
        (lambda d: _bump_first_face(_roll(d, 0)), "faces"),
        (lambda d: _roll(d, 0).__setitem__("total", 99), "total"),
        (lambda d: _flip(_roll(d, 3)["reading"], "success"), "reading"),
        (lambda d: _roll(d, 1).__setitem__("resolved", "/roll 4d6kh3+1"), "command"),
        (lambda d: _both(_roll(d, 1), "/roll 4d6kh3+1"), "total"),
        (lambda d: _roll(d, 3).__setitem__("command", '/roll one skill="Club" mod=-1'), "command"),
        (lambda d: _roll(d, 2).__setitem__("id", "a-different-id"), "faces"),
        (lambda d: d["rolls"].pop(4), "missing rolls"),
        (lambda d: d["fairness"].__setitem__("seed", "00" * 32), "seed"),
    ],
)
def test_a_tampered_export_is_caught(ended_export, tmp_path, tamper, field):
    data = copy.deepcopy(ended_export)
    tamper(data)
    report = rolls.verify_export(data)
    assert not report.ok
    assert field in {m.field for m in report.mismatches}
    code, output = _run(tmp_path, data)
    assert code == 1
    assert "mismatch" in output and field in output


def _both(roll, command):
    roll["command"] = roll["resolved"] = command


def _roll(data, index):
    return data["rolls"][index]


def _bump_first_face(roll):
    sides, value = roll["faces"][0]
    roll["faces"][0] = [sides, value % sides + 1]  # always a different face of that die


def _flip(mapping, key):
    mapping[key] = not mapping[key]


def test_an_export_before_the_end_has_no_seed_and_cannot_be_verified(db_session, tmp_path):
    table = make_table(db_session)
    write(db_session, table, table.ada_user, "/roll d6")
    data = export.export_forum(
        session=db_session, campaign=table.campaign, viewer=table.viewer(table.gm), now=T0
    )
    secret = rolls.get_secret(session=db_session, campaign=table.campaign)
    assert data["fairness"]["seed"] is None
    assert data["fairness"]["commitment"] == secret.commitment
    assert secret.seed not in json.dumps(data)
    with pytest.raises(UserError, match="ends the campaign"):
        rolls.verify_export(data)
    code, output = _run(tmp_path, data)
    assert code == 1 and "no seed" in output


def test_a_file_that_is_not_an_export_is_refused_clearly(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("[1, 2", encoding="utf-8")
    result = CliRunner().invoke(verify_rolls, [str(path)])
    assert result.exit_code == 1 and "is not JSON" in result.output
    code, output = _run(tmp_path, {"rolls": []})
    assert code == 1 and "not a pbp forum export" in output
