"""Plain records for the Noteworthy rules engine: what goes in, what comes out.

Everything here is a frozen dataclass or a ``StrEnum`` so the services layer can build inputs
from database rows and the dashboard can show outputs as they are. Ids (``int`` or ``str``)
refer to characters, entries and notes; the engine never sees a database row. See
:mod:`pbp.rules.noteworthy.engine` for the API that uses these records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

# A setting or request a user can get wrong raises RulesError (re-exported here), its message
# written for that user. The tally itself never raises on odd data: it flags it for the referee.
from pbp.rules.errors import RulesError as RulesError

CharacterId = int | str
EntryId = int | str
NoteId = int | str

CHALLENGING = "challenging"
DEFAULT_OPENING_TURNS = 2


# --- enums -----------------------------------------------------------------------------------


class Status(StrEnum):
    """Noteworthy: losing PCs become outsiders, unaffected by ongoing events."""

    ACTIVE = "active"
    OUTSIDER = "outsider"


_ACTIVE = Status.ACTIVE  # an enum member read through its class takes 60 ns on Python 3.11


class Stance(StrEnum):
    """The position a note takes on a challenge (or, in the final, on a finalist's entry)."""

    SUPPORT = "support"
    OPPOSE = "oppose"
    NONE = "none"
    AMBIGUOUS = "ambiguous"


class TargetMethod(StrEnum):
    """How a challenge's target was found, so the referee can judge the reading."""

    EXPLICIT = "explicit Target line"
    NAMES = "names in the entry"
    RULING = "referee ruling"
    UNRESOLVED = "unresolved"


class RulingKind(StrEnum):
    """What a referee ruling decides; ``subject_id`` is an entry id unless noted.

    * ``target`` – value: the target's character id.
    * ``stance`` – subject: a note; value: ``support`` / ``oppose`` / ``none``.
    * ``author`` – subject: a note; value: the author's character id, or ``None`` for
      "not a character".
    * ``validity`` – value: ``valid`` / ``invalid`` (or a bool) for a challenge.
    * ``note_validity`` – subject: a note; value: ``count`` / ``ignore`` (or a bool). Settles
      late and backdated notes.
    * ``withdrawal`` – value: ``withdrawn`` / ``not withdrawn`` (or a bool).
    * ``tiebreak`` – value: the winner's character id, or ``challenger`` / ``target``; with
      ``subject_id=None`` it decides the final (a tie, or nobody left).
    * ``fate_not_allowed`` – subject: a note whose desired fate the referee disallows.
    * ``mood`` – value: the mood the referee reads for the entry (e.g. a missing mood line).
    """

    TARGET = "target"
    STANCE = "stance"
    AUTHOR = "author"
    VALIDITY = "validity"
    NOTE_VALIDITY = "note_validity"
    WITHDRAWAL = "withdrawal"
    TIEBREAK = "tiebreak"
    FATE_NOT_ALLOWED = "fate_not_allowed"
    MOOD = "mood"


class InvalidReason(StrEnum):
    """Why a challenge is invalid; the value reads as a sentence fragment on the dashboard."""

    NOT_A_CHARACTER_BLOG = "not posted on a character's own blog"
    JOINED_LATE = "joined after the turn opened"
    OPENING_TURNS = "no challenges are permitted in the opening turns"
    CHALLENGER_OUTSIDER = "an outsider cannot challenge"
    SECOND_CHALLENGE = "the challenger already challenged this turn"
    SELF = "a character cannot challenge themself"
    TARGET_OUTSIDER = "the target is an outsider"
    TARGET_UNKNOWN = "the target is not a character in this game"
    REFEREE = "ruled invalid by the referee"


class IgnoreReason(StrEnum):
    """Why a note does not count towards a challenge or the final."""

    LATE = "late"
    BEFORE_CHALLENGE = "written before the challenge was made"
    OUTSIDER = "outsider"
    JOINED_LATE = "joined after the turn opened"
    CHALLENGER = "challenger"
    TARGET = "target"
    FINALIST = "finalist"
    UNMAPPED = "unmapped author"
    SUPERSEDED = "superseded"
    BOTH_SIDES = "both sides"
    NO_POSITION = "no position"
    CHALLENGE_VOID = "challenge has no effect"
    REFEREE = "ruled out by the referee"


class Outcome(StrEnum):
    """How a challenge ended."""

    CHALLENGER_WINS = "challenger wins"
    TARGET_WINS = "target wins"
    NEEDS_RULING = "needs ruling"
    NO_EFFECT = "no effect"


class FlagKind(StrEnum):
    """Something the referee should look at; most are settled by a :class:`Ruling`."""

    MISSING_MOOD = "missing mood"
    NEEDS_TARGET = "target needs a ruling"
    AMBIGUOUS_STANCE = "ambiguous stance"
    BACKDATED_NOTE = "backdated note"
    LATE_REVISION = "revision after the turn closed"
    RENEWED_CHALLENGE = "challenge renewed after withdrawal"
    BOTH_SIDES = "both sides of a mutual challenge"
    CHALLENGE_IN_NOTE = "challenge inside a note"
    NO_FINAL_ENTRY = "finalist without a final entry"
    FINAL_TIE = "tie in the final"
    NO_ONE_LEFT = "no active character left"
    RULING_NOT_APPLIED = "ruling not applied"


class EndgamePhase(StrEnum):
    """Noteworthy endnotes: where the game stands after a turn."""

    IN_PLAY = "in play"
    FINAL_NEXT = "final next"
    WON = "won"
    NEEDS_RULING = "needs ruling"


# --- inputs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Character:
    """A PC and their standing (at a turn's start when fed in; after it when returned)."""

    id: CharacterId
    name: str
    status: Status = Status.ACTIVE

    @property
    def active(self) -> bool:
        return self.status == _ACTIVE


@dataclass(frozen=True, slots=True)
class Revision:
    """An edit that changed an entry's mood (raw text, ``None`` if the mood line was removed)."""

    at: datetime
    mood: str | None


@dataclass(frozen=True, slots=True)
class Entry:
    """A blog entry. ``mood`` is the raw "Current mood:" value *as first published*; later
    changes are ``revisions``. ``owner_id`` is the blog's character (``None``: not a
    character's blog, e.g. the referee's). ``first_seen`` defaults to ``published``."""

    id: EntryId
    owner_id: CharacterId | None
    turn: int
    published: datetime
    mood: str | None = None
    title: str = ""
    text: str = ""
    revisions: tuple[Revision, ...] = ()
    first_seen: datetime | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """A note (comment) on an entry.

    ``stance`` is the reading stored when the note arrived (see ``read_stance``); ``None``
    makes the tally read the text itself. ``author_id`` is ``None`` when the commenter could
    not be mapped to a character; ``author_label`` then names them for the referee.
    ``arrival`` orders notes published at the same instant; ``first_seen`` (default:
    ``published``) is when the service first saw the note.
    """

    id: NoteId
    entry_id: EntryId
    author_id: CharacterId | None
    published: datetime
    text: str = ""
    stance: Stance | None = None
    arrival: int = 0
    first_seen: datetime | None = None
    author_label: str = ""
    fate: str | None = None


@dataclass(frozen=True, slots=True)
class Ruling:
    """A referee's decision; it overrides any automatic reading (see :class:`RulingKind`)."""

    kind: RulingKind
    subject_id: int | str | None
    value: int | str | bool | None = None
    note: str = ""


_K = TypeVar("_K")
_V = TypeVar("_V")


def _frozen_map(mapping: Mapping[_K, _V]) -> Mapping[_K, _V]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Settings:
    """Campaign settings the referee controls.

    * ``opening_turns`` – Noteworthy: "no challenges are permitted in the first two turns".
    * ``fair_interval`` – Noteworthy: notes are tabulated "at the end of each turn, or after a
      fair interval specified by the referee" (counted from the challenge's publication).
    * ``actions`` – Noteworthy: "the referee may define other game actions ... along with an
      identifying 'Current mood:' line"; mood text -> action name.
    * ``aliases`` – extra names (alias -> character id) for target detection.
    """

    opening_turns: int = DEFAULT_OPENING_TURNS
    fair_interval: timedelta | None = None
    actions: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, CharacterId] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Imported here because text imports this module's records.
        from pbp.rules.noteworthy.text import normalize_mood

        if self.opening_turns < 0:
            raise RulesError("The number of opening turns cannot be negative.")
        if self.fair_interval is not None and self.fair_interval <= timedelta(0):
            raise RulesError("The fair interval must be longer than zero.")
        actions = {}
        for mood, action in self.actions.items():
            key = normalize_mood(mood)
            if key is None:
                raise RulesError(f"The action {action!r} needs a mood line.")
            if key == CHALLENGING:
                raise RulesError("'Challenging' already means a challenge; pick another mood.")
            actions[key] = action
        object.__setattr__(self, "actions", _frozen_map(actions))
        object.__setattr__(self, "aliases", _frozen_map(self.aliases))


