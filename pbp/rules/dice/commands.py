"""Roll commands in posts: ``/roll 2d6+1``, ``/roll one skill="Short Blade" mod=-2``,
``/roll noir difficulty skill=7 mod=+5``, ``/roll noir opposed skill=6 vs=8``,
``/roll noir damage 3T+2``. Parsing only; `dice.execute` rolls them.

Syntax (keys and kinds are case-insensitive; anything after ``#`` is a label)::

    /roll <expression>                                  generic, see expr
    /roll one [check] skill=S [mod=M]                   2d6 <= S + M
    /roll one contest skill=S vs=V [mod=M] [vsmod=N]    Contest of Skill
    /roll one quick skill=S vs=V [mod=M] [vsmod=N]      Quick Contest
    /roll noir difficulty skill=S [mod=M] [help=H] [force]
    /roll noir opposed skill=S vs=V [mod=M] [vsmod=N] [help=H]
    /roll noir extended skill=S successes=K [mod=M] [help=H] [max=A] [force]
    /roll noir contest skill=S vs=V (best=N | attempts=N) [mod=M] [vsmod=N] [help=H] [max=A]
    /roll noir damage 3T+2

S is a number or a quoted skill name (``skill="Short Blade"``), which the server resolves
against the poster's character into ``score=``. M may be a sum like ``+5-2``; for Noir also
a complexity from the modifier table (``mod=hard``, ``mod=very-easy``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, overload

from pbp.rules.dice.expr import Expression, parse_expression
from pbp.rules.dice.source import RollError, RollLimitError, RollSyntaxError
from pbp.rules.noir.extended import contest_needs
from pbp.rules.noir.resolution import MAX_ATTEMPTS, DamageCode, complexity_modifier

PREFIX = "/roll"
MAX_COMMANDS_PER_POST = 20
MAX_VALUE = 1000  # largest skill, score or modifier
MAX_HELPERS = 20
MAX_NAME = 60
MAX_LINE = 500

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "–": "-", "−": "-"})
_INT = re.compile(r"[+-]?\d{1,6}")
_SUM = re.compile(r"[+-]?\d{1,6}(?:[+-]\d{1,6})*")
_COMMAND_LINE = re.compile(r"^ {0,3}/roll(?:\s|$)", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass(frozen=True)
class SkillRef:
    """The number rolled against: given directly, or a skill name the server resolves."""

    name: str | None = None
    score: int | None = None

    def text(self) -> str:
        if self.name is None:
            return f"skill={self.score}"
        plain = '"' not in self.name and "\\" not in self.name
        out = "skill=" + (f'"{self.name}"' if plain else shlex.quote(self.name))
        return out + (f" score={self.score}" if self.score is not None else "")

    @property
    def label(self) -> str:
        return self.name if self.name else "skill"


@dataclass(frozen=True, kw_only=True)
class RollCommand:
    """A parsed ``/roll`` line. `canonical()` gives text that parses back to an equal command."""

    ruleset: ClassVar[str] = ""
    label: str = ""
    # The line as its poster wrote it (issue #35 item 4): kept beside what pbp resolves, so a
    # named skill's number is added to the resolved command, never to what was typed.
    typed: str = field(default="", compare=False, repr=False)

    def body(self) -> str:
        raise NotImplementedError

    def canonical(self) -> str:
        return f"{PREFIX} {self.body()}" + (f" # {self.label}" if self.label else "")

    @property
    def needs_score(self) -> bool:
        """True when a skill name still has to be resolved against a character sheet."""
        skill = getattr(self, "skill", None)
        return skill is not None and skill.score is None

    def with_score(self, score: int) -> RollCommand:
        """The command with its named skill resolved to the character's score."""
        skill = getattr(self, "skill", None)
        if skill is None or skill.name is None:
            raise RollError("this roll has no named skill to resolve")
        # Only the subclasses have a `skill` field, so the change is passed as a mapping.
        changes: dict[str, Any] = {"skill": SkillRef(skill.name, _bounded(score, "a score"))}
        return replace(self, **changes)


@dataclass(frozen=True, kw_only=True)
class GenericRoll(RollCommand):
    ruleset: ClassVar[str] = "generic"
    expression: Expression

    def body(self) -> str:
        return self.expression.canonical()


def _mod(key: str, value: int) -> str:
    return f" {key}={value:+d}" if value else ""


@dataclass(frozen=True, kw_only=True)
class OneRoll(RollCommand):
    ruleset: ClassVar[str] = "one"
    kind: str = "check"  # check, contest, quick
    skill: SkillRef
    mod: int = 0
    vs: int | None = None
    vs_mod: int = 0

    def body(self) -> str:
        out = f"one {self.kind} {self.skill.text()}" + _mod("mod", self.mod)
        if self.vs is not None:
            out += f" vs={self.vs}" + _mod("vsmod", self.vs_mod)
        return out


