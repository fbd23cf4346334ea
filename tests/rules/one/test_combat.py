"""ONE combat: the Speed chart, the segment tracker, and the Larry and Curly example."""

import math
from fractions import Fraction

import pytest

from pbp.rules.dice.source import ScriptedDice
from pbp.rules.one import Condition
from pbp.rules.one.combat import (
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


def test_speed_7_and_8_in_the_segments_the_worked_example_shows():
    """“Speed: 7 Speed: 9 (reduced to 8 by the armor)”. Segments 1 and 4: “Neither character is
    fast enough to make an action in this segment.” 2, 3 and 5: both act. 6: “Here, Speed
    counts. Only Curly may take an action this round.” 7: “only he can take an action this
    round”. (Segment 8 is test_our_speed_reading_fits_segments_1_to_7_but_not_8.)"""
    shown = range(1, 8)
    assert [s for s in action_segments(7) if s in shown] == [2, 3, 5, 7]
    assert [s for s in action_segments(8) if s in shown] == [2, 3, 5, 6]


def test_speed_7_and_8_after_segment_7_follow_the_reading():
    """Reading: the example stops at segment 8, and the chart lost its columns; segments 8-12
    come from round-half-up(12k/S), an even spread with one rule for every Speed that fits
    segments 1-7 (not 8: see below)."""
    assert action_segments(7) == (2, 3, 5, 7, 9, 10, 12)
    assert action_segments(8) == (2, 3, 5, 6, 8, 9, 11, 12)


@pytest.mark.parametrize("speed", range(1, 13))
def test_speed_s_acts_s_times_in_distinct_segments_ending_in_12(speed):
    """“one combat turn is 12 Segments long” and the chart's row for Speed S prints S ones. Reading:
    they fall in S different segments, the last in segment 12 (the chart's columns are lost).
    """
    segments = action_segments(speed)
    assert len(segments) == len(set(segments)) == speed
    assert segments[-1] == 12
    assert all(1 <= s <= 12 for s in segments)


def test_speed_chart_extremes():
    """Reading: Speeds 1, 2, 3 and 12 divide the turn evenly (“As you can see, a higher Speed means
    you act more often, and have fewer vulnerable Segments.”); the example never shows these
    Speeds.
    """
    assert action_segments(1) == (12,)
    assert action_segments(2) == (6, 12)
    assert action_segments(3) == (4, 8, 12)
    assert action_segments(12) == tuple(range(1, 13))


@pytest.mark.parametrize(
    "speed, doubles",
    [(13, {12}), (14, {6, 12}), (15, {4, 8, 12})],
)
def test_speeds_above_12_act_every_segment_and_twice_where_printed(speed, doubles):
    """“13 1 1 1 1 1 1 1 1 1 1 1 2 14 1 1 1 1 1 2 1 1 1 1 1 2 15 1 1 1 2 1 1 1 2 1 1 1 2” — the only
    rows whose columns the chart kept.
    """
    for segment in range(1, 13):
        assert actions_in_segment(speed, segment) == (2 if segment in doubles else 1)
    assert len(action_segments(speed)) == speed


def test_speed_outside_the_chart():
    """“(Honorable Master, why does the chart go from 1 to 15 when humans may only have Speeds of 2
    to 12?)” — there is no row outside 1 to 15.
    """
    with pytest.raises(CombatError, match="1 to 15"):
        action_segments(16)
    with pytest.raises(CombatError):
        action_segments(0)


def test_armour_lowers_speed_but_not_below_one():
    """“Heavier armors weigh you down, lowering your Speed and making you slower.” Reading: never
    below 1, the chart's lowest row.
    """
    assert effective_speed(9, 1) == 8
    assert effective_speed(2, 5) == 1


# --- plans ---


def test_a_movement_is_the_only_action():
    """“Typically, you can change your "state of position" one time in one Segment. If you do this,
    you cannot take any other action except free actions.”
    """
    assert plan(MOVE).moved
    with pytest.raises(CombatError, match="only action"):
        plan(MOVE, ATTACK)


def test_two_hand_actions_at_minus_two_each():
    """“Since you have two hands, it is possible to do two things (one with each hand) in one
    segment, at a -2 penalty to both actions.”
    """
    assert plan(ATTACK, DEFEND).penalty == -2
    assert plan(ATTACK).penalty == 0
    assert plan("attack", "attack").acts == (ATTACK, ATTACK)
    with pytest.raises(CombatError, match="two hands"):
        plan(ATTACK, ATTACK, DEFEND)
    with pytest.raises(CombatError):
        plan()


# --- Larry and Curly (ONE's worked example, segments 1-8) ---

LARRY = Fighter("Larry", speed=7, hlt=10, shield=Shield.SMALL)  # 30 HP, Short Blade 8
CURLY = Fighter("Curly", speed=9, hlt=8, armour=2, armour_weight=1)  # 24 HP, Short Blade 10


def test_larry_and_curly():
    """“We can now run an example combat. We’ve got two characters, Larry and Curly, who are just
    dying to go at it.” Segments 1-8 as printed, but for Curly's segment-3 block (“Curly Attacks
    and Blocks, with an effective Skill of 7.”; by the rules 8) and segment 8 (“Both combatants
    back away from each other”), where our Speed reading lets only Curly act.
    """
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
    state = next_segment(state)

    # Segment 8: "Both combatants back away". Backing away is a Movement, an action, so both
    # would have to act. Under our reading only Curly (Speed 8) acts in segment 8; Larry
    # (Speed 7) acts next in segment 9. No even spread with one rule for every Speed gives
    # both (see test_no_evenly_spread_reading_fits_all_eight_segments).
    assert acting(state) == {"Curly": 1}
    state = declare(state, "Curly", plan(MOVE))
    assert state.fighter("Curly").moved
    with pytest.raises(CombatError, match="does not act in segment 8"):
        declare(state, "Larry", plan(MOVE))
    state = next_segment(state)
    assert acting(state) == {"Larry": 1, "Curly": 1}  # segment 9: Larry can back away now


# What the worked example shows of each Speed: the segments it acts in, and those it doesn't.
EXAMPLE_ACTS = {7: {2, 3, 5, 7, 8}, 8: {2, 3, 5, 6, 8}}
EXAMPLE_IDLE = {7: {1, 4, 6}, 8: {1, 4, 7}}


def _fits(schedules, segments=range(1, 9)):
    return all(
        {s for s in schedules[speed] if s in segments} == EXAMPLE_ACTS[speed] & set(segments)
        and not (EXAMPLE_IDLE[speed] & set(schedules[speed]))
        for speed in (7, 8)
    )


def _even(speed, offset):
    """Speed S acting every 12/S segments from a common offset (floor of 12k/S + offset)."""
    return {math.floor(Fraction(12 * k, speed) + offset) for k in range(1, speed + 1)}


def _even_by_segment(speed, offset):
    """The same, counted per segment: act in segment j when floor((jS + offset)/12) steps."""
    return {
        j for j in range(1, 13) if (j * speed + offset) // 12 > ((j - 1) * speed + offset) // 12
    }


def test_our_speed_reading_fits_segments_1_to_7_but_not_8():
    """Segment 8: “Both combatants back away from each other, then flee in their separate
    directions.” Reading: round-half-up(12k/S) fits segments 1-7 (“Neither character is fast
    enough to make an action in this segment.”, “Here, Speed counts. Only Curly may take an
    action this round.”, “only he can take an action this round”) but has only Curly act in 8."""
    ours = {speed: set(action_segments(speed)) for speed in (7, 8)}
    assert _fits(ours, range(1, 8))
    assert not _fits(ours)
    assert 8 not in ours[7] and 8 in ours[8]


def test_no_evenly_spread_reading_fits_all_eight_segments():
    """Reading: the chart's rows give only how many segments a Speed acts in (“one combat turn
    is 12 Segments long”). Spreading them evenly with any offset shared by all Speeds, in
    either counting, never fits all eight: Speed 7 must act in 7 and 8 (offset in [2/7, 3/7)
    segments) and Speed 8 must skip 7 (offset in [1/2, 1)); as a share of each Speed's interval,
    [1/6, 1/4) against [1/3, 2/3). Only a Speed-7 row of
    2 3 5 7 8 10 12, phased unlike every other row, would fit; we keep the uniform reading."""
    # Both countings change only at multiples of 1/56 (k) or whole numbers (j): these grids
    # hold a point between every two breakpoints.
    offsets = [Fraction(i, 112) for i in range(-112, 112)]
    assert not any(_fits({s: _even(s, c) for s in (7, 8)}) for c in offsets)
    by_segment = [Fraction(i, 2) for i in range(-24, 24)]
    assert not any(_fits({s: _even_by_segment(s, c) for s in (7, 8)}) for c in by_segment)
    # Nor an offset that is a shared fraction of each Speed's own interval (12/S segments).
    shares = [Fraction(i, 48) for i in range(-48, 48)]
    assert not any(_fits({s: _even(s, 12 * a / s) for s in (7, 8)}) for a in shares)
    # The search can succeed: a row phased for Speed 7 alone fits the example.
    assert _fits({7: _even(7, Fraction(2, 7)), 8: _even(8, Fraction(1, 2))})
    assert _even(7, Fraction(2, 7)) == {2, 3, 5, 7, 8, 10, 12}


# --- tracker rules ---


def two(fighter_a=None, fighter_b=None, segment=12):
    state = start_combat(
        [fighter_a or Fighter("A", speed=12, hlt=10), fighter_b or Fighter("B", speed=12, hlt=6)]
    )
    while state.segment != segment:
        state = next_segment(state)
    return state


def test_moving_makes_you_harder_to_hit_that_segment():
    """“Movement of any type gives enemies a -1 penalty to hit you.”"""
    state = declare(two(), "B", plan(MOVE))
    state = declare(state, "A", plan(ATTACK))
    target = attack_target(state, "A", "B", 9)
    assert target.value == 8
    assert target.render() == "8 (skill 9, B moved -1)"
    assert not next_segment(state).fighter("B").moved


def test_large_shield_minus_two_to_be_hit_and_minus_one_to_its_bearer():
    """“A large shield give the wearer a -2 penalty to be hit, but gives the wearer a -1 penalty to
    attack or defend”
    """
    a = Fighter("A", speed=12, hlt=10, shield=Shield.LARGE)
    state = declare(declare(two(a), "A", plan(ATTACK, DEFEND)), "B", plan(ATTACK))
    assert attack_target(state, "B", "A", 9).value == 7
    assert attack_target(state, "A", "B", 9).value == 9 - 2 - 1
    assert defence_target(state, "A", 9).value == 9 - 2 - 1


def test_armour_is_subtracted_from_each_attack():
    """“If the character wearing the above set of armor was hit by 21 separate, 2-point attacks (a
    firing squad of BB guns, perhaps?), the character would not be hurt at all, since all 42
    points would be blocked by the armor.”
    """
    b = Fighter("B", speed=12, hlt=6, armour=2)
    state = declare(two(None, b), "A", plan(ATTACK, ATTACK))
    dice = ScriptedDice([1, 1, 1, 1, 1, 2])
    state, first = resolve_attack(state, dice, "A", "B", attack_skill=9)
    state, second = resolve_attack(state, dice, "A", "B", attack_skill=9)
    assert (first.taken, second.taken) == (0, 0)  # 1 and 2 points: all stopped
    assert state.fighter("B").lost == 0


def test_unconscious_and_dead_take_effect_at_the_next_segment():
    """“Losing twice your Health in Hit Points causes you to fall unconscious at the beginning of
    the next combat segment” and “Losing three times your Health causes you to die - again, at
    the beginning of the next combat segment.”
    """
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
    """“one combat turn is 12 Segments long”"""
    state = next_segment(two(segment=12))
    assert (state.turn, state.segment) == (2, 1)


def test_attacks_and_defends_must_be_declared_and_are_used_up():
    """“Possible hand actions include Attack (with the weapon in your hand), Defend (with a weapon
    or shield), and Ready” Reading: each declared hand action is used once.
    """
    state = declare(two(), "A", plan(ATTACK))
    with pytest.raises(CombatError, match="B has no attack left"):
        resolve_attack(state, ScriptedDice([1, 1]), "B", "A", attack_skill=9)
    state, _ = resolve_attack(state, ScriptedDice([6, 6]), "A", "B", attack_skill=9)
    with pytest.raises(CombatError, match="A has no attack left"):
        resolve_attack(state, ScriptedDice([1, 1]), "A", "B", attack_skill=9)


def test_a_defend_is_spent_only_on_an_attack_that_hit():
    """“If your opponent can defend, and make his own Skill roll, then he blocks your shot.”
    Reading: the defence is rolled (and spent) only against an attack that succeeded, as Larry's
    one Shield roll meets the attack that hit in segment 2.
    """
    state = declare(declare(two(), "A", plan(ATTACK, ATTACK)), "B", plan(DEFEND))
    dice = ScriptedDice([6, 6, 2, 2, 2, 2])
    state, missed = resolve_attack(state, dice, "A", "B", attack_skill=9, defence_skill=9)
    state, blocked = resolve_attack(state, dice, "A", "B", attack_skill=9, defence_skill=9)
    assert not missed.hit and missed.defence is None
    assert blocked.defence.succeeded and not blocked.hit
    assert state.fighter("B").plans[0].defends_used == 1


def test_double_defend_only_against_melee():
    """“you can take a Double Defend, and defend yourself against two different incoming melee (but
    not missile) attacks in the same round”
    """
    state = declare(declare(two(), "A", plan(ATTACK)), "B", plan(DEFEND, DEFEND))
    with pytest.raises(CombatError, match="melee"):
        resolve_attack(
            state, ScriptedDice([2, 2]), "A", "B", attack_skill=9, defence_skill=9, missile=True
        )


def test_speed_13_declares_two_actions_in_segment_12():
    """“13 1 1 1 1 1 1 1 1 1 1 1 2” — two actions in segment 12, each declared once."""
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
    """Reading: a tracker bookkeeping rule (every fighter has a different name); the rules say
    nothing.
    """
    with pytest.raises(CombatError):
        start_combat([Fighter("A", 5, 5), Fighter("A", 6, 6)])
    with pytest.raises(CombatError, match="nobody called 'C'"):
        two().fighter("C")
