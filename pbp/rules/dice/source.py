"""Where dice faces come from: the per-roll derived generator and the dice sources.

Fairness (issue "Rolls"): each campaign has a secret seed; its SHA-256 is published when the
campaign is made, before any roll (`seed_commitment`), every roll draws from a generator
derived from HMAC-SHA256(seed, roll id) (`derive_rng`), and once the seed is revealed anyone
can recompute every roll. Nothing here touches global randomness, so concurrent rolls cannot
interfere.

The exact algorithm, so the rolls can also be checked outside pbp ("pbp-dice-1"):

1. key = HMAC-SHA256(seed, roll id as UTF-8), read as a big-endian 256-bit integer;
2. the generator is MT19937 seeded with that integer the way Python's ``random.seed(int)``
   does (init_by_array over its 32-bit words, least significant first);
3. a die of S sides takes ``b = (S - 1).bit_length()`` bits per draw (``getrandbits(b)``)
   until the value is below S, and shows that value + 1 (plain rejection sampling, so every
   face is equally likely and no CPython-internal ``randrange`` detail is involved).
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from pbp.rules.errors import RulesError

# Stored with every roll: if the derivation ever changes, old rolls stay verifiable under
# the name of the algorithm that made them.
ALGORITHM = "pbp-dice-1"


class RollError(RulesError):
    """A roll pbp refuses; the message tells the player what to write instead."""


class RollSyntaxError(RollError):
    """The command could not be read."""


class RollLimitError(RollError):
    """The command asks for more dice, sides or attempts than a post may roll."""


def seed_commitment(seed: bytes) -> str:
    """The SHA-256 hex digest published when a campaign is made, before any roll."""
    return hashlib.sha256(seed).hexdigest()


def derive_rng(seed: bytes, roll_id: str) -> random.Random:
    """The generator for one roll: MT19937 seeded with HMAC-SHA256(seed, roll_id).

    A fresh generator per roll means a roll can be recomputed from (seed, roll id) alone,
    in any order, and rolls made at the same moment in different threads never share state.
    """
    if not seed:
        raise ValueError("the campaign seed must not be empty")
    digest = hmac.new(seed, roll_id.encode("utf-8"), hashlib.sha256).digest()
    return random.Random(int.from_bytes(digest, "big"))


def draw_face(rng: random.Random, sides: int) -> int:
    """One face of a fair die of `sides` sides by rejection sampling on ``getrandbits``."""
    if sides < 1:
        raise ValueError(f"a die needs at least one side, not {sides}")
    if sides == 1:
        return 1
    bits = (sides - 1).bit_length()
    while True:
        value = rng.getrandbits(bits)
        if value < sides:
            return value + 1


class DiceSource(Protocol):
    """What the rules need from dice: one face of a die with `sides` sides per call."""

    def roll(self, sides: int) -> int: ...


@dataclass(frozen=True)
class Face:
    """One die drawn: its size and the face it showed."""

    sides: int
    value: int

    def to_list(self) -> list[int]:
        return [self.sides, self.value]


class Dice:
    """A dice source drawing from a `random.Random` and recording every face, in order.

    The record is what a post shows ("every die face shown") and what verification compares.
    """

    def __init__(self, rng: random.Random):
        self._rng = rng
        self._faces: list[Face] = []

    def roll(self, sides: int) -> int:
        value = self._draw(sides)
        self._faces.append(Face(sides, value))
        return value

    def _draw(self, sides: int) -> int:
        return draw_face(self._rng, sides)

    @property
    def faces(self) -> tuple[Face, ...]:
        return tuple(self._faces)


class ScriptExhausted(RuntimeError):
    """A scripted dice source was asked for more faces than its script holds."""


class ScriptedDice(Dice):
    """Dice that show the given faces in order: fixed dice for tests and worked examples.

    A face that cannot come up on the requested die (a 7 on a d6) is a mistake in the
    script, so it raises instead of being silently accepted.
    """

    def __init__(self, faces: Iterable[int]):
        super().__init__(random.Random(0))  # never drawn from; keeps Dice's recording
        self._script = list(faces)
        self._next = 0

    def _draw(self, sides: int) -> int:
        if self._next >= len(self._script):
            raise ScriptExhausted(f"the script ran out after {len(self._script)} faces")
        value = self._script[self._next]
        if not 1 <= value <= sides:
            raise ValueError(f"scripted face {value} cannot come up on a d{sides}")
        self._next += 1
        return value

    @property
    def remaining(self) -> int:
        """Faces not yet used: a test can assert the whole script was consumed."""
        return len(self._script) - self._next
