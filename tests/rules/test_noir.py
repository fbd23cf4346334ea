"""Noir rolls with fixed dice (rules/noir-en.md), and Hypothesis properties of the d10 chain."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbp.rules.dice_source import Dice, RollError, RollLimitError, RollSyntaxError, ScriptedDice
from pbp.rules.noir import (
    COMPLEXITY,
    MAX_EXTRA_DICE,
    DamageCode,
    NoirDice,
    Outcome,
    Side,
    complexity_modifier,
    cooperation_bonus,
    damage_roll,
    difficulty_roll,
    opposed_roll,
    roll_d10s,
)


def scripted(*faces):
    return ScriptedDice(faces)


# --- tens and ones ("Ettor och tior") ---


def test_plain_roll_adds_the_dice():
    d = roll_d10s(scripted(4, 7), 2)
    assert (d.base, d.extra, d.sum, d.blocks) == ((4, 7), (), 11, 0)


def test_a_ten_adds_a_die_and_tens_keep_exploding():
    d = roll_d10s(scripted(10, 5, 10, 10, 3), 2)
    assert d.base == (10, 5)
    assert d.extra == (10, 10, 3)
    assert d.sum == 38


def test_two_tens_throw_two_extra_dice():
    d = roll_d10s(scripted(10, 10, 4, 6), 2)
    assert d.extra == (4, 6)
    assert d.sum == 30


def test_a_one_blocks_a_ten_which_still_counts_ten():
    dice = scripted(10, 1)
    d = roll_d10s(dice, 2)
    assert d.extra == ()
    assert d.blocks == 1
    assert d.sum == 11
    assert dice.remaining == 0


def test_a_one_among_the_extra_dice_blocks_a_ten_of_the_same_handful():
    # 10, 10 -> two extra dice: 1 and 10; the 1 blocks the new 10, so the chain ends.
    dice = scripted(10, 10, 1, 10)
    d = roll_d10s(dice, 2)
    assert d.extra == (1, 10)
    assert d.blocks == 1
    assert d.sum == 31
    assert dice.remaining == 0


def test_a_one_cannot_block_the_ten_that_threw_it():
    d = roll_d10s(scripted(10, 5, 1), 2)
    assert d.extra == (1,)
    assert d.blocks == 0
    assert d.sum == 16


def test_damage_dice_block_per_one():
    # 3T: 10, 10, 1 -> one ten blocked, the other explodes once (6).
    d = roll_d10s(scripted(10, 10, 1, 6), 3)
    assert (d.blocks, d.extra, d.sum) == (1, (6,), 27)


def test_spaerr_can_be_switched_off():
    d = roll_d10s(scripted(10, 1, 4), 2, spaerr=False)
    assert d.extra == (4,)


def test_chain_stops_at_the_safety_limit():
    d = roll_d10s(scripted(*[10] * (MAX_EXTRA_DICE + 2)), 2)
    assert len(d.extra) == MAX_EXTRA_DICE
    assert d.capped


def test_l_h_a_readings_include_exploded_dice():
    d = roll_d10s(scripted(10, 6, 2), 2)
    assert (d.low, d.high, d.sum) == (2, 10, 18)


def test_exceptional_counts_only_the_two_base_dice():
    assert roll_d10s(scripted(3, 3), 2).exceptional
    assert roll_d10s(scripted(10, 10, 4, 4), 2).exceptional
    assert not roll_d10s(scripted(10, 4, 4), 2).exceptional  # the extra 4 does not count
    assert not roll_d10s(scripted(4, 4, 4), 3).exceptional  # damage rolls have no exceptions


# --- Hypothesis properties ---

faces = st.lists(
    st.integers(1, 10), min_size=2 * MAX_EXTRA_DICE + 10, max_size=2 * MAX_EXTRA_DICE + 10
)
counts = st.integers(1, 5)


@given(faces, counts)
def test_explosion_chains_terminate_within_the_limit(script, count):
    dice = ScriptedDice(script)
    d = roll_d10s(dice, count)
    assert len(d.base) == count
    assert len(d.extra) <= MAX_EXTRA_DICE
    assert len(d.faces) == len(script) - dice.remaining


@given(faces, counts)
def test_a_spaerr_never_increases_a_total(script, count):
    with_ones = roll_d10s(ScriptedDice(script), count)
    without = roll_d10s(ScriptedDice(script), count, spaerr=False)
    assert with_ones.sum <= without.sum
    if with_ones.blocks == 0:
        assert with_ones == without


@given(faces, counts)
def test_low_is_at_most_high_and_all_is_the_sum(script, count):
    d = roll_d10s(ScriptedDice(script), count)
    assert 1 <= d.low <= d.high <= 10
    assert d.sum == sum(d.base) + sum(d.extra)


@given(st.integers(0, 2**32))
def test_chains_with_real_dice_end(seed):
    d = roll_d10s(Dice(random.Random(seed)), 2)
    assert not d.capped
    assert len(d.extra) == len([f for f in d.faces if f == 10]) - d.blocks


# --- difficulty rolls ---


def test_difficulty_succeeds_at_20():
    roll = difficulty_roll(scripted(4, 4), 7, modifier=5)
    assert roll.total == 20
    assert roll.succeeded
    assert roll.outcome is Outcome.EXCEPTIONAL_SUCCESS  # two 4s


def test_difficulty_fails_below_20():
    roll = difficulty_roll(scripted(3, 9), 7)
    assert roll.total == 19
    assert roll.outcome is Outcome.FAILURE
    assert "19 < 20: failure" in roll.render()


def test_exceptional_failure():
    assert difficulty_roll(scripted(2, 2), 5).outcome is Outcome.EXCEPTIONAL_FAILURE


def test_routine_plus_20_succeeds_without_a_roll():
    """The taxi driver: skill 7 + routine (+20) >= 20, so no dice at all."""
    dice = scripted()
    roll = difficulty_roll(dice, 7, modifier=COMPLEXITY["routine"])
    assert roll.automatic and roll.succeeded and roll.dice is None
    assert roll.total == 27
    assert dice.faces == ()


def test_the_narrator_can_demand_a_roll_anyway():
    roll = difficulty_roll(scripted(1, 1), 7, modifier=20, automatic=False)
    assert not roll.automatic
    assert roll.outcome is Outcome.EXCEPTIONAL_SUCCESS  # 2 + 27 >= 20, and a double


def test_skill_plus_modifier_below_20_still_rolls():
    roll = difficulty_roll(scripted(5, 6), 12, modifier=7)
    assert not roll.automatic and roll.total == 30


# --- opposed rolls ---


def test_opposed_higher_total_wins():
    roll = opposed_roll(scripted(5, 6, 2, 3), 6, 8)
    assert (roll.actor_total, roll.opponent_total) == (17, 13)
    assert roll.winner is Side.ACTOR
    assert roll.decided_by == "total"
    assert roll.outcome_for(Side.OPPONENT) is Outcome.FAILURE


def test_opposed_tie_goes_to_the_higher_skill():
    roll = opposed_roll(scripted(7, 5, 5, 5), 6, 8)  # 18 vs 18
    assert roll.winner is Side.OPPONENT
    assert roll.decided_by == "skill"
    assert roll.outcome_for(Side.OPPONENT) is Outcome.EXCEPTIONAL_SUCCESS
    assert roll.tie_breaks == ()


def test_opposed_tie_with_equal_skill_rolls_d10s_until_different():
    dice = scripted(4, 5, 6, 3, 7, 7, 2, 9)  # 15 vs 15, skills 6 and 6; 7-7 again, then 2-9
    roll = opposed_roll(dice, 6, 6)
    assert roll.tie_breaks == ((7, 7), (2, 9))
    assert roll.winner is Side.OPPONENT
    assert roll.decided_by == "tie-break"
    assert dice.remaining == 0


def test_opposed_modifiers_count_for_the_total_not_the_tie_break():
    roll = opposed_roll(scripted(5, 5, 5, 6), 8, 6, actor_modifier=-1, opponent_modifier=0)
    assert roll.actor_total == roll.opponent_total == 17
    assert roll.winner is Side.ACTOR  # skill 8 beats 6


def test_both_sides_can_be_exceptional():
    roll = opposed_roll(scripted(9, 9, 2, 2), 5, 5)
    assert roll.outcome_for(Side.ACTOR) is Outcome.EXCEPTIONAL_SUCCESS
    assert roll.outcome_for(Side.OPPONENT) is Outcome.EXCEPTIONAL_FAILURE
    assert "opponent: exceptional failure" in roll.render()


# --- damage ---


@pytest.mark.parametrize(
    "text, dice, modifier",
    [("3T+2", 3, 2), ("2T–1", 2, -1), ("2t-1", 2, -1), ("1T", 1, 0), ("4d10 + 3", 4, 3)],
)
def test_damage_codes(text, dice, modifier):
    assert DamageCode.parse(text) == DamageCode(dice, modifier)


@pytest.mark.parametrize("text", ["3X", "T+2", "3T+", ""])
def test_bad_damage_codes(text):
    with pytest.raises(RollSyntaxError):
        DamageCode.parse(text)


def test_damage_code_limits():
    with pytest.raises(RollLimitError):
        DamageCode.parse("101T")
    with pytest.raises(RollLimitError):
        DamageCode.parse("99999999T")


def test_damage_roll_explodes_and_blocks_like_other_rolls():
    roll = damage_roll(scripted(10, 4, 1, 10, 5), DamageCode(4, 2))
    # 10, 4, 1, 10: the 1 blocks one ten, the other throws a 5
    assert roll.dice == NoirDice((10, 4, 1, 10), (5,), 1)
    assert roll.total == 32
    assert roll.render() == "4T+2: [10!, 4, 1, 10!] +[5] (1 spärr) +2 = 32 damage"


# --- modifiers and cooperation ---


def test_complexity_table():
    assert complexity_modifier("routine") == 20
    assert complexity_modifier("Very-Easy") == 10
    assert complexity_modifier("fairly hard") == -2
    assert complexity_modifier("hopeless") == -30
    with pytest.raises(RollError, match="very-hard"):
        complexity_modifier("impossible")


def test_cooperation_gives_two_per_helper():
    assert cooperation_bonus(0) == 0
    assert cooperation_bonus(3) == 6
    with pytest.raises(RollError, match="at most 2"):
        cooperation_bonus(3, max_helpers=2)
    with pytest.raises(RollError):
        cooperation_bonus(-1)
