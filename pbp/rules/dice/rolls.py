"""Dice for posts: roll commands, their execution, and the fairness check.

The public face of the dice layer. A post's ``/roll`` lines are parsed when the post is
written (`find_roll_commands`, safe for preview: it rolls nothing) and executed once when it
is submitted, each with the generator derived from the campaign seed and the roll's id::

    result = execute(command, derive_rng(seed, roll_id))
    store(roll_id, result.to_dict())

`execute` is deterministic for a given generator, so `verify_rolls` can recompute every
stored roll once the seed is revealed.

Why our own parser and not `d20` (Avrae's): the release on PyPI (1.1.2) draws every die from
the module-global ``random`` (``random.randrange`` in ``d20.expression.Die._add_roll``); the
``d20/rand.py`` of its main branch is unreleased and is itself one module-level generator.
Either way a per-roll generator means swapping a process-wide global under a lock, a
monkeypatch that breaks silently when d20 moves the call (as main already has). d20 1.1.2 also
pins the abandoned ``lark-parser`` 0.9, whose import raises a DeprecationWarning
(``sre_parse``) that our ``filterwarnings = error`` turns into a failure. The subset we
document (NdM, +/-K, khN/klN, ``!``, ``>=N``) is ~250 lines in `expr`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pbp.rules import noir, one
from pbp.rules.dice.commands import (
    GenericRoll,
    NoirRoll,
    OneRoll,
    RollCommand,
    SkillRef,
    find_roll_commands,
    parse_roll_command,
)
from pbp.rules.dice.expr import ExpressionResult, evaluate
from pbp.rules.dice.source import (
    ALGORITHM,
    Dice,
    DiceSource,
    Face,
    RollError,
    RollLimitError,
    RollSyntaxError,
    ScriptedDice,
    derive_rng,
    seed_commitment,
)
from pbp.rules.noir import extended as noir_extended

__all__ = [
    "ALGORITHM",
    "Dice",
    "DiceSource",
    "Face",
    "GenericRoll",
    "Mismatch",
    "NoirRoll",
    "OneRoll",
    "RollCommand",
    "RollError",
    "RollLimitError",
    "RollResult",
    "RollSyntaxError",
    "ScriptedDice",
    "SkillRef",
    "derive_rng",
    "execute",
    "find_roll_commands",
    "parse_roll_command",
    "seed_commitment",
    "verify_rolls",
]


@dataclass(frozen=True)
class RollResult:
    """An executed roll: every face drawn (in order), the total, the ruleset's reading and a
    one-line rendering for the post."""

    command: RollCommand
    faces: tuple[Face, ...]
    total: int | None
    reading: Mapping[str, Any]
    text: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form for storage and export (faces as ``[sides, value]`` pairs)."""
        return {
            "algorithm": ALGORITHM,
            "ruleset": self.command.ruleset,
            "command": self.command.canonical(),
            "faces": [f.to_list() for f in self.faces],
            "total": self.total,
            "reading": dict(self.reading),
            "text": self.text,
        }


def execute(command: RollCommand, source: random.Random | Dice) -> RollResult:
    """Roll a parsed command with a generator (or a dice source such as `ScriptedDice`).

    A named skill must be resolved first (`command.with_score(...)`).
    """
    dice = source if isinstance(source, Dice) else Dice(source)
    if command.needs_score:
        skill = command.skill  # type: ignore[attr-defined]
        raise RollError(
            f"the roll needs a number for {skill.name!r}: write skill=8, or roll as a "
            "character who has that skill"
        )
    if isinstance(command, GenericRoll):
        total, reading, text = _generic(command, dice)
    elif isinstance(command, OneRoll):
        total, reading, text = _one(command, dice)
    elif isinstance(command, NoirRoll):
        total, reading, text = _noir(command, dice)
    else:
        raise TypeError(f"not a roll command: {command!r}")
    if command.label:
        text = f"{command.label}: {text}"
    return RollResult(command, dice.faces, total, reading, text)


def _generic(command: GenericRoll, dice: DiceSource) -> tuple[int, dict[str, Any], str]:
    result: ExpressionResult = evaluate(command.expression, dice)
    terms = [
        {
            "term": t.term.text(),
            "sign": t.term.sign,
            "value": t.value,
            "dice": [
                {
                    "value": d.value,
                    "kept": d.kept,
                    "exploded": d.exploded,
                    "extra": d.extra,
                    "hit": d.hit,
                }
                for d in t.dice
            ],
        }
        for t in result.terms
    ]
    return result.total, {"terms": terms, "capped": result.capped}, result.render()


