"""Executing roll commands, their stored form, and the fairness verification round trip."""

import copy
import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from pbp.rules.dice import (
    ALGORITHM,
    Face,
    RollError,
    ScriptedDice,
    derive_rng,
    execute,
    find_roll_commands,
    parse_roll_command,
    seed_commitment,
    verify_rolls,
)

SEED = b"the campaign's secret seed"


def run(text, faces):
    dice = ScriptedDice(faces)
    result = execute(parse_roll_command(text), dice)
    assert dice.remaining == 0
    return result


def test_generic_roll_shows_every_face():
    result = run("/roll 4d6kh3 # strength", [6, 2, 5, 4])
    assert result.total == 15
    assert result.faces == (Face(6, 6), Face(6, 2), Face(6, 5), Face(6, 4))
    assert result.text == "strength: 4d6kh3 [6, (2), 5, 4] = 15"


def test_one_check():
    result = run('/roll one skill="Short Blade" score=8 mod=-2', [3, 4])
    assert result.total == 7
    assert result.reading["success"] is False
    assert result.reading["target"] == 6
    assert result.text == "ONE check, Short Blade 8 -2: 2d6 [3, 4] = 7 > 6: failure"


def test_one_contest_and_quick_contest():
    contest = run("/roll one contest skill=8 vs=7", [2, 3, 5, 5])
    assert contest.reading["success"] is True
    assert contest.reading["opponent"]["roll"] == 10
    quick = run("/roll one quick skill=8 mod=+1 vs=7", [3, 4, 5, 5])
    assert (quick.total, quick.reading["opponent_total"]) == (16, 17)
    assert quick.reading["winner"] == "opponent"


def test_noir_difficulty_with_helpers():
    result = run("/roll noir difficulty skill=7 mod=-5 help=2", [10, 4, 3])
    assert result.total == 10 + 4 + 3 + 7 - 5 + 4
    assert result.reading["outcome"] == "success"
    assert result.reading["dice"]["extra"] == [3]
    assert result.reading["dice"]["L"] == 3


def test_noir_routine_rolls_no_dice():
    result = run("/roll noir difficulty skill=7 mod=routine", [])
    assert result.faces == ()
    assert result.reading["automatic"] is True
    assert "automatic success" in result.text


def test_noir_opposed_and_damage():
    opposed = run("/roll noir opposed skill=6 vs=8", [5, 5, 4, 3])
    assert opposed.reading["winner"] == "actor"
    assert opposed.reading["outcome"] == {
        "actor": "exceptional success",
        "opponent": "failure",
    }
    damage = run("/roll noir damage 3T+2", [10, 1, 4])
    assert damage.total == 17
    assert damage.reading["dice"]["spaerr"] == 1


def test_noir_extended_and_contest():
    task = run("/roll noir extended skill=8 successes=2", [7, 7])
    assert task.total == 2 and task.reading["done"] is True
    contest = run("/roll noir contest skill=5 vs=5 best=3", [9, 8, 1, 2, 9, 7, 1, 3])
    assert contest.reading["winner"] == "actor"
    assert len(contest.reading["attempts"]) == 2


def test_a_named_skill_must_be_resolved_before_rolling():
    command = parse_roll_command('/roll one skill="Short Blade"')
    with pytest.raises(RollError, match="needs a number for 'Short Blade'"):
        execute(command, random.Random(1))
    assert execute(command.with_score(9), random.Random(1)).reading["target"] == 9


def test_stored_form_is_json_and_complete():
    result = execute(parse_roll_command("/roll noir damage 2T"), derive_rng(SEED, "r1"))
    stored = json.loads(json.dumps(result.to_dict()))
    assert stored["algorithm"] == ALGORITHM
    assert stored["ruleset"] == "noir"
    assert stored["command"] == "/roll noir damage 2T"
    assert stored["faces"] == [[f.sides, f.value] for f in result.faces]
    assert stored["total"] == result.total