@dataclass(frozen=True)
class TurnInput:
    """Everything the tally needs for one turn.

    ``characters`` are the standings at the turn's start (Noteworthy: all of a turn's
    challenges are resolved against them). ``joined`` are characters added to the roster
    after the turn opened: they are in none of those standings, so this turn they can
    neither challenge (unless a validity ruling says so) nor take a position; they are in
    the standings after it. ``closes`` is ``None`` while the turn is open;
    the tally is then provisional. Entries of other turns, and notes on them, are ignored.
    """

    number: int
    closes: datetime | None
    characters: tuple[Character, ...]
    entries: tuple[Entry, ...] = ()
    notes: tuple[Note, ...] = ()
    rulings: tuple[Ruling, ...] = ()
    settings: Settings = field(default_factory=Settings)
    opens: datetime | None = None
    joined: tuple[Character, ...] = ()


# --- outputs ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StanceReading:
    """The stance read from a note's text, with the markers found and why."""

    stance: Stance
    markers: tuple[str, ...]
    explanation: str


@dataclass(frozen=True, slots=True)
class TargetReading:
    """The target found for a challenge; ``target_id`` is ``None`` when it needs a ruling."""

    target_id: CharacterId | None
    candidates: tuple[CharacterId, ...]
    method: TargetMethod
    explanation: str

    @property
    def needs_ruling(self) -> bool:
        return self.target_id is None


