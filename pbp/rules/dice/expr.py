"""Generic dice expressions: parse -> small AST -> evaluate with a dice source -> render.

The documented subset (case-insensitive, spaces allowed between terms)::

    expression := [+|-] term ((+|-) term)*
    term       := dice | integer
    dice       := [count] "d" sides ["!"] [("kh"|"kl") keep] [(">="|"<="|">"|"<"|"=") target]

* ``NdM``: N dice (default 1) of M sides; ``+K`` / ``-K`` add or subtract a number.
* ``!``: every die showing its highest face adds another die, which may explode again.
* ``khK`` / ``klK``: keep the K highest / lowest dice (after explosions), drop the rest.
* ``>=T`` and friends: the term counts the kept dice meeting the target instead of adding them.

We parse this ourselves rather than through the `d20` package: its released version (1.1.2)
draws from the module-global ``random`` and needs the abandoned `lark-parser` 0.9, whose import
warns (``sre_parse`` is deprecated). See `dice.py` for the full reasoning.

Sizes are bounded so a post cannot ask the server for a billion dice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pbp.rules.dice.source import DiceSource, RollLimitError, RollSyntaxError

MAX_DICE = 100  # base dice in one expression
MAX_SIDES = 1000
MAX_EXPLOSIONS = 100  # extra dice from "!" in one expression; a safety stop, never a rule
MAX_TERMS = 20
MAX_NUMBER = 100_000  # largest constant or target number
MAX_LENGTH = 200

_DICE = re.compile(
    r"(?P<count>\d+)?d(?P<sides>\d+)(?P<explode>!)?"
    r"(?:k(?P<keep_dir>[hl])(?P<keep>\d+))?"
    r"(?:(?P<cmp>>=|<=|>|<|=)(?P<target>\d+))?"
)
_NUMBER = re.compile(r"\d+")
_SIGN = re.compile(r"\s*([+-])\s*")

_COMPARE = {
    ">=": lambda v, t: v >= t,
    "<=": lambda v, t: v <= t,
    ">": lambda v, t: v > t,
    "<": lambda v, t: v < t,
    "=": lambda v, t: v == t,
}


@dataclass(frozen=True)
class DiceTerm:
    """``[count]d<sides>[!][kh|kl keep][cmp target]`` with the sign it is added with."""

    sign: int
    count: int
    sides: int
    explode: bool = False
    keep: tuple[str, int] | None = None  # ("h" or "l", how many)
    target: tuple[str, int] | None = None  # (comparison, number)

    def text(self) -> str:
        out = f"{self.count}d{self.sides}" + ("!" if self.explode else "")
        if self.keep:
            out += f"k{self.keep[0]}{self.keep[1]}"
        if self.target:
            out += f"{self.target[0]}{self.target[1]}"
        return out


@dataclass(frozen=True)
class NumberTerm:
    sign: int
    value: int

    def text(self) -> str:
        return str(self.value)


Term = DiceTerm | NumberTerm


@dataclass(frozen=True)
class Expression:
    terms: tuple[Term, ...]

    def canonical(self) -> str:
        """Lower case, no spaces; parses back to an equal expression."""
        out = ""
        for i, term in enumerate(self.terms):
            sign = "-" if term.sign < 0 else ("+" if i else "")
            out += sign + term.text()
        return out


def parse_expression(text: str) -> Expression:
    """Read a generic expression; `RollSyntaxError` / `RollLimitError` say what to fix."""
    source = text.strip().lower()
    if not source:
        raise RollSyntaxError("write what to roll, e.g. /roll 2d6+1")
    if len(source) > MAX_LENGTH:
        raise RollLimitError(f"a roll expression may be at most {MAX_LENGTH} characters")
    terms: list[Term] = []
    pos = 0
    while pos < len(source):
        sign = 1
        match = _SIGN.match(source, pos)
        if match:
            sign = -1 if match.group(1) == "-" else 1
            pos = match.end()
        elif terms:
            raise RollSyntaxError(
                f"expected + or - before {source[pos:]!r}; a roll looks like 2d6+1 "
                "(put a comment after #)"
            )
        term, pos = _parse_term(source, pos, sign)
        terms.append(term)
        pos = _skip_spaces(source, pos)
        if len(terms) > MAX_TERMS:
            raise RollLimitError(f"a roll may have at most {MAX_TERMS} terms")
    _check_dice(sum(t.count for t in terms if isinstance(t, DiceTerm)))
    return Expression(tuple(terms))


def _check_dice(count: int) -> None:
    """The one dice limit and its one message, for a term and for the whole roll."""
    if count > MAX_DICE:
        raise RollLimitError(f"a roll may use at most {MAX_DICE} dice, this one asks for {count}")


def _skip_spaces(source: str, pos: int) -> int:
    while pos < len(source) and source[pos].isspace():
        pos += 1
    return pos


def _parse_term(source: str, pos: int, sign: int) -> tuple[Term, int]:
    match = _DICE.match(source, pos)
    if match:
        return _dice_term(match, sign), match.end()
    match = _NUMBER.match(source, pos)
    if match and not source[match.end() : match.end() + 1].isalpha():
        return NumberTerm(sign, _bounded(match.group(), "a number")), match.end()
    rest = source[pos:] or "the end"
    raise RollSyntaxError(
        f"could not read {rest!r}: write dice as NdM (2d6), optionally with ! (explode), "
        "kh3 / kl1 (keep highest / lowest) and >=8 (count successes)"
    )


def _bounded(digits: str, what: str) -> int:
    if len(digits) > 6 or int(digits) > MAX_NUMBER:
        raise RollLimitError(f"{what} may be at most {MAX_NUMBER:,}")
    return int(digits)


def _dice_term(match: re.Match[str], sign: int) -> DiceTerm:
    # Count, sides and keep have limits of their own (checked here), so they are read whole
    # rather than through `_bounded`: a 7-digit count must hear the dice limit, not the
    # constants' one. The expression's length limit keeps these integers small.
    count = int(match["count"]) if match["count"] else 1
    sides = int(match["sides"])
    if count < 1:
        raise RollSyntaxError("roll at least one die (1d6, not 0d6)")
    _check_dice(count)
    if not 1 <= sides <= MAX_SIDES:
        raise RollLimitError(f"a die may have 1 to {MAX_SIDES} sides, not {sides}")
    explode = bool(match["explode"])
    if explode and sides < 2:
        raise RollSyntaxError("a d1 would explode forever; explode dice of 2 or more sides")
    keep = None
    if match["keep"] is not None:
        amount = int(match["keep"])
        if not 1 <= amount <= count:
            raise RollSyntaxError(f"keep between 1 and {count} of {count}d{sides}, not {amount}")
        keep = (match["keep_dir"], amount)
    target = None
    if match["cmp"]:
        target = (match["cmp"], _bounded(match["target"], "a target number"))
    return DiceTerm(sign, count, sides, explode, keep, target)


@dataclass(frozen=True)
class DieRoll:
    """One die within a term: its face and what happened to it."""

    value: int
    exploded: bool = False  # showed the highest face and added a die
    extra: bool = False  # was added by an explosion
    kept: bool = True
    hit: bool | None = None  # met the target (only for target terms)


@dataclass(frozen=True)
class TermResult:
    term: Term
    dice: tuple[DieRoll, ...]
    value: int  # the signed contribution to the total

    def render(self) -> str:
        if isinstance(self.term, NumberTerm):
            return str(self.term.value)
        shown = []
        for die in self.dice:
            face = f"{die.value}" + ("!" if die.exploded else "") + ("*" if die.hit else "")
            shown.append(face if die.kept else f"({face})")
        return f"{self.term.text()} [{', '.join(shown)}]"


@dataclass(frozen=True)
class ExpressionResult:
    expression: Expression
    terms: tuple[TermResult, ...]
    total: int
    capped: bool  # the explosion safety stop was reached

    def render(self) -> str:
        """``2d6+1 [3, 5] + 1 = 9``: ``6!`` exploded, ``(2)`` dropped, ``9*`` a success."""
        out = ""
        for i, term in enumerate(self.terms):
            sign = " - " if term.term.sign < 0 else (" + " if i else "")
            out += sign + term.render()
        successes = any(isinstance(t.term, DiceTerm) and t.term.target for t in self.terms)
        out += f" = {self.total}" + (" successes" if successes else "")
        return out + (" (explosions stopped at the safety limit)" if self.capped else "")


def evaluate(expression: Expression, dice: DiceSource) -> ExpressionResult:
    """Roll every term left to right; deterministic for a given dice source."""
    budget = [MAX_EXPLOSIONS]
    results = tuple(_evaluate_term(term, dice, budget) for term in expression.terms)
    return ExpressionResult(
        expression, results, sum(r.value for r in results), capped=budget[0] <= 0
    )


def _evaluate_term(term: Term, dice: DiceSource, budget: list[int]) -> TermResult:
    if isinstance(term, NumberTerm):
        return TermResult(term, (), term.sign * term.value)
    rolls = [DieRoll(dice.roll(term.sides)) for _ in range(term.count)]
    if term.explode:
        rolls = _explode(rolls, term.sides, dice, budget)
    if term.keep:
        rolls = _keep(rolls, *term.keep)
    if term.target:
        compare, number = term.target
        rolls = [
            DieRoll(r.value, r.exploded, r.extra, r.kept, _COMPARE[compare](r.value, number))
            if r.kept
            else r
            for r in rolls
        ]
        value = sum(1 for r in rolls if r.hit)
    else:
        value = sum(r.value for r in rolls if r.kept)
    return TermResult(term, tuple(rolls), term.sign * value)


def _explode(
    rolls: list[DieRoll], sides: int, dice: DiceSource, budget: list[int]
) -> list[DieRoll]:
    """Each highest face adds a die right after the current ones, until none is left to add."""
    out = list(rolls)
    i = 0
    while i < len(out):
        if out[i].value == sides and budget[0] > 0:
            budget[0] -= 1
            out[i] = DieRoll(sides, exploded=True, extra=out[i].extra)
            out.append(DieRoll(dice.roll(sides), extra=True))
        i += 1
    return out


def _keep(rolls: list[DieRoll], direction: str, amount: int) -> list[DieRoll]:
    """Keep the `amount` highest ("h") or lowest ("l"); among equal faces the earlier die stays."""
    order = sorted(
        range(len(rolls)),
        key=lambda i: (-rolls[i].value if direction == "h" else rolls[i].value, i),
    )
    kept = set(order[:amount])
    return [
        DieRoll(r.value, r.exploded, r.extra, kept=i in kept, hit=r.hit)
        for i, r in enumerate(rolls)
    ]
