"""What every step of a Noteworthy tally shares: the turn's cast, its rulings, and wording.

:class:`RulingBook` indexes the referee's rulings and records what each one did, so the tally
can list them all (Noteworthy: "the referee's interpretation is final"). :class:`TurnContext`
answers "who is this?" questions against the standings at the turn's start.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

from pbp.rules.noteworthy.model import (
    AppliedRuling,
    Character,
    CharacterId,
    Flag,
    FlagKind,
    IgnoreReason,
    Ruling,
    RulingKind,
    Settings,
    Stance,
)
from pbp.rules.noteworthy.text import NameFinder

SUPERSEDED_RULING = "Superseded by a later ruling of the same kind on the same subject."
UNUSED_RULING = "Its subject is not part of this turn's tally."

_TRUE_WORDS = frozenset({"true", "yes", "1", "valid", "count", "withdrawn"})
_FALSE_WORDS = frozenset({"false", "no", "0", "invalid", "ignore", "not withdrawn"})


def subject_key(value: object) -> str:
    """Ids compare by their text, so a web form's "12" finds entry 12."""
    return "" if value is None else str(value)


def parse_flag(value: object) -> bool | None:
    """A ruling's yes/no value (``True``, ``"valid"``, ``"count"``...); ``None`` if unclear."""
    if isinstance(value, bool):
        return value
    word = " ".join(str(value).split()).casefold()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None


def parse_stance(value: object) -> Stance | None:
    """A stance ruling's value; only a clear position (or "none") can be ruled."""
    word = str(value).strip().casefold()
    return {"support": Stance.SUPPORT, "oppose": Stance.OPPOSE, "none": Stance.NONE}.get(word)


def when(moment: datetime | None, seconds: bool = False) -> str:
    """A timestamp as the explanations show it, in UTC and saying so (every shown time
    carries its zone; the stored words cannot follow each reader's zone). Cut from
    isoformat: strftime is slow."""
    if moment is None:
        return "(open)"
    zone = moment.tzinfo
    if zone is not None and zone is not UTC and moment.utcoffset():
        moment = moment.astimezone(UTC)
    if seconds:
        return moment.isoformat(" ", "seconds")[:19] + " UTC"  # 2024-03-01 20:00:15
    return moment.isoformat(" ", "minutes")[:16] + " UTC"


def _same_minute(one: datetime | None, other: datetime | None) -> bool:
    return (
        one is not None
        and other is not None
        and one.replace(second=0, microsecond=0) == other.replace(second=0, microsecond=0)
    )


def when_compared(*moments: datetime | None) -> tuple[str, ...]:
    """Timestamps an explanation compares ("published X, after the close at Y"): with
    seconds whenever two of them fall in the same minute, so the words never read
    "10:20, after 10:20"."""
    seconds = any(
        _same_minute(one, other) for i, one in enumerate(moments) for other in moments[i + 1 :]
    )
    return tuple(when(m, seconds) for m in moments)


