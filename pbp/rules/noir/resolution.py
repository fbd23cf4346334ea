"""Noir: the d10 resolution engine (rules/noir-en.md, original rules/noir-sv.txt).

Pure code: every function takes a dice source; nothing here reads a clock or global random.
Readings of places where the draft is open are listed in each docstring and marked
"Reading:"; where a game master may decide otherwise there is a keyword to override it.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from pbp.rules.dice.source import DiceSource as DiceSource
from pbp.rules.dice.source import RollError as RollError
from pbp.rules.dice.source import RollLimitError as RollLimitError
from pbp.rules.dice.source import RollSyntaxError as RollSyntaxError

D10 = 10
DIFFICULTY = 20
# A safety stop, not a rule: with fair dice a chain of 100 tens has probability 1e-100.
MAX_EXTRA_DICE = 100
MAX_TIE_BREAKS = 100
MAX_DAMAGE_DICE = 100
MAX_ATTEMPTS = 100
COOPERATION_BONUS = 2

# Noir: "Modifikationer", the guideline table by the action's complexity.
COMPLEXITY: dict[str, int] = {
    "routine": 20,
    "very easy": 10,
    "easy": 5,
    "fairly easy": 2,
    "challenging": 0,
    "fairly hard": -2,
    "hard": -5,
    "very hard": -10,
    "unreasonable": -20,
    "hopeless": -30,
}


class Outcome(enum.Enum):
    EXCEPTIONAL_SUCCESS = "exceptional success"
    SUCCESS = "success"
    FAILURE = "failure"
    EXCEPTIONAL_FAILURE = "exceptional failure"

    @property
    def succeeded(self) -> bool:
        return self in (Outcome.SUCCESS, Outcome.EXCEPTIONAL_SUCCESS)


def _signed(value: int) -> str:
    return f" {value:+d}" if value else ""


def outcome(succeeded: bool, exceptional: bool) -> Outcome:
    """Noir "Exceptionella slag": an exceptional roll turns a success or a failure exceptional."""
    if succeeded:
        return Outcome.EXCEPTIONAL_SUCCESS if exceptional else Outcome.SUCCESS
    return Outcome.EXCEPTIONAL_FAILURE if exceptional else Outcome.FAILURE


@dataclass(frozen=True)
class NoirDice:
    """The d10s of one Noir roll: the base dice, then the extra dice tens added."""

    base: tuple[int, ...]
    extra: tuple[int, ...] = ()
    blocks: int = 0  # spärr: tens whose explosion a one cancelled
    capped: bool = False  # the safety stop ended the chain

    @property
    def faces(self) -> tuple[int, ...]:
        return self.base + self.extra

    @property
    def sum(self) -> int:
        """A ("Alla"): the sum of all dice, exploded dice included."""
        return sum(self.faces)

    @property
    def low(self) -> int:
        """L ("Lägsta"). Reading: "any of the dice in the roll" includes exploded dice."""
        return min(self.faces)

    @property
    def high(self) -> int:
        """H ("Högsta"), over all dice of the roll like L."""
        return max(self.faces)

    @property
    def exceptional(self) -> bool:
        """Noir: exceptional when the two base dice are equal; exploded dice never count."""
        return len(self.base) == 2 and self.base[0] == self.base[1]

    def render(self) -> str:
        text = "[" + ", ".join(f"{f}!" if f == D10 else str(f) for f in self.base) + "]"
        if self.extra:
            text += " +[" + ", ".join(str(f) for f in self.extra) + "]"
        if self.blocks:
            text += f" ({self.blocks} spärr)"
        if self.capped:
            text += " (chain stopped at the safety limit)"
        return text


def roll_d10s(
    dice: DiceSource, count: int, *, spaerr: bool = True, max_extra: int = MAX_EXTRA_DICE
) -> NoirDice:
    """Roll `count` d10 with Noir's tens and ones ("Ettor och tior").

    Every 10 adds one more d10, recursively; every 1 cancels one ten's explosion (spärr).
    Reading: dice are thrown in handfuls as at the table: the base dice, then one extra die
    per uncancelled ten of the previous handful. A one cancels a ten of its own handful; it
    cannot reach back to a ten that has already exploded (that ten threw the one), and a
    handful with more ones than tens adds no dice, so no one is left over for later tens.
    A cancelled ten still counts 10; it only adds no die, so a spärr never raises a total.
    `spaerr=False` turns the ones rule off (for comparison and house rules).
    """
    if count < 1:
        raise RollError("roll at least one die")
    base = tuple(dice.roll(D10) for _ in range(count))
    extra: list[int] = []
    blocks = 0
    handful = base
    capped = False
    while True:
        tens = handful.count(D10)
        cancelled = min(tens, handful.count(1)) if spaerr else 0
        blocks += cancelled
        wanted = tens - cancelled
        if not wanted:
            break
        room = max_extra - len(extra)
        if wanted > room:
            wanted, capped = room, True
        handful = tuple(dice.roll(D10) for _ in range(wanted))
        extra.extend(handful)
        if capped or not handful:
            break
    return NoirDice(base, tuple(extra), blocks, capped)


def cooperation_bonus(helpers: int, *, max_helpers: int | None = None) -> int:
    """Noir "Samarbeten": +2 per qualified helper; the narrator caps how many can help."""
    if helpers < 0:
        raise RollError("the number of helpers cannot be negative")
    if max_helpers is not None and helpers > max_helpers:
        raise RollError(f"at most {max_helpers} can help with this at once, not {helpers}")
    return COOPERATION_BONUS * helpers


def complexity_modifier(name: str) -> int:
    """Noir's modifier table: "hard" -> -5, "routine" -> +20 (hyphens or spaces)."""
    key = " ".join(name.replace("-", " ").replace("_", " ").lower().split())
    if key not in COMPLEXITY:
        raise RollError(
            f"unknown complexity {name!r}; use a number or one of: "
            + ", ".join(k.replace(" ", "-") for k in COMPLEXITY)
        )
    return COMPLEXITY[key]


