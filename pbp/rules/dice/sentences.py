"""A roll in one plain sentence, before its technical line (issue #27 item 10).

"2T [3, 3] + 7 +5 = 18 < 20: exceptional failure (L 3, H 3, A 6)" is exact, and reads like
a formula: the sentence says what it means first ("Exceptional failure: 18 against the 20
needed."). Made from a stored roll's record (`RollResult.to_dict()`: its ruleset, total and
reading), so rolls stored before this module get their sentence too; a reading this module
does not know gives the total alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbp.rules.noir.resolution import DIFFICULTY


def plain_sentence(record: Mapping[str, Any]) -> str:
    """What the roll came to, in words: one sentence, capitalised, with a full stop."""
    reading = record.get("reading") or {}
    total = record.get("total")
    try:
        if record.get("ruleset") == "noir":
            text = _noir(reading, total)
        elif record.get("ruleset") == "one":
            text = _one(reading, total)
        else:
            text = _generic(reading, total)
    except (KeyError, TypeError, ValueError):  # an older or unusual record: the total
        text = f"a total of {total}"
    return text[:1].upper() + text[1:] + "."


def _generic(reading: Mapping[str, Any], total: Any) -> str:
    hits = any(d.get("hit") is not None for t in reading.get("terms", []) for d in t["dice"])
    if hits:
        return f"{total} success{'' if total == 1 else 'es'}"
    return f"a total of {total}"


def _winner(side: str | None) -> str:
    return {"actor": "the roller wins", "opponent": "the opponent wins"}.get(
        side or "", "a tie: the GM decides"
    )


def _one(reading: Mapping[str, Any], total: Any) -> str:
    kind = reading["kind"]
    if kind == "check":
        word = "success" if reading["success"] else "failure"
        return f"{word}: rolled {reading['roll']}, needing {reading['target']} or less"
    if kind == "contest":
        return "the roller wins" if reading["success"] else "the roller is stopped"
    totals = f"{reading['actor_total']} against {reading['opponent_total']}"
    return f"{_winner(reading['winner'])}, {totals}"


def _noir(reading: Mapping[str, Any], total: Any) -> str:
    kind = reading["kind"]
    if kind == "damage":
        return f"{total} damage"
    if kind == "difficulty":
        if reading["automatic"]:
            return f"automatic success: skill and modifiers reach {DIFFICULTY} without a roll"
        return f"{reading['outcome']}: {reading['total']} against the {DIFFICULTY} needed"
    if kind == "extended":
        state = "done" if reading["done"] else "not done"
        return f"{state}: {reading['successes']} of {reading['needed']} successes"
    if kind == "opposed":
        actor, opponent = reading["actor"]["total"], reading["opponent"]["total"]
        if reading["winner"] is None:
            return f"still tied at {actor}: the narrator decides"
        return f"{_winner(reading['winner'])}, {actor} against {opponent}"
    score = f"{reading['actor_wins']}-{reading['opponent_wins']}"
    if reading["winner"] is None:
        return f"undecided at {score}: the narrator decides"
    return f"{_winner(reading['winner'])}, {score}"