@dataclass(frozen=True, kw_only=True)
class NoirRoll(RollCommand):
    ruleset: ClassVar[str] = "noir"
    kind: str  # difficulty, opposed, extended, contest, damage
    skill: SkillRef | None = None
    mod: int = 0
    helpers: int = 0
    vs: int | None = None
    vs_mod: int = 0
    successes: int | None = None
    best: int | None = None
    attempts: int | None = None
    max_attempts: int = MAX_ATTEMPTS
    force: bool = False
    damage: DamageCode | None = None

    def body(self) -> str:
        if self.damage is not None:
            return f"noir damage {self.damage.text()}"
        assert self.skill is not None
        out = f"noir {self.kind} {self.skill.text()}" + _mod("mod", self.mod)
        out += f" help={self.helpers}" if self.helpers else ""
        if self.vs is not None:
            out += f" vs={self.vs}" + _mod("vsmod", self.vs_mod)
        for key, value in (("successes", self.successes), ("best", self.best)):
            out += f" {key}={value}" if value is not None else ""
        out += f" attempts={self.attempts}" if self.attempts is not None else ""
        out += f" max={self.max_attempts}" if self.max_attempts != MAX_ATTEMPTS else ""
        return out + (" force" if self.force else "")


# Which keys each kind accepts, and which it needs.
_ONE_KINDS = {
    "check": ({"skill", "score", "mod"}, {"skill"}),
    "contest": ({"skill", "score", "mod", "vs", "vsmod"}, {"skill", "vs"}),
    "quick": ({"skill", "score", "mod", "vs", "vsmod"}, {"skill", "vs"}),
}
_NOIR_KINDS = {
    "difficulty": ({"skill", "score", "mod", "help", "force"}, {"skill"}),
    "opposed": ({"skill", "score", "mod", "help", "vs", "vsmod"}, {"skill", "vs"}),
    "extended": (
        {"skill", "score", "mod", "help", "successes", "max", "force"},
        {"skill", "successes"},
    ),
    "contest": (
        {"skill", "score", "mod", "help", "vs", "vsmod", "best", "attempts", "max"},
        {"skill", "vs"},
    ),
}


def parse_roll_command(text: str) -> RollCommand:
    """Read one roll command (with or without the leading ``/roll``); `typed` keeps the
    line as written."""
    return replace(_parse(text), typed=text.strip())


def _parse(text: str) -> RollCommand:
    line = text.translate(_QUOTES).strip()
    if len(line) > MAX_LINE:
        raise RollLimitError(f"a roll command may be at most {MAX_LINE} characters")
    if line.lower().startswith(PREFIX):
        line = line[len(PREFIX) :]
    body, _, label = line.partition("#")
    label = " ".join(label.split())
    try:
        words = shlex.split(body)
    except ValueError as error:
        raise RollSyntaxError('a quote is not closed; write skill="Short Blade"') from error
    if not words:
        raise RollSyntaxError("write what to roll, e.g. /roll 2d6+1")
    ruleset = words[0].lower()
    if ruleset == "one":
        return _parse_one(words[1:], label)
    if ruleset == "noir":
        return _parse_noir(words[1:], label)
    return GenericRoll(expression=parse_expression(body), label=label)