@dataclass(frozen=True)
class DifficultyRoll:
    """A difficulty roll ("svårighetsslag"): 2d10 + skill + modifier against 20."""

    skill: int
    modifier: int
    dice: NoirDice | None  # None when the success was automatic

    @property
    def automatic(self) -> bool:
        return self.dice is None

    @property
    def total(self) -> int:
        return self.skill + self.modifier + (self.dice.sum if self.dice else 0)

    @property
    def succeeded(self) -> bool:
        return self.automatic or self.total >= DIFFICULTY

    @property
    def outcome(self) -> Outcome:
        return outcome(self.succeeded, bool(self.dice and self.dice.exceptional))

    def render(self) -> str:
        if self.dice is None:
            return (
                f"{self.skill} {self.modifier:+d} >= {DIFFICULTY} without a roll: automatic success"
            )
        sign = ">=" if self.succeeded else "<"
        return (
            f"2T {self.dice.render()} + {self.skill}{_signed(self.modifier)} = {self.total} "
            f"{sign} {DIFFICULTY}: {self.outcome.value} "
            f"(L {self.dice.low}, H {self.dice.high}, A {self.dice.sum})"
        )


def difficulty_roll(
    dice: DiceSource, skill: int, *, modifier: int = 0, automatic: bool = True
) -> DifficultyRoll:
    """Noir "Svårighetsslag": success when 2d10 + skill + modifiers >= 20.

    Noir "Modifikationer": routine actions carry +20 and succeed without a roll. Reading: when
    skill + modifiers already reach 20 no dice are rolled (the taxi driver: 7 + 20 >= 20).
    The narrator can still demand a roll ("under stress") with `automatic=False`.
    """
    if automatic and skill + modifier >= DIFFICULTY:
        return DifficultyRoll(skill, modifier, None)
    return DifficultyRoll(skill, modifier, roll_d10s(dice, 2))


class Side(enum.Enum):
    ACTOR = "actor"
    OPPONENT = "opponent"