# Which ruling settles each kind of flag, and what it is about ("entry", "note", or None
# for the final's tiebreak, which is about the whole game). Kinds not listed have no single
# ruling (the referee picks one).
RULING_FOR_FLAG: dict[FlagKind, tuple[RulingKind, str | None]] = {
    FlagKind.NEEDS_TARGET: (RulingKind.TARGET, "entry"),
    FlagKind.AMBIGUOUS_STANCE: (RulingKind.STANCE, "note"),
    FlagKind.BACKDATED_NOTE: (RulingKind.NOTE_VALIDITY, "note"),
    FlagKind.LATE_REVISION: (RulingKind.WITHDRAWAL, "entry"),
    FlagKind.RENEWED_CHALLENGE: (RulingKind.VALIDITY, "entry"),
    FlagKind.BOTH_SIDES: (RulingKind.STANCE, "note"),
    FlagKind.FINAL_TIE: (RulingKind.TIEBREAK, None),
    FlagKind.NO_ONE_LEFT: (RulingKind.TIEBREAK, None),
    FlagKind.MISSING_MOOD: (RulingKind.MOOD, "entry"),
}


@dataclass(frozen=True, slots=True)
class Flag:
    """Something for the referee to look at, with the entry / note it concerns."""

    kind: FlagKind
    message: str
    entry_id: EntryId | None = None
    note_id: NoteId | None = None

    @property
    def suggested_ruling(self) -> tuple[RulingKind | None, EntryId | NoteId | None]:
        """The ruling that settles this flag and its subject id, for the referee's form
        to start from; (None, the entry or note) when no single ruling does."""
        if self.kind not in RULING_FOR_FLAG:
            return None, self.entry_id or self.note_id
        kind, about = RULING_FOR_FLAG[self.kind]
        return kind, {"entry": self.entry_id, "note": self.note_id}.get(about or "")