def test_execution_is_deterministic_for_a_roll_id():
    command = parse_roll_command("/roll 10d10!>=8")
    first = execute(command, derive_rng(SEED, "roll-9"))
    again = execute(command, derive_rng(SEED, "roll-9"))
    assert first.to_dict() == again.to_dict()


def test_concurrent_rolls_do_not_disturb_each_other():
    """No global random state: rolls in parallel threads equal the same rolls made alone."""
    command = parse_roll_command("/roll 20d20")
    ids = [f"roll-{i}" for i in range(200)]
    alone = [execute(command, derive_rng(SEED, i)).to_dict() for i in ids]
    barrier = threading.Barrier(8)

    def roll(roll_id):
        if roll_id in ids[:8]:
            barrier.wait()
        return execute(command, derive_rng(SEED, roll_id)).to_dict()

    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(roll, ids))
    assert together == alone


# --- verification ---


POST = """\
/roll 2d6+1
/roll 4d6!kh3 # stats
/roll one check skill="Short Blade" score=11 mod=-2
/roll one quick skill=7 vs=8
/roll noir difficulty skill=7 mod=+5
/roll noir opposed skill=6 vs=8
/roll noir extended skill=8 successes=3 mod=hard
/roll noir contest skill=6 vs=8 best=5
/roll noir damage 3T+2
"""


def export(seed=SEED):
    """What the campaign export would hold: each stored roll with its id."""
    return [
        {"id": f"roll-{i}", **execute(command, derive_rng(seed, f"roll-{i}")).to_dict()}
        for i, command in enumerate(find_roll_commands(POST))
    ]


def test_verification_round_trip_finds_nothing():
    rolls = json.loads(json.dumps(export()))
    assert verify_rolls(SEED, rolls, commitment=seed_commitment(SEED)) == []


def test_a_tampered_face_is_caught():
    rolls = export()
    rolls[0]["faces"][0][1] = 7 - rolls[0]["faces"][0][1]  # flip a d6 face
    mismatches = verify_rolls(SEED, rolls)
    assert [(m.roll_id, m.field) for m in mismatches] == [("roll-0", "faces")]
    assert "roll roll-0: faces recorded" in str(mismatches[0])


def test_a_tampered_total_or_outcome_is_caught():
    rolls = export()
    rolls[4]["total"] += 1
    rolls[5]["reading"]["winner"] = (
        "opponent" if rolls[5]["reading"]["winner"] == "actor" else "actor"
    )
    mismatches = verify_rolls(SEED, rolls)
    assert {(m.roll_id, m.field) for m in mismatches} == {
        ("roll-4", "total"),
        ("roll-5", "reading"),
    }


def test_a_changed_command_is_caught():
    rolls = export()
    rolls[2]["command"] = rolls[2]["command"].replace("score=11", "score=12")
    assert {m.field for m in verify_rolls(SEED, rolls)} == {"reading"}


def test_rolls_made_with_another_seed_do_not_verify():
    mismatches = verify_rolls(SEED, export(b"some other seed"))
    assert {m.roll_id for m in mismatches} == {f"roll-{i}" for i in range(9)}


def test_a_seed_that_does_not_match_the_commitment_is_reported():
    mismatches = verify_rolls(SEED, export(), commitment=seed_commitment(b"published"))
    assert [(m.roll_id, m.field) for m in mismatches] == [(None, "seed")]


def test_unreadable_entries_are_reported_not_raised():
    rolls = copy.deepcopy(export()[:1])
    rolls.append({"command": "/roll 1d6"})
    rolls.append({"id": "x", "command": "/roll 2x6", "faces": [], "total": 0})
    rolls.append({"id": "y", "command": "/roll 1d6", "algorithm": "pbp-dice-0"})
    assert [(m.roll_id, m.field) for m in verify_rolls(SEED, rolls)] == [
        (None, "format"),
        ("x", "command"),
        ("y", "algorithm"),
    ]