@dataclass(frozen=True)
class OpposedRoll:
    """An opposed roll ("motståndsslag") between the actor and an opponent."""

    actor_skill: int
    opponent_skill: int
    actor_modifier: int
    opponent_modifier: int
    actor: NoirDice
    opponent: NoirDice
    tie_breaks: tuple[tuple[int, int], ...] = ()  # (actor's d10, opponent's d10) per round

    @property
    def actor_total(self) -> int:
        return self.actor.sum + self.actor_skill + self.actor_modifier

    @property
    def opponent_total(self) -> int:
        return self.opponent.sum + self.opponent_skill + self.opponent_modifier

    @property
    def decided_by(self) -> str:
        if self.actor_total != self.opponent_total:
            return "total"
        if self.actor_skill != self.opponent_skill:
            return "skill"
        return "tie-break" if self.winner else "narrator"

    @property
    def winner(self) -> Side | None:
        """The higher total; on a tie the higher skill; then the tie-break d10s."""
        a, b = self.actor_total, self.opponent_total
        if a == b:
            a, b = self.actor_skill, self.opponent_skill
        if a == b and self.tie_breaks:
            a, b = self.tie_breaks[-1]
        if a == b:
            return None  # the tie-break safety stop was reached: the narrator decides
        return Side.ACTOR if a > b else Side.OPPONENT

    def outcome_for(self, side: Side) -> Outcome:
        dice = self.actor if side is Side.ACTOR else self.opponent
        return outcome(self.winner is side, dice.exceptional)

    def render(self) -> str:
        text = (
            f"2T {self.actor.render()} + {self.actor_skill}{_signed(self.actor_modifier)} = "
            f"{self.actor_total} vs 2T {self.opponent.render()} + {self.opponent_skill}"
            f"{_signed(self.opponent_modifier)} = {self.opponent_total}"
        )
        if self.decided_by == "skill":
            text += " (tie: higher skill wins)"
        if self.tie_breaks:
            rounds = ", ".join(f"{a} vs {b}" for a, b in self.tie_breaks)
            text += f" (tie: 1T each: {rounds})"
        if self.winner is None:
            return text + ": still tied, the narrator decides"
        text += f": {self.winner.value} wins"
        for side in Side:
            result = self.outcome_for(side)
            if result in (Outcome.EXCEPTIONAL_SUCCESS, Outcome.EXCEPTIONAL_FAILURE):
                text += f"; {side.value}: {result.value}"
        return text


def opposed_roll(
    dice: DiceSource,
    actor_skill: int,
    opponent_skill: int,
    *,
    actor_modifier: int = 0,
    opponent_modifier: int = 0,
) -> OpposedRoll:
    """Noir "Motståndsslag": both roll 2d10 + skill; the higher total wins.

    Ties: the higher skill total (or attribute) wins; if equal, each rolls 1d10 and the
    higher wins, repeated while tied. Reading: "skill total" is the character's value before
    this roll's situational modifiers, and the tie-break d10s neither explode nor block.
    """
    actor = roll_d10s(dice, 2)
    opponent = roll_d10s(dice, 2)
    tie_breaks: list[tuple[int, int]] = []
    tied = (
        actor.sum + actor_skill + actor_modifier
        == opponent.sum + opponent_skill + opponent_modifier
        and actor_skill == opponent_skill
    )
    while tied and len(tie_breaks) < MAX_TIE_BREAKS:
        tie_breaks.append((dice.roll(D10), dice.roll(D10)))
        tied = tie_breaks[-1][0] == tie_breaks[-1][1]
    return OpposedRoll(
        actor_skill,
        opponent_skill,
        actor_modifier,
        opponent_modifier,
        actor,
        opponent,
        tuple(tie_breaks),
    )


_DAMAGE = re.compile(r"^\s*(\d+)\s*(?:t|d10)\s*(?:([+-])\s*(\d+))?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class DamageCode:
    """A damage code ("skadevärde") such as 3T+2: that many d10, plus or minus a number."""

    dice: int
    modifier: int = 0

    @classmethod
    def parse(cls, text: str) -> DamageCode:
        match = _DAMAGE.match(text.replace("–", "-").replace("−", "-"))
        if not match:
            raise RollSyntaxError(
                f"could not read the damage code {text!r}; write it like 3T+2 or 2T-1"
            )
        count = int(match[1]) if len(match[1]) <= 4 else MAX_DAMAGE_DICE + 1
        if not 1 <= count <= MAX_DAMAGE_DICE:
            raise RollLimitError(f"a damage code may roll 1 to {MAX_DAMAGE_DICE} dice")
        amount = int(match[3]) if match[3] else 0
        if amount > 1000 or len(match[3] or "") > 4:
            raise RollLimitError("a damage modifier may be at most 1000")
        return cls(count, -amount if match[2] == "-" else amount)

    def text(self) -> str:
        return f"{self.dice}T" + (f"{self.modifier:+d}" if self.modifier else "")


@dataclass(frozen=True)
class DamageRoll:
    code: DamageCode
    dice: NoirDice

    @property
    def total(self) -> int:
        """Reading: the draft sets no floor, so a large minus could go below zero; we keep it."""
        return self.dice.sum + self.code.modifier

    def render(self) -> str:
        mod = f" {self.code.modifier:+d}" if self.code.modifier else ""
        return f"{self.code.text()}: {self.dice.render()}{mod} = {self.total} damage"


def damage_roll(dice: DiceSource, code: DamageCode) -> DamageRoll:
    """Noir "Skadevärde": roll the code's d10s with tens and ones, then add the modifier."""
    return DamageRoll(code, roll_d10s(dice, code.dice))
