"""ONE combat: the Speed chart, the segment tracker, and the Larry and Curly example."""

import pytest

from pbp.rules.dice_source import ScriptedDice
from pbp.rules.one import Condition
from pbp.rules.one_combat import (
    Act,
    CombatError,
    Fighter,
    Shield,
    acting,
    action_segments,
    actions_in_segment,
    attack_target,
    declare,
    defence_target,
    effective_speed,
    lose_hit_points,
    next_segment,
    plan,
    resolve_attack,
    start_combat,
)

ATTACK, DEFEND, MOVE, READY = Act.ATTACK, Act.DEFEND, Act.MOVE, Act.READY


# --- the Speed chart ---


def test_speed_7_and_8_as_in_the_worked_example():
    assert action_segments(7) == (2, 3, 5, 7, 9, 10, 12)
    assert action_segments(8) == (2, 3, 5, 6, 8, 9, 11, 12)


@pytest.mark.parametrize("speed", range(1, 13))
def test_speed_s_acts_s_times_in_distinct_segments_ending_in_12(speed):
    segments = action_segments(speed)
    assert len(segments) == len(set(segments)) == speed
    assert segments[-1] == 12
    assert all(1 <= s <= 12 for s in segments)


def test_speed_chart_extremes():
    assert action_segments(1) == (12,)
    assert action_segments(2) == (6, 12)
    assert action_segments(3) == (4, 8, 12)
    assert action_segments(12) == tuple(range(1, 13))


@pytest.mark.parametrize(
    "speed, doubles",
    [(13, {12}), (14, {6, 12}), (15, {4, 8, 12})],
)
def test_speeds_above_12_act_every_segment_and_twice_where_printed(speed, doubles):
    for segment in range(1, 13):
        assert actions_in_segment(speed, segment) == (2 if segment in doubles else 1)
    assert len(action_segments(speed)) == speed


def test_speed_outside_the_chart():
    with pytest.raises(CombatError, match="1 to 15"):
        action_segments(16)
    with pytest.raises(CombatError):
        action_segments(0)


def test_armour_lowers_speed_but_not_below_one():
    assert effective_speed(9, 1) == 8
    assert effective_speed(2, 5) == 1


# --- plans ---


def test_a_movement_is_the_only_action():
    assert plan(MOVE).moved
    with pytest.raises(CombatError, match="only action"):
        plan(MOVE, ATTACK)


def test_two_hand_actions_at_minus_two_each():
    assert plan(ATTACK, DEFEND).penalty == -2
    assert plan(ATTACK).penalty == 0
    assert plan("attack", "attack").acts == (ATTACK, ATTACK)
    with pytest.raises(CombatError, match="two hands"):
        plan(ATTACK, ATTACK, DEFEND)
    with pytest.raises(CombatError):
        plan()


# --- Larry and Curly (ONE's worked example, segments 1-7) ---

LARRY = Fighter("Larry", speed=7, hlt=10, shield=Shield.SMALL)  # 30 HP, Short Blade 8
CURLY = Fighter("Curly", speed=9, hlt=8, armour=2, armour_weight=1)  # 24 HP, Short Blade 10