class RulingBook:
    """The turn's rulings, indexed by kind and subject; the last ruling on a subject wins.

    Steps of the tally look rulings up with :meth:`find` and report what they did with
    :meth:`applied` or :meth:`rejected`; :meth:`report` lists every ruling with its effect and
    flags those that did nothing, so a mistyped id never fails silently.
    """

    def __init__(self, rulings: Iterable[Ruling]) -> None:
        rulings = tuple(rulings)
        self._rulings = rulings
        self._latest: dict[tuple[str, str], int] = {}
        self._effects: dict[int, tuple[bool, str]] = {}
        self.subjects: frozenset[str] = frozenset(subject_key(r.subject_id) for r in rulings)
        for index, ruling in enumerate(self._rulings):
            key = (str(ruling.kind), subject_key(ruling.subject_id))
            if key in self._latest:
                self._effects[self._latest[key]] = (False, SUPERSEDED_RULING)
            self._latest[key] = index

    @property
    def has_rulings(self) -> bool:
        return bool(self._rulings)

    def concerns(self, subject_id: object) -> bool:
        """Whether any ruling names this subject: a cheap test before the lookups."""
        return bool(self._rulings) and subject_key(subject_id) in self.subjects

    def find(self, kind: RulingKind, subject_id: object) -> tuple[int, Ruling] | None:
        index = self._latest.get((str(kind), subject_key(subject_id)))
        return None if index is None else (index, self._rulings[index])

    def applied(self, index: int, explanation: str) -> None:
        self._effects[index] = (True, explanation)

    def rejected(self, index: int, explanation: str) -> None:
        self._effects[index] = (False, explanation)

    def report(self) -> tuple[tuple[AppliedRuling, ...], tuple[Flag, ...]]:
        listed, flags = [], []
        for index, ruling in enumerate(self._rulings):
            applied, why = self._effects.get(index, (False, UNUSED_RULING))
            listed.append(AppliedRuling(ruling, applied, why))
            if not applied and why != SUPERSEDED_RULING:
                message = f"Ruling '{ruling.kind}' on {subject_key(ruling.subject_id)!r}: {why}"
                flags.append(Flag(FlagKind.RULING_NOT_APPLIED, message))
        return tuple(listed), tuple(flags)


@dataclass(frozen=True)
class TurnContext:
    """The turn's fixed facts: number, close, settings and the standings at its start."""

    number: int
    closes: datetime | None
    settings: Settings
    characters: tuple[Character, ...]
    # Keyed by the characters' ids; looked up with any id a ruling or note carries (object).
    by_id: dict[object, Character]
    by_key: dict[str, Character]
    joined: tuple[Character, ...] = ()
    # Each character's id: ``IgnoreReason.OUTSIDER`` for an outsider, else ``None``. Noteworthy:
    # "An outsider ... cannot support or oppose challenges" (looked up for every note).
    outsiders: dict[object, IgnoreReason | None] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        number: int,
        closes: datetime | None,
        settings: Settings,
        characters: Iterable[Character],
        joined: Iterable[Character] = (),
    ) -> TurnContext:
        cast = tuple(characters)
        return cls(
            number=number,
            closes=closes,
            settings=settings,
            characters=cast,
            by_id={c.id: c for c in cast},
            by_key={subject_key(c.id): c for c in cast},
            joined=tuple(joined),
            outsiders={c.id: None if c.active else IgnoreReason.OUTSIDER for c in cast},
        )

    @cached_property
    def name_finder(self) -> NameFinder:
        """The cast's names and aliases, for reading every challenge's target."""
        return NameFinder(self.characters, self.settings.aliases)

    def joiner(self, character_id: object) -> Character | None:
        """A character added to the roster after the turn opened (not in its standings)."""
        key = subject_key(character_id)
        return next((c for c in self.joined if subject_key(c.id) == key), None)

    @property
    def fair_interval(self) -> timedelta | None:
        return self.settings.fair_interval

    def character(self, character_id: object) -> Character | None:
        """The character with this id; a string form of the id is accepted (rulings)."""
        found = self.by_id.get(character_id)
        return found if found is not None else self.by_key.get(subject_key(character_id))

    def canonical(self, character_id: CharacterId | None) -> CharacterId | None:
        """The character's own id for ``character_id`` (so "3" from a form becomes 3)."""
        character = self.character(character_id)
        return character_id if character is None else character.id

    def name(self, character_id: object, label: str = "") -> str:
        character = self.by_id.get(character_id)
        if character is None:
            character = self.character(character_id)
        if character is None and self.joined:
            character = self.joiner(character_id)
        if character is not None:
            return character.name
        return label or f"unknown author {subject_key(character_id) or '?'}"

    def is_active(self, character_id: object) -> bool:
        character = self.character(character_id)
        return character is not None and character.active

    @property
    def active_ids(self) -> tuple[CharacterId, ...]:
        return tuple(c.id for c in self.characters if c.active)