class Position(NamedTuple):
    """A counted position and the note that decides it."""

    character_id: CharacterId
    note_id: NoteId
    stance: Stance
    published: datetime
    explanation: str


class IgnoredNote(NamedTuple):
    """A note that takes no position, and why."""

    note_id: NoteId
    author_id: CharacterId | None
    reason: IgnoreReason
    explanation: str


# A busy turn makes a Position or an IgnoredNote for every note (thousands on every view of
# an open turn), so those two are named tuples: made in C, a third of the time of a frozen
# dataclass even with its slots set directly. ``position`` and ``ignored_note`` skip the
# named tuple's own Python ``__new__`` too. A Note is made once per stored note by the
# service: the frozen dataclass __init__ sets each field through object.__setattr__, and
# setting the slots directly takes about half the time. ``note_of`` returns the same objects
# as the class does (every field set in order); its field list is checked here, so a change
# to the class fails at import, not silently.
_new = object.__new__
_new_tuple = tuple.__new__


def _slot_setters(cls: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    if tuple(f.name for f in fields(cls)) != names or cls.__slots__ != names:
        raise RuntimeError(f"{cls.__name__}'s fields changed: update its fast constructor.")
    return tuple(cls.__dict__[name].__set__ for name in names)


if len(Position._fields) != 5 or len(IgnoredNote._fields) != 4:
    raise RuntimeError("Position's or IgnoredNote's fields changed: update its fast constructor.")

(
    _set_id,
    _set_entry_id,
    _set_note_author_id,
    _set_note_published,
    _set_text,
    _set_note_stance,
    _set_arrival,
    _set_first_seen,
    _set_author_label,
    _set_fate,
) = _slot_setters(
    Note,
    (
        "id",
        "entry_id",
        "author_id",
        "published",
        "text",
        "stance",
        "arrival",
        "first_seen",
        "author_label",
        "fate",
    ),
)


def note_of(
    note_id: NoteId,
    entry_id: EntryId,
    author_id: CharacterId | None,
    published: datetime,
    text: str,
    stance: Stance | None,
    arrival: int,
    first_seen: datetime | None,
    author_label: str,
    fate: str | None,
) -> Note:
    """``Note(...)`` with all ten fields given in order, faster (see above): the service
    makes one per stored note every time it tallies an open turn."""
    made = _new(Note)
    _set_id(made, note_id)
    _set_entry_id(made, entry_id)
    _set_note_author_id(made, author_id)
    _set_note_published(made, published)
    _set_text(made, text)
    _set_note_stance(made, stance)
    _set_arrival(made, arrival)
    _set_first_seen(made, first_seen)
    _set_author_label(made, author_label)
    _set_fate(made, fate)
    return made


def position(
    character_id: CharacterId, note_id: NoteId, stance: Stance, published: datetime, why: str
) -> Position:
    """``Position(character_id, note_id, stance, published, why)``, faster (see above)."""
    return _new_tuple(Position, (character_id, note_id, stance, published, why))


def ignored_note(
    note_id: NoteId, author_id: CharacterId | None, reason: IgnoreReason, why: str
) -> IgnoredNote:
    """``IgnoredNote(note_id, author_id, reason, why)``, faster (see above)."""
    return _new_tuple(IgnoredNote, (note_id, author_id, reason, why))


@dataclass(frozen=True, slots=True)
class Fate:
    """A desired fate described in a note, shown to the referee (never applied automatically)."""

    note_id: NoteId
    author_id: CharacterId | None
    text: str
    allowed: bool
    explanation: str


@dataclass(frozen=True, slots=True)
class ChallengeResult:
    """One challenge: who, against whom, whether it counts, the positions and the outcome."""

    entry_id: EntryId
    challenger_id: CharacterId | None
    target: TargetReading
    made_at: datetime
    valid: bool
    invalid_reason: InvalidReason | None
    withdrawn: bool
    supporters: tuple[Position, ...]
    opposers: tuple[Position, ...]
    pending: tuple[Position, ...]
    ignored: tuple[IgnoredNote, ...]
    fates: tuple[Fate, ...]
    flags: tuple[Flag, ...]
    outcome: Outcome
    explanation: tuple[str, ...]

    @property
    def target_id(self) -> CharacterId | None:
        return self.target.target_id

    @property
    def live(self) -> bool:
        """Valid and not withdrawn: the only challenges whose notes are tallied."""
        return self.valid and not self.withdrawn


@dataclass(frozen=True, slots=True)
class ActionReport:
    """An entry whose mood is a referee-defined game action."""

    entry_id: EntryId
    character_id: CharacterId | None
    mood: str
    action: str
    explanation: str


@dataclass(frozen=True, slots=True)
class FinalSide:
    """One finalist in the final conflict, their entries and the outsiders backing them."""

    finalist_id: CharacterId
    entry_ids: tuple[EntryId, ...]
    votes: tuple[Position, ...]


@dataclass(frozen=True, slots=True)
class FinalResult:
    """Noteworthy endnotes: the final conflict between the last two active characters."""

    sides: tuple[FinalSide, ...]
    pending: tuple[Position, ...]
    ignored: tuple[IgnoredNote, ...]
    winner_id: CharacterId | None
    flags: tuple[Flag, ...]
    explanation: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Provocation:
    recommended: bool
    explanation: str


@dataclass(frozen=True, slots=True)
class Endgame:
    phase: EndgamePhase
    finalists: tuple[CharacterId, ...]
    winner_id: CharacterId | None
    explanation: str


@dataclass(frozen=True, slots=True)
class AppliedRuling:
    """A ruling and what it did (or why it could not be applied)."""

    ruling: Ruling
    applied: bool
    explanation: str


@dataclass(frozen=True, slots=True)
class Tally:
    """The result of one turn, ready for the referee dashboard.

    ``complete`` is false while the turn is open or any outcome still needs a ruling; the
    standings are then provisional (undecided challenges change nobody's status).
    """

    turn: int
    closed: bool
    challenges: tuple[ChallengeResult, ...]
    actions: tuple[ActionReport, ...]
    final: FinalResult | None
    standings: tuple[Character, ...]
    advanced: tuple[CharacterId, ...]
    eliminated: tuple[CharacterId, ...]
    provocation: Provocation
    endgame: Endgame
    flags: tuple[Flag, ...]
    rulings: tuple[AppliedRuling, ...]
    explanation: tuple[str, ...]

    @property
    def needs_ruling(self) -> bool:
        return any(c.outcome is Outcome.NEEDS_RULING for c in self.challenges) or (
            self.endgame.phase is EndgamePhase.NEEDS_RULING
        )

    @property
    def complete(self) -> bool:
        return self.closed and not self.needs_ruling

    def challenge_for(self, entry_id: EntryId) -> ChallengeResult | None:
        return next((c for c in self.challenges if str(c.entry_id) == str(entry_id)), None)

    def status_of(self, character_id: CharacterId) -> Status | None:
        return next((c.status for c in self.standings if c.id == character_id), None)