def _check_reading(c: one.Check) -> dict[str, Any]:
    return {"faces": list(c.faces), "roll": c.roll, "target": c.target, "success": c.succeeded}


def _one(command: OneRoll, dice: DiceSource) -> tuple[int, dict[str, Any], str]:
    score = command.skill.score
    assert score is not None
    name = command.skill.label
    reading: dict[str, Any] = {"kind": command.kind, "skill": command.skill.name}
    if command.kind == "check":
        c = one.check(dice, score, modifier=command.mod)
        reading |= _check_reading(c)
        mod = f" {command.mod:+d}" if command.mod else ""
        return c.roll, reading, f"ONE check, {name} {score}{mod}: {c.render()}"
    assert command.vs is not None
    if command.kind == "contest":
        contest = one.contest_of_skill(
            dice, score, command.vs, actor_modifier=command.mod, opponent_modifier=command.vs_mod
        )
        reading |= {
            "actor": _check_reading(contest.actor),
            "opponent": _check_reading(contest.opponent) if contest.opponent else None,
            "success": contest.succeeded,
        }
        return contest.actor.roll, reading, f"ONE contest, {name}: {contest.render()}"
    quick = one.quick_contest(dice, score + command.mod, command.vs + command.vs_mod)
    reading |= {
        "actor_total": quick.actor_total,
        "opponent_total": quick.opponent_total,
        "winner": quick.winner,
    }
    return quick.actor_total, reading, f"ONE quick contest, {name}: {quick.render()}"


