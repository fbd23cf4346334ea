"""ONE (rules/one.txt): skill checks, contests, wounds, healing, and the combat schedule.

The facade: `from pbp.rules import one` gives the names of `checks`, the ruleset's
entry point; `combat` hold the rest.
"""

from pbp.rules.one.checks import (
    SKILL_POINTS,
    SKILLS,
    STAT_POINTS,
    STATS,
    WOUND_PENALTY,
    Check,
    Condition,
    ContestOfSkill,
    DiceSource,
    HealingRate,
    OneSheet,
    QuickContest,
    RulesError,
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

__all__ = [
    "DiceSource",
    "RulesError",
    "STATS",
    "STAT_POINTS",
    "SKILL_POINTS",
    "WOUND_PENALTY",
    "SKILLS",
    "SheetError",
    "skill_cost",
    "skill_base",
    "OneSheet",
    "Check",
    "check",
    "ContestOfSkill",
    "contest_of_skill",
    "QuickContest",
    "quick_contest",
    "Condition",
    "condition_for",
    "wound_modifier",
    "HealingRate",
    "healing_rate",
    "heal",
]
