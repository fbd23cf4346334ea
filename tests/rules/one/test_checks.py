"""ONE (rules/one.txt): character creation, checks and contests with fixed dice, wounds, healing."""

import pytest

from pbp.rules.dice.source import ScriptedDice
from pbp.rules.one import (
    SKILLS,
    Condition,
    HealingRate,
    OneSheet,
    SheetError,
    check,
    condition_for,
    contest_of_skill,
    heal,
    healing_rate,
    quick_contest,
    skill_base,
    skill_cost,
    wound_modifier,
)

STATS = {"STR": 6, "INT": 8, "DEX": 10, "HLT": 6, "SPD": 5}  # 35


def test_skill_cost_is_triangular():
    """“If you wish to jump straight from Base to Base+5, it doesn't cost five points, because you
    must also pay for Base+4, Base+3, Base+2, and Base+1, for a total of 15 points.”
    """
    assert [skill_cost(n) for n in range(6)] == [0, 1, 3, 6, 10, 15]


def test_skill_base_is_stat_over_three_discarding_fractions():
    """“you have a Base to start from, equal to (Stat / 3), discarding any fraction”"""
    assert [skill_base(v) for v in (2, 5, 6, 11, 12)] == [0, 1, 2, 3, 4]
    assert skill_base(None) == 0


def test_no_default_skills_are_those_without_a_stat():
    """“If the Skill you want is listed under "No Default", it means that your Base is 0.” Reading:
    the skills printed without a Stat (Engineering, Medical, Navigation) are the No Default ones.
    """
    assert sorted(n for n, stat in SKILLS.items() if stat is None) == [
        "Engineering",
        "Medical",
        "Navigation",
    ]
    assert SKILLS["Polearm"] == "STR" and SKILLS["Short Blade"] == "DEX"


def test_a_valid_sheet():
    """“Hit Points are equal to (HLT * 3)” and “Each character begins with 35 Points to spend on
    Skills.”
    """
    sheet = OneSheet("Larry", STATS, {"Short Blade": 5, "Medical": 3, "Hacking": 4})
    assert sheet.hit_points == 18
    assert sheet.skill_points_spent == 15 + 6 + 10
    assert sheet.score("Short Blade") == 10 // 3 + 5
    assert sheet.score("short  blade") == 8  # names are matched loosely
    assert sheet.score("Medical") == 3  # No Default: base 0
    assert sheet.score("Club") == 3  # unbought: its base
    assert sheet.score("dex") == 10  # stats can be rolled against too


def test_a_sheet_lists_everything_wrong_at_once():
    """“as long as the Stats end up inside the human range of 2 to 12” Reading: every problem is
    listed at once, not the first only.
    """
    with pytest.raises(SheetError) as caught:
        OneSheet(
            "Moe",
            {"STR": 13, "INT": 1, "DEX": 10, "HLT": 6, "SPD": 5},
            {"Short Blade": 8, "Basket Weaving": 1},
        )
    problems = caught.value.problems
    assert "STR is 13; stats must be 2 to 12" in problems
    assert "INT is 1; stats must be 2 to 12" in problems
    assert "unknown skill 'Basket Weaving'" in problems
    assert "skills cost 37 points; only 35 to spend" in problems
    assert len(problems) == 4  # 13 + 1 + 10 + 6 + 5 = 35, so the total is fine


def test_stats_must_use_exactly_35_points():
    """“You therefore have 35 points to split up among the five Stats any way you desire”"""
    with pytest.raises(SheetError, match="add up to 34; they must use exactly 35"):
        OneSheet("Curly", {**STATS, "SPD": 4})


def test_missing_and_unknown_stats():
    """“There are five defining statistics for all characters”"""
    with pytest.raises(SheetError) as caught:
        OneSheet("Shemp", {"STR": 7, "INT": 7, "DEX": 7, "HLT": 7, "LUCK": 7})
    assert caught.value.problems == (
        "missing stats: SPD",
        "unknown stats: LUCK (use STR INT DEX HLT SPD)",
    )


def test_a_gm_can_grant_a_bigger_budget_and_custom_skills():
    """“and most GMs pick one engine and translate the settings from other RPGs to it” Reading: a GM
    may change the budgets and the skill list.
    """
    sheet = OneSheet(
        "Groc",
        {"STR": 12, "INT": 4, "DEX": 10, "HLT": 9, "SPD": 5},
        {"Club": 8},
        skill_list={**SKILLS, "Tracking": "INT"},
        stat_points=40,
        skill_points=40,
    )
    assert sheet.score("Club") == 3 + 8
    assert sheet.score("Tracking") == 1


def test_sheets_are_frozen():
    """Reading: a stored sheet is a value; changing it means making a new one."""
    sheet = OneSheet("Larry", STATS)
    with pytest.raises(AttributeError):
        sheet.name = "Moe"
    with pytest.raises(TypeError):
        sheet.stats["STR"] = 12


def test_unknown_skill_lookup():
    """“Look at the Skill List below.” Reading: a skill not on the (GM's) list is an error that
    names it.
    """
    with pytest.raises(SheetError, match="no skill or stat called 'Basket Weaving'"):
        OneSheet("Larry", STATS).score("Basket Weaving")


def test_check_succeeds_at_or_under_the_target():
    """“Was your roll lower than or equal to your skill? You succeeded” and “the GM may assign a -1
    penalty to your pistol shot for distance or darkness, making it more difficult for you to
    succeed”
    """
    assert check(ScriptedDice([3, 3]), 8, modifier=-2).succeeded  # 6 <= 6
    failed = check(ScriptedDice([4, 3]), 8, modifier=-2)
    assert not failed.succeeded
    assert failed.render() == "2d6 [4, 3] = 7 > 6: failure"