def find_roll_commands(post_text: str) -> list[RollCommand]:
    """Every ``/roll`` line of a post, in order.

    A command is a line starting with ``/roll`` (up to three spaces of indent, as Markdown
    allows); indented code, fenced code blocks and quotes (``> /roll``) are not rolled, so
    quoting someone's roll does not roll again. All bad lines are reported at once.
    """
    commands: list[RollCommand] = []
    problems: list[str] = []
    fenced = False
    for number, line in enumerate(post_text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not _COMMAND_LINE.match(line):
            continue
        try:
            commands.append(parse_roll_command(line))
        except RollError as error:
            problems.append(f"line {number}: {error}")
    if problems:
        raise RollSyntaxError("; ".join(problems))
    if len(commands) > MAX_COMMANDS_PER_POST:
        raise RollLimitError(f"a post may roll at most {MAX_COMMANDS_PER_POST} times")
    return commands


# A roll kind's allowed and required argument names.
Kinds = dict[str, tuple[set[str], set[str]]]


def _split_args(words: list[str], kinds: Kinds, default: str | None) -> tuple[str, dict[str, str]]:
    kind = default
    if words and "=" not in words[0] and words[0].lower() in kinds:
        kind, words = words[0].lower(), words[1:]
    if kind is None:
        raise RollSyntaxError("say which roll: " + ", ".join(kinds))
    allowed, needed = kinds[kind]
    args: dict[str, str] = {}
    for word in words:
        key, eq, value = word.partition("=")
        key = key.lower()
        if key not in allowed:
            raise RollSyntaxError(
                f"{kind} does not take {word!r}; it takes " + ", ".join(sorted(allowed))
            )
        if not eq and key != "force":
            raise RollSyntaxError(f"write {key}=..., e.g. skill=7 (quote a name with spaces)")
        if not eq:
            value = "yes"
        if key in args:
            raise RollSyntaxError(f"{key} is given twice")
        if key == "force" and eq:  # a flag, so "force=no" cannot mean the opposite
            raise RollSyntaxError("force is a plain word, without =")
        if eq and not value:
            raise RollSyntaxError(f"{key}= needs a value")
        args[key] = value
    missing = sorted(needed - args.keys())
    if missing:
        raise RollSyntaxError(f"{kind} needs " + " and ".join(f"{m}=" for m in missing))
    return kind, args


def _bounded(value: int, what: str, low: int = -MAX_VALUE, high: int = MAX_VALUE) -> int:
    if not low <= value <= high:
        raise RollLimitError(f"{what} must be from {low} to {high}, not {value}")
    return value


@overload
def _int(args: dict[str, str], key: str, default: int, low: int = ..., high: int = ...) -> int: ...
@overload
def _int(
    args: dict[str, str], key: str, default: None = None, low: int = ..., high: int = ...
) -> int | None: ...
def _int(
    args: dict[str, str],
    key: str,
    default: int | None = None,
    low: int = -MAX_VALUE,
    high: int = MAX_VALUE,
) -> int | None:
    if key not in args:
        return default
    if not _INT.fullmatch(args[key]):
        raise RollSyntaxError(f"{key}= needs a whole number, not {args[key]!r}")
    return _bounded(int(args[key]), key, low, high)


def _modifier(args: dict[str, str], key: str, *, named: bool) -> int:
    """``+5``, ``+5-2`` (summed: a bonus and a penalty can apply at once), or for Noir a
    complexity name from the modifier table."""
    value = args.get(key)
    if value is None:
        return 0
    if _SUM.fullmatch(value):
        return _bounded(sum(int(t) for t in re.findall(r"[+-]?\d+", value)), key)
    if named and not re.search(r"\d", value):
        return complexity_modifier(value)
    raise RollSyntaxError(f"{key}= needs a number like +2 or -3, not {value!r}")


def _skill(args: dict[str, str]) -> SkillRef:
    value = args["skill"].strip()
    if _INT.fullmatch(value):
        if "score" in args:
            raise RollSyntaxError("give the skill as a number or a name with score=, not both")
        return SkillRef(score=_bounded(int(value), "skill"))
    if not value or len(value) > MAX_NAME:
        raise RollSyntaxError(f"a skill name must be 1 to {MAX_NAME} characters")
    return SkillRef(" ".join(value.split()), _int(args, "score"))


def _parse_one(words: list[str], label: str) -> OneRoll:
    kind, args = _split_args(words, _ONE_KINDS, "check")
    return OneRoll(
        kind=kind,
        skill=_skill(args),
        mod=_modifier(args, "mod", named=False),
        vs=_int(args, "vs"),
        vs_mod=_modifier(args, "vsmod", named=False),
        label=label,
    )


def _parse_noir(words: list[str], label: str) -> NoirRoll:
    if words and words[0].lower() == "damage":
        if len(words) < 2:
            raise RollSyntaxError("write the damage code, e.g. /roll noir damage 3T+2")
        return NoirRoll(kind="damage", damage=DamageCode.parse("".join(words[1:])), label=label)
    kind, args = _split_args(words, _NOIR_KINDS, None)
    best = _int(args, "best", low=1, high=MAX_ATTEMPTS)
    attempts = _int(args, "attempts", low=1, high=MAX_ATTEMPTS)
    if kind == "contest":
        contest_needs(best_of=best, attempts=attempts)  # refuse an even best= now, not later
    return NoirRoll(
        kind=kind,
        skill=_skill(args),
        mod=_modifier(args, "mod", named=True),
        helpers=_int(args, "help", 0, 0, MAX_HELPERS),
        vs=_int(args, "vs"),
        vs_mod=_modifier(args, "vsmod", named=True),
        successes=_int(args, "successes", low=1, high=MAX_ATTEMPTS),
        best=best,
        attempts=attempts,
        max_attempts=_int(args, "max", MAX_ATTEMPTS, 1, MAX_ATTEMPTS),
        force="force" in args,
        label=label,
    )
