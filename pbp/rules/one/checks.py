"""ONE (rules/one.txt, Anthony Salter 1998): characters, skill checks, contests, wounds, healing.

Pure code: checks take a dice source; the combat segments and tracker are in `combat.py`.
Readings of places where the text is open are marked "Reading:" in the docstrings.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pbp.rules.dice.source import DiceSource as DiceSource
from pbp.rules.errors import RulesError as RulesError

STATS = ("STR", "INT", "DEX", "HLT", "SPD")
STAT_MIN, STAT_MAX = 2, 12
STAT_POINTS = 35
SKILL_POINTS = 35
WOUND_PENALTY = -2

# ONE: the skill list. The stat gives the Base (stat // 3); None is "No Default" (Base 0).
SKILLS: Mapping[str, str | None] = MappingProxyType(
    {
        "Bureaucracy": "INT",
        "Club": "DEX",
        "Disguise": "INT",
        "Engineering": None,
        "Forgery": "INT",
        "Gambling": "INT",
        "Grav Vehicle": "DEX",
        "Gunnery": "INT",
        "Hacking": "INT",
        "Hand Blade": "DEX",
        "Hand Projectile": "INT",
        "Helicopter": "INT",
        "Hovercraft": "DEX",
        "Interplanetary Craft": "INT",
        "Interstellar Craft": "INT",
        "Jet Plane": "INT",
        "Long Blade": "DEX",
        "Long Projectile": "INT",
        "Mechanical": "INT",
        "Medical": None,
        "Motor Watercraft": "DEX",
        "Navigation": None,
        "Pickpocket": "DEX",
        "Polearm": "STR",
        "Prop Plane": "INT",
        "Sail Watercraft": "INT",
        "Short Blade": "DEX",
        "Short Projectile": "INT",
        "Social Engineering": "INT",
        "Streetwise": "INT",
        "Tracked Vehicle": "DEX",
        "Unarmed": "DEX",
        "Wheeled Vehicle": "DEX",
    }
)


class SheetError(RulesError):
    """A character sheet that breaks the creation rules; `problems` lists every one."""

    def __init__(self, problems: list[str]):
        self.problems = tuple(problems)
        super().__init__("; ".join(problems))


def skill_cost(levels: int) -> int:
    """ONE: Base+n costs 1 + 2 + ... + n = n(n+1)/2 points (every level must be paid for)."""
    if levels < 0:
        raise ValueError("skill levels cannot be negative")
    return levels * (levels + 1) // 2


def skill_base(stat_value: int | None) -> int:
    """ONE: Base = stat / 3 discarding fractions; 0 for a "No Default" skill."""
    return 0 if stat_value is None else stat_value // 3


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


@dataclass(frozen=True)
class OneSheet:
    """A ONE character: five stats and the levels bought above Base in each skill.

    Validated on creation (ONE "Character creation"): the five stats are each 2..12 and use
    exactly `stat_points` (35: "35 points to split up among the five Stats"); the skills are
    on `skill_list` and cost at most `skill_points` (35 "to spend"). Reading: stat points
    must all be spent, skill points need not be. A GM can grant other budgets or a custom
    skill list (name -> governing stat, or None for "No Default").
    """

    name: str
    stats: Mapping[str, int]
    skills: Mapping[str, int] = field(default_factory=dict)
    skill_list: Mapping[str, str | None] = field(default_factory=lambda: SKILLS)
    stat_points: int = STAT_POINTS
    skill_points: int = SKILL_POINTS

    def __post_init__(self) -> None:
        stats = {str(k).upper(): v for k, v in self.stats.items()}
        canonical = {_key(n): n for n in self.skill_list}
        skills = {canonical.get(_key(k), k): v for k, v in self.skills.items()}
        object.__setattr__(self, "stats", MappingProxyType(stats))
        object.__setattr__(self, "skills", MappingProxyType(skills))
        problems = self._problems()
        if problems:
            raise SheetError(problems)

    def _problems(self) -> list[str]:
        problems = []
        missing = [s for s in STATS if s not in self.stats]
        unknown = [s for s in self.stats if s not in STATS]
        if missing:
            problems.append("missing stats: " + ", ".join(missing))
        if unknown:
            problems.append("unknown stats: " + ", ".join(unknown) + " (use STR INT DEX HLT SPD)")
        for stat, value in self.stats.items():
            if stat in STATS and not STAT_MIN <= value <= STAT_MAX:
                problems.append(f"{stat} is {value}; stats must be {STAT_MIN} to {STAT_MAX}")
        total = sum(self.stats.values())
        if not missing and not unknown and total != self.stat_points:
            problems.append(f"stats add up to {total}; they must use exactly {self.stat_points}")
        for skill, levels in self.skills.items():
            if skill not in self.skill_list:
                problems.append(f"unknown skill {skill!r}")
            elif levels < 0:
                problems.append(f"{skill}: levels bought cannot be negative ({levels})")
        spent = sum(skill_cost(n) for n in self.skills.values() if n >= 0)
        if spent > self.skill_points:
            problems.append(f"skills cost {spent} points; only {self.skill_points} to spend")
        return problems

    @property
    def hit_points(self) -> int:
        """ONE: Hit Points = HLT x 3."""
        return self.stats["HLT"] * 3

    @property
    def skill_points_spent(self) -> int:
        return sum(skill_cost(n) for n in self.skills.values())

    def base(self, skill: str) -> int:
        stat = self.skill_list[self._skill_name(skill)]
        return skill_base(None if stat is None else self.stats[stat])

    def score(self, name: str) -> int:
        """The number to roll under: a stat's value, or a skill's Base + levels bought.

        An unbought skill is used at its Base (0 for "No Default" skills).
        """
        if name.strip().upper() in self.stats:
            return self.stats[name.strip().upper()]
        skill = self._skill_name(name)
        return self.base(skill) + self.skills.get(skill, 0)

    def _skill_name(self, name: str) -> str:
        for known in self.skill_list:
            if _key(known) == _key(name):
                return known
        raise SheetError([f"{self.name} has no skill or stat called {name!r}"])


@dataclass(frozen=True)
class Check:
    """One ONE skill roll: 2d6 against score + modifiers."""

    faces: tuple[int, int]
    score: int
    modifier: int = 0

    @property
    def target(self) -> int:
        return self.score + self.modifier

    @property
    def roll(self) -> int:
        return sum(self.faces)

    @property
    def succeeded(self) -> bool:
        return self.roll <= self.target

    def render(self) -> str:
        sign = "<=" if self.succeeded else ">"
        word = "success" if self.succeeded else "failure"
        return f"2d6 {list(self.faces)} = {self.roll} {sign} {self.target}: {word}"


def _two_d6(dice: DiceSource) -> tuple[int, int]:
    return dice.roll(6), dice.roll(6)


def check(dice: DiceSource, score: int, *, modifier: int = 0) -> Check:
    """ONE: roll 2d6; a roll lower than or equal to skill + modifiers succeeds."""
    return Check(_two_d6(dice), score, modifier)


@dataclass(frozen=True)
class ContestOfSkill:
    actor: Check
    opponent: Check | None  # None: no defence, or the actor failed so none was needed

    @property
    def succeeded(self) -> bool:
        return self.actor.succeeded and (self.opponent is None or not self.opponent.succeeded)

    def render(self) -> str:
        text = f"actor {self.actor.render()}"
        if self.opponent is not None:
            text += f"; opponent {self.opponent.render()}"
        return text + (": the actor wins" if self.succeeded else ": the actor is stopped")


def contest_of_skill(
    dice: DiceSource,
    actor_score: int,
    opponent_score: int | None,
    *,
    actor_modifier: int = 0,
    opponent_modifier: int = 0,
) -> ContestOfSkill:
    """ONE "Contest of Skill": the actor must succeed and the opponent must fail.

    Reading: the opponent rolls only when the actor succeeded (a failed attack needs no
    block); `opponent_score=None` means nobody opposes (no defence declared).
    """
    actor = check(dice, actor_score, modifier=actor_modifier)
    opponent = None
    if actor.succeeded and opponent_score is not None:
        opponent = check(dice, opponent_score, modifier=opponent_modifier)
    return ContestOfSkill(actor, opponent)


@dataclass(frozen=True)
class QuickContest:
    actor_faces: tuple[int, int]
    opponent_faces: tuple[int, int]
    actor_score: int
    opponent_score: int

    @property
    def actor_total(self) -> int:
        return sum(self.actor_faces) + self.actor_score

    @property
    def opponent_total(self) -> int:
        return sum(self.opponent_faces) + self.opponent_score

    @property
    def winner(self) -> str | None:
        """ "actor", "opponent", or None for a tie, which the GM interprets (ONE)."""
        if self.actor_total == self.opponent_total:
            return None
        return "actor" if self.actor_total > self.opponent_total else "opponent"

    def render(self) -> str:
        result = f"the {self.winner} wins" if self.winner else "a tie: the GM decides"
        return (
            f"2d6 {list(self.actor_faces)} + {self.actor_score} = {self.actor_total} vs "
            f"2d6 {list(self.opponent_faces)} + {self.opponent_score} = "
            f"{self.opponent_total}: {result}"
        )


def quick_contest(dice: DiceSource, actor_score: int, opponent_score: int) -> QuickContest:
    """ONE "Quick Contest": both roll 2d6 and add their skill (with modifiers); higher wins."""
    return QuickContest(_two_d6(dice), _two_d6(dice), actor_score, opponent_score)


class Condition(enum.Enum):
    UNHURT = "unhurt"
    HURT = "hurt"  # took damage, not yet wounded
    WOUNDED = "wounded"
    UNCONSCIOUS = "unconscious"
    DEAD = "dead"


def condition_for(lost: int, hlt: int) -> Condition:
    """ONE wounds: losing HLT hit points wounds, 2 x HLT knocks out, 3 x HLT kills.

    ("Losing your Health in Hit Points causes you to become wounded": lost >= HLT.) The
    one-segment delay for unconsciousness and death is the combat tracker's business.
    """
    if lost >= 3 * hlt:
        return Condition.DEAD
    if lost >= 2 * hlt:
        return Condition.UNCONSCIOUS
    if lost >= hlt:
        return Condition.WOUNDED
    return Condition.HURT if lost > 0 else Condition.UNHURT


def wound_modifier(lost: int, hlt: int) -> int:
    """ONE: a wounded character is at -2 to any action until healed above that level."""
    return WOUND_PENALTY if lost >= hlt else 0


@dataclass(frozen=True)
class HealingRate:
    hit_points: int  # negative: still losing hit points
    per: str  # "day", "week" or "hour"


def healing_rate(lost: int, hlt: int, *, care: bool) -> HealingRate:
    """ONE healing: the rate follows the current level of injury.

    Hurt: 1 HP a day (2 under constant medical care). Wounded: 1 a week (2 with care).
    Unconscious: loses 1 HP an hour without care; regains 1 a week with care. Reading:
    "healed above their Health in Hit Points" means more than HLT hit points left, i.e.
    below the unconscious threshold, where the wounded rate takes over.
    """
    level = condition_for(lost, hlt)
    if level is Condition.DEAD or level is Condition.UNHURT:
        return HealingRate(0, "day")
    if level is Condition.UNCONSCIOUS:
        return HealingRate(1, "week") if care else HealingRate(-1, "hour")
    if level is Condition.WOUNDED:
        return HealingRate(2 if care else 1, "week")
    return HealingRate(2 if care else 1, "day")


def heal(lost: int, hlt: int, *, days: int, care: bool) -> int:
    """Hit points still lost after `days` days at ONE's healing rates, day by day.

    Reading: a weekly rate pays out after seven days spent at that level (the count restarts
    when the level changes); an unconscious character without care loses 24 a day until dead.
    """
    waited = 0
    for _ in range(days):
        level = condition_for(lost, hlt)
        rate = healing_rate(lost, hlt, care=care)
        if rate.per == "hour":
            lost = min(3 * hlt, lost + 24)
        elif rate.per == "day":
            lost = max(0, lost - rate.hit_points)
        else:
            waited += 1
            if waited == 7:
                lost, waited = max(0, lost - rate.hit_points), 0
        if condition_for(lost, hlt) is not level:
            waited = 0
    return lost