def test_contest_of_skill_needs_the_actor_to_succeed_and_the_opponent_to_fail():
    """“Not only do you have to succeed at using your Skill, but your opponent has to fail at using
    his.”
    """
    assert contest_of_skill(ScriptedDice([3, 3, 5, 5]), 8, 7).succeeded
    blocked = contest_of_skill(ScriptedDice([3, 3, 2, 2]), 8, 7)
    assert not blocked.succeeded and blocked.opponent.succeeded


def test_contest_of_skill_rolls_no_defence_after_a_miss():
    """“if you swing a sword at your opponent and make your Skill roll, it doesn’t necessarily mean
    that you’ve hit. If your opponent can defend, and make his own Skill roll, then he blocks
    your shot.” Reading: after a miss there is nothing to block, so no defence is rolled.
    """
    dice = ScriptedDice([6, 6])
    contest = contest_of_skill(dice, 8, 7)
    assert not contest.succeeded
    assert contest.opponent is None
    assert dice.remaining == 0


def test_undefended_contest_is_a_check():
    """“If your opponent can defend” Reading: with no defence the attack is a plain roll against the
    skill.
    """
    assert contest_of_skill(ScriptedDice([2, 2]), 8, None).succeeded


def test_quick_contest_higher_total_wins_and_ties_go_to_the_gm():
    """“Both parties roll two dice and add their Skill. The highest total wins, with ties being
    interpreted by the GM.”
    """
    grab = quick_contest(ScriptedDice([3, 4, 5, 5]), 9, 6)
    assert (grab.actor_total, grab.opponent_total, grab.winner) == (16, 16, None)
    assert "the GM decides" in grab.render()
    assert quick_contest(ScriptedDice([6, 6, 1, 1]), 3, 12).winner == "actor"  # 15 vs 14
    assert quick_contest(ScriptedDice([1, 1, 6, 6]), 12, 3).winner == "opponent"


def test_groc_the_caveman():
    """“Groc the Caveman has a Health of 9 (hardy soul!) He therefore has 27 (9 * 3) Hit Points.”
    then 11, 8 and 8 points of damage: “Groc is now dead. Poor Groc.”
    """
    hlt, lost = 9, 0
    assert condition_for(lost, hlt) is Condition.UNHURT
    lost += 11  # the dienonichus
    assert 27 - lost == 16
    assert condition_for(lost, hlt) is Condition.WOUNDED
    assert wound_modifier(lost, hlt) == -2
    lost += 8  # the smilodon
    assert 27 - lost == 8
    assert condition_for(lost, hlt) is Condition.UNCONSCIOUS
    lost += 8  # the procompsognathids
    assert condition_for(lost, hlt) is Condition.DEAD


@pytest.mark.parametrize(
    "lost, expected",
    [
        (0, Condition.UNHURT),
        (1, Condition.HURT),
        (9, Condition.WOUNDED),
        (17, Condition.WOUNDED),
        (18, Condition.UNCONSCIOUS),
        (27, Condition.DEAD),
    ],
)
def test_wound_thresholds_are_reached_at_hlt_multiples(lost, expected):
    """“Losing your Health in Hit Points causes you to become wounded” … “Losing twice your Health
    in Hit Points causes you to fall unconscious” … “Losing three times your Health causes you to
    die” Reading: losing exactly HLT is enough (the summary's “Losing your Health”), not the
    example's “more than”.
    """
    assert condition_for(lost, 9) is expected


@pytest.mark.parametrize(
    "lost, care, rate",
    [
        (3, False, HealingRate(1, "day")),
        (3, True, HealingRate(2, "day")),
        (10, False, HealingRate(1, "week")),
        (10, True, HealingRate(2, "week")),
        (20, False, HealingRate(-1, "hour")),
        (20, True, HealingRate(1, "week")),
        (0, True, HealingRate(0, "day")),
    ],
)
def test_healing_rates(lost, care, rate):
    """“Characters who took damage, but were not reduced to wounded level regain one Hit Point per
    day, or two per day if under constant medical care” “Characters who are reduced to wounded
    level regain one Hit Point per week without constant medical care, or two per week if under
    constant medical care.” “will continue to lose one Hit Point per hour until they die. They
    regain one Hit Point per week while under constant care.”
    """
    assert healing_rate(lost, 10, care=care) == rate


def test_healing_speeds_up_once_above_wounded():
    # HLT 10, lost 11: wounded, 1 a week; after a week 10 lost (still wounded), after two
    # weeks 9 lost (hurt), then 1 a day.
    """“Once they are healed to above wounded status, they heal faster, as above.” Reading: a week's
    point is paid after 7 whole days.
    """
    assert heal(11, 10, days=6, care=False) == 11
    assert heal(11, 10, days=7, care=False) == 10
    assert heal(11, 10, days=14, care=False) == 9
    assert heal(11, 10, days=16, care=False) == 7
    assert heal(3, 10, days=10, care=True) == 0


def test_unconscious_without_care_bleeds_to_death_and_with_care_wakes_up():
    """“These characters cannot regain Hit Points outside constant medical care, and will continue
    to lose one Hit Point per hour until they die.” “Once they are healed above their Health in
    Hit Points, they will awaken and start to heal faster, as above.”
    """
    assert heal(20, 10, days=1, care=False) == 30  # 1 an hour: dead within the day
    assert condition_for(heal(20, 10, days=1, care=False), 10) is Condition.DEAD
    assert heal(20, 10, days=7, care=True) == 19  # awake again (HP 11 > HLT 10)
    assert condition_for(19, 10) is Condition.WOUNDED