def test_larry_and_curly():
    state = start_combat([LARRY, CURLY])
    assert state.fighter("Curly").speed_now == 8

    # Segment 1: neither is fast enough.
    assert acting(state) == {}
    state = next_segment(state)

    # Segment 2: Curly Double Attacks at 10 - 2 - 1 (Larry's shield) = 7; Larry Attacks and
    # Shields at 8 - 2 = 6. Curly rolls 9 (miss) and 6 (hit); Larry's shield roll is 7
    # (fails); Larry rolls 6 (hits). Curly's d6 does 1; Larry's does 4, 2 after armour.
    assert acting(state) == {"Larry": 1, "Curly": 1}
    state = declare(state, "Curly", plan(ATTACK, ATTACK))
    state = declare(state, "Larry", plan(ATTACK, DEFEND))
    assert attack_target(state, "Curly", "Larry", 10).value == 7
    assert attack_target(state, "Larry", "Curly", 8).value == 6
    assert defence_target(state, "Larry", 8).value == 6
    dice = ScriptedDice([4, 5, 3, 3, 3, 4, 1, 3, 3, 4])
    state, first = resolve_attack(state, dice, "Curly", "Larry", attack_skill=10, defence_skill=8)
    assert first.attack.roll == 9 and not first.hit and first.defence is None
    state, second = resolve_attack(state, dice, "Curly", "Larry", attack_skill=10, defence_skill=8)
    assert second.attack.roll == 6 and second.defence.roll == 7 and second.hit
    assert second.taken == 1
    state, larrys = resolve_attack(state, dice, "Larry", "Curly", attack_skill=8)
    assert larrys.attack.roll == 6 and larrys.hit
    assert (larrys.damage, larrys.taken) == (4, 2)
    assert dice.remaining == 0
    assert state.fighter("Larry").hit_points == 29
    assert state.fighter("Curly").hit_points == 22
    state = next_segment(state)

    # Segment 3: Curly Attacks and Blocks, Larry Attacks and Shields; all four rolls succeed.
    # The example gives Curly's block an effective Skill of 7, but by the rules it is
    # 10 - 2 = 8: Larry's shield only makes Larry harder to hit. We follow the rules: the 8
    # Curly rolls for his block would fail at 7 and succeeds at 8.
    state = declare(state, "Curly", plan(ATTACK, DEFEND))
    state = declare(state, "Larry", plan(ATTACK, DEFEND))
    assert attack_target(state, "Curly", "Larry", 10).value == 7
    assert defence_target(state, "Curly", 10).value == 8
    dice = ScriptedDice([3, 4, 2, 3, 2, 4, 4, 4])
    state, curlys = resolve_attack(state, dice, "Curly", "Larry", attack_skill=10, defence_skill=8)
    state, larrys = resolve_attack(state, dice, "Larry", "Curly", attack_skill=8, defence_skill=10)
    assert curlys.attack.succeeded and curlys.defence.succeeded and not curlys.hit
    assert larrys.attack.succeeded and larrys.defence.roll == 8 and larrys.defence.succeeded
    assert not larrys.hit
    assert dice.remaining == 0
    state = next_segment(state)

    # Segment 4: neither acts.
    assert acting(state) == {}
    state = next_segment(state)

    # Segment 5: Curly Double Attacks at 7; Larry one Attack at his full 8. Larry hits and
    # rolls 5 (3 after armour: Curly 19); Curly hits twice for 7 in all (Larry 22).
    state = declare(state, "Curly", plan(ATTACK, ATTACK))
    state = declare(state, "Larry", plan(ATTACK))
    assert attack_target(state, "Larry", "Curly", 8).value == 8
    dice = ScriptedDice([4, 4, 5, 3, 3, 3, 2, 1, 4])
    state, larrys = resolve_attack(state, dice, "Larry", "Curly", attack_skill=8)
    state, c1 = resolve_attack(state, dice, "Curly", "Larry", attack_skill=10)
    state, c2 = resolve_attack(state, dice, "Curly", "Larry", attack_skill=10)
    assert larrys.taken == 3 and c1.taken + c2.taken == 7
    assert state.fighter("Curly").hit_points == 19
    assert state.fighter("Larry").hit_points == 22
    state = next_segment(state)

    # Segment 6: only Curly acts; one of his two attacks hits for 2. Larry, down to 20, has
    # lost his full Health (10) and is wounded.
    assert acting(state) == {"Curly": 1}
    with pytest.raises(CombatError, match="does not act in segment 6"):
        declare(state, "Larry", plan(ATTACK))
    state = declare(state, "Curly", plan(ATTACK, ATTACK))
    dice = ScriptedDice([6, 5, 3, 4, 2])
    state, _ = resolve_attack(state, dice, "Curly", "Larry", attack_skill=10)
    state, _ = resolve_attack(state, dice, "Curly", "Larry", attack_skill=10)
    assert state.fighter("Larry").hit_points == 20
    state = next_segment(state)

    # Segment 7: only Larry acts, wounded: a single Attack at 8 - 2 = 6. He rolls 6 for
    # damage, 4 after armour: Curly is down to 15, has lost 9 >= his Health 8: wounded too.
    assert acting(state) == {"Larry": 1}
    state = declare(state, "Larry", plan(ATTACK))
    target = attack_target(state, "Larry", "Curly", 8)
    assert target.value == 6
    assert ("wounded", -2) in target.reasons
    dice = ScriptedDice([2, 3, 6])
    state, larrys = resolve_attack(state, dice, "Larry", "Curly", attack_skill=8)
    assert larrys.taken == 4
    assert state.fighter("Curly").hit_points == 15
    assert ("wounded", -2) in attack_target(state, "Curly", "Larry", 10).reasons
    assert state.segment == 7 and state.turn == 1


# --- tracker rules ---


def two(fighter_a=None, fighter_b=None, segment=12):
    state = start_combat(
        [fighter_a or Fighter("A", speed=12, hlt=10), fighter_b or Fighter("B", speed=12, hlt=6)]
    )
    while state.segment != segment:
        state = next_segment(state)
    return state