def _noir_dice(d: noir.NoirDice | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {
        "base": list(d.base),
        "extra": list(d.extra),
        "spaerr": d.blocks,
        "L": d.low,
        "H": d.high,
        "A": d.sum,
        "exceptional": d.exceptional,
        "capped": d.capped,
    }


def _difficulty_reading(r: noir.DifficultyRoll) -> dict[str, Any]:
    return {
        "total": r.total,
        "automatic": r.automatic,
        "outcome": r.outcome.value,
        "dice": _noir_dice(r.dice),
    }


def _opposed_reading(r: noir.OpposedRoll) -> dict[str, Any]:
    return {
        "actor": {"total": r.actor_total, "dice": _noir_dice(r.actor)},
        "opponent": {"total": r.opponent_total, "dice": _noir_dice(r.opponent)},
        "tie_breaks": [list(t) for t in r.tie_breaks],
        "winner": r.winner.value if r.winner else None,
        "decided_by": r.decided_by,
        "outcome": {side.value: r.outcome_for(side).value for side in noir.Side},
    }


def _noir(command: NoirRoll, dice: DiceSource) -> tuple[int, dict[str, Any], str]:
    reading: dict[str, Any] = {"kind": command.kind}
    if command.damage is not None:
        d = noir.damage_roll(dice, command.damage)
        reading |= {"code": command.damage.text(), "dice": _noir_dice(d.dice)}
        return d.total, reading, f"Noir damage {d.render()}"
    assert command.skill is not None and command.skill.score is not None
    skill, name = command.skill.score, command.skill.label
    mod = command.mod + noir.cooperation_bonus(command.helpers)
    reading |= {"skill": command.skill.name, "score": skill, "modifier": mod}
    if command.kind == "difficulty":
        r = noir.difficulty_roll(dice, skill, modifier=mod, automatic=not command.force)
        reading |= _difficulty_reading(r)
        return r.total, reading, f"Noir difficulty, {name}: {r.render()}"
    if command.kind == "extended":
        assert command.successes is not None
        task = noir_extended.extended_task(
            dice,
            skill,
            command.successes,
            modifier=mod,
            max_attempts=command.max_attempts,
            automatic=not command.force,
        )
        reading |= {
            "needed": task.needed,
            "successes": task.tally.successes,
            "voids": task.tally.voids,
            "done": task.done,
            "attempts": [_difficulty_reading(a) for a in task.attempts],
        }
        return task.tally.successes, reading, f"Noir extended task, {name}: {task.render()}"
    assert command.vs is not None
    if command.kind == "opposed":
        o = noir.opposed_roll(
            dice, skill, command.vs, actor_modifier=mod, opponent_modifier=command.vs_mod
        )
        reading |= _opposed_reading(o)
        return o.actor_total, reading, f"Noir opposed, {name}: {o.render()}"
    c = noir_extended.extended_contest(
        dice,
        skill,
        command.vs,
        best_of=command.best,
        attempts=command.attempts,
        actor_modifier=mod,
        opponent_modifier=command.vs_mod,
        max_attempts=command.max_attempts,
    )
    reading |= {
        "actor_needs": c.actor_needs,
        "opponent_needs": c.opponent_needs,
        "actor_wins": c.actor.successes,
        "opponent_wins": c.opponent.successes,
        "winner": c.winner.value if c.winner else None,
        "attempts": [_opposed_reading(a) for a in c.attempts],
    }
    return c.actor.successes, reading, f"Noir contest, {name}: {c.render()}"


def _written_as(typed: Any, rolled: str) -> bool:
    """Whether the command as written can be the one rolled: the same command, or the same
    roll with a named skill given its number (and a wound modifier) by pbp."""
    if not isinstance(typed, str):
        return False
    try:
        written, done = parse_roll_command(typed), parse_roll_command(rolled)
    except RollError:
        return False
    if not written.needs_score:
        return written.canonical() == done.canonical()
    if type(written) is not type(done) or getattr(done, "skill", None) is None:
        return False
    return _unscored(written, getattr(done, "mod", 0)) == _unscored(done, getattr(done, "mod", 0))


def _unscored(command: RollCommand, mod: int) -> str:
    """The command without its skill's number, with `mod` (pbp adds a wound modifier)."""
    skill: SkillRef = getattr(command, "skill")  # noqa: B009  # only the subclasses have it
    changes: dict[str, Any] = {"skill": SkillRef(skill.name, None)}
    if hasattr(command, "mod"):
        changes["mod"] = mod
    return replace(command, **changes).canonical()


@dataclass(frozen=True)
class Mismatch:
    """A stored roll that the revealed seed does not reproduce (or cannot be read)."""

    roll_id: str | None
    field: str
    recorded: Any
    expected: Any

    def __str__(self) -> str:
        where = f"roll {self.roll_id}" if self.roll_id is not None else "export"
        return f"{where}: {self.field} recorded {self.recorded!r}, recomputed {self.expected!r}"


_COMPARED = ("faces", "total", "reading")


def _plain(value: Any) -> Any:
    """Both sides as JSON would give them back, so tuples and lists compare equal."""
    return json.loads(json.dumps(value))


def verify_rolls(
    seed: bytes, rolls: Iterable[Mapping[str, Any]], *, commitment: str | None = None
) -> list[Mismatch]:
    """Recompute every roll from (seed, roll id, command) and list what differs.

    Each roll is a mapping with ``id`` and the keys of `RollResult.to_dict` (``command``,
    ``faces``, ``total``, ``reading``; ``algorithm`` if present must be ours). With
    `commitment`, the seed must also hash to the SHA-256 published at the campaign's start.
    An empty list means every roll is exactly what the seed produces.
    """
    mismatches: list[Mismatch] = []
    if commitment is not None and seed_commitment(seed) != commitment.strip().lower():
        mismatches.append(Mismatch(None, "seed", commitment, seed_commitment(seed)))
    for roll in rolls:
        roll_id = roll.get("id")
        # `resolved` is what was rolled (exports since issue #35 item 4; `command` is then the
        # line as written); older exports have the rolled command under `command`.
        rolled = roll.get("resolved", roll.get("command"))
        if not isinstance(roll_id, str) or not isinstance(rolled, str):
            mismatches.append(Mismatch(roll_id, "format", dict(roll), "an id and a command"))
            continue
        if "resolved" in roll and not _written_as(roll.get("command"), rolled):
            mismatches.append(Mismatch(roll_id, "command", roll.get("command"), rolled))
            continue
        algorithm = roll.get("algorithm", ALGORITHM)
        if algorithm != ALGORITHM:
            mismatches.append(Mismatch(roll_id, "algorithm", algorithm, ALGORITHM))
            continue
        try:
            result = execute(parse_roll_command(rolled), derive_rng(seed, roll_id))
        except RollError as error:
            mismatches.append(Mismatch(roll_id, "command", rolled, str(error)))
            continue
        expected = _plain(result.to_dict())
        for key in _COMPARED:
            recorded = _plain(roll.get(key))
            if recorded != expected[key]:
                mismatches.append(Mismatch(roll_id, key, recorded, expected[key]))
    return mismatches
