"""Dice: roll commands in posts, expressions, the per-roll derived generator, the fairness check.

The facade: `from pbp.rules import dice` gives the names of `rolls`, the ruleset's
entry point; `commands`, `expr`, `source` hold the rest.

The facade is lazy (PEP 562): `rolls` reads roll commands, which know the rulesets' own commands
(Noir's extended contests), and those rulesets draw their dice from `source`. Importing
`pbp.rules.dice.source` must therefore not import `rolls`.
"""

from typing import Any

__all__ = [
    "noir",
    "one",
    "noir_extended",
    "GenericRoll",
    "NoirRoll",
    "OneRoll",
    "RollCommand",
    "SkillRef",
    "find_roll_commands",
    "parse_roll_command",
    "ExpressionResult",
    "evaluate",
    "ALGORITHM",
    "Dice",
    "DiceSource",
    "Face",
    "RollError",
    "RollLimitError",
    "RollSyntaxError",
    "ScriptedDice",
    "derive_rng",
    "seed_commitment",
    "RollResult",
    "execute",
    "Mismatch",
    "verify_rolls",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from pbp.rules.dice import rolls

        return getattr(rolls, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