def test_moving_makes_you_harder_to_hit_that_segment():
    state = declare(two(), "B", plan(MOVE))
    state = declare(state, "A", plan(ATTACK))
    target = attack_target(state, "A", "B", 9)
    assert target.value == 8
    assert target.render() == "8 (skill 9, B moved -1)"
    assert not next_segment(state).fighter("B").moved


def test_large_shield_minus_two_to_be_hit_and_minus_one_to_its_bearer():
    a = Fighter("A", speed=12, hlt=10, shield=Shield.LARGE)
    state = declare(declare(two(a), "A", plan(ATTACK, DEFEND)), "B", plan(ATTACK))
    assert attack_target(state, "B", "A", 9).value == 7
    assert attack_target(state, "A", "B", 9).value == 9 - 2 - 1
    assert defence_target(state, "A", 9).value == 9 - 2 - 1


def test_armour_is_subtracted_from_each_attack():
    b = Fighter("B", speed=12, hlt=6, armour=2)
    state = declare(two(None, b), "A", plan(ATTACK, ATTACK))
    dice = ScriptedDice([1, 1, 1, 1, 1, 2])
    state, first = resolve_attack(state, dice, "A", "B", attack_skill=9)
    state, second = resolve_attack(state, dice, "A", "B", attack_skill=9)
    assert (first.taken, second.taken) == (0, 0)  # 1 and 2 points: all stopped
    assert state.fighter("B").lost == 0


def test_unconscious_and_dead_take_effect_at_the_next_segment():
    state = two(segment=2)
    state = lose_hit_points(state, "B", 12)  # 2 x HLT 6
    assert state.fighter("B").down is None and "B" in acting(state)
    state = next_segment(state)
    assert state.fighter("B").down is Condition.UNCONSCIOUS
    assert "B" not in acting(state)
    with pytest.raises(CombatError, match="unconscious"):
        declare(state, "B", plan(ATTACK))
    state = lose_hit_points(state, "B", 6)
    assert state.fighter("B").down is Condition.UNCONSCIOUS
    assert next_segment(state).fighter("B").down is Condition.DEAD


def test_the_turn_wraps_after_segment_12():
    state = next_segment(two(segment=12))
    assert (state.turn, state.segment) == (2, 1)


def test_attacks_and_defends_must_be_declared_and_are_used_up():
    state = declare(two(), "A", plan(ATTACK))
    with pytest.raises(CombatError, match="B has no attack left"):
        resolve_attack(state, ScriptedDice([1, 1]), "B", "A", attack_skill=9)
    state, _ = resolve_attack(state, ScriptedDice([6, 6]), "A", "B", attack_skill=9)
    with pytest.raises(CombatError, match="A has no attack left"):
        resolve_attack(state, ScriptedDice([1, 1]), "A", "B", attack_skill=9)


def test_a_defend_is_spent_only_on_an_attack_that_hit():
    state = declare(declare(two(), "A", plan(ATTACK, ATTACK)), "B", plan(DEFEND))
    dice = ScriptedDice([6, 6, 2, 2, 2, 2])
    state, missed = resolve_attack(state, dice, "A", "B", attack_skill=9, defence_skill=9)
    state, blocked = resolve_attack(state, dice, "A", "B", attack_skill=9, defence_skill=9)
    assert not missed.hit and missed.defence is None
    assert blocked.defence.succeeded and not blocked.hit
    assert state.fighter("B").plans[0].defends_used == 1


def test_double_defend_only_against_melee():
    state = declare(declare(two(), "A", plan(ATTACK)), "B", plan(DEFEND, DEFEND))
    with pytest.raises(CombatError, match="melee"):
        resolve_attack(
            state, ScriptedDice([2, 2]), "A", "B", attack_skill=9, defence_skill=9, missile=True
        )


def test_speed_13_declares_two_actions_in_segment_12():
    fast = Fighter("A", speed=13, hlt=10)
    state = two(fast)
    assert acting(state)["A"] == 2
    state = declare(state, "A", plan(MOVE), plan(ATTACK))
    assert state.fighter("A").moved
    with pytest.raises(CombatError, match="already declared"):
        declare(state, "A", plan(ATTACK))
    with pytest.raises(CombatError, match="has 1 action"):
        declare(state, "B", plan(ATTACK), plan(ATTACK))


def test_names_must_differ_and_exist():
    with pytest.raises(CombatError):
        start_combat([Fighter("A", 5, 5), Fighter("A", 6, 6)])
    with pytest.raises(CombatError, match="nobody called 'C'"):
        two().fighter("C")
