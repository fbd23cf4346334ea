"""From notes to positions: who may take one, and which note counts.

Noteworthy: "The challenge is resolved through notes added to the challenge entry. Each PC
still in the game (except the challenger and target) may ... note clear support or opposition
to the challenge." Every note that does not count is listed with its reason.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from functools import partial
from operator import attrgetter
from typing import Final, NamedTuple, cast

from pbp.rules.noteworthy.challenges import Draft
from pbp.rules.noteworthy.context import (
    RulingBook,
    TurnContext,
    parse_flag,
    parse_stance,
    subject_key,
    when,
    when_compared,
)
from pbp.rules.noteworthy.model import (
    CharacterId,
    Fate,
    Flag,
    FlagKind,
    IgnoredNote,
    IgnoreReason,
    Note,
    Position,
    RulingKind,
    Stance,
    Status,
)
from pbp.rules.noteworthy.text import read_stance

_UNSET = object()


class NoteFacts(NamedTuple):
    """A note after the referee's rulings: its author, stance and whether it was ruled in/out.

    Made only for notes off the fast path of ``tally_notes`` (rulings, fates, unread stances,
    unmapped authors) and for the final's votes.
    """

    note: Note
    author_id: CharacterId | None
    stance: Stance
    ruled_count: bool | None = None
    ruling_note: str = ""
    fate_allowed: bool = True
    stance_ruled: bool = False


def _ruled_author(note: Note, ctx: TurnContext, book: RulingBook) -> object:
    found = book.find(RulingKind.AUTHOR, note.id)
    if found is None:
        return _UNSET
    index, ruling = found
    if ruling.value is None:
        book.applied(index, f"The referee ruled note {note.id}'s author is no character.")
        return None
    author = ctx.character(ruling.value)
    if author is None:
        book.rejected(index, f"{ruling.value!r} is not a character in this game.")
        return _UNSET
    book.applied(index, f"The referee ruled note {note.id} was written by {author.name}.")
    return author.id


def _ruled_stance(note: Note, book: RulingBook) -> Stance | None:
    found = book.find(RulingKind.STANCE, note.id)
    if found is None:
        return None
    index, ruling = found
    stance = parse_stance(ruling.value)
    if stance is None:
        book.rejected(index, f"{ruling.value!r} is not support, oppose or none.")
        return None
    book.applied(index, f"The referee reads note {note.id} as {stance}. {ruling.note}".strip())
    return stance


def _ruled_count(note: Note, book: RulingBook) -> tuple[bool | None, str]:
    found = book.find(RulingKind.NOTE_VALIDITY, note.id)
    if found is None:
        return None, ""
    index, ruling = found
    count = parse_flag(ruling.value)
    if count is None:
        book.rejected(index, f"{ruling.value!r} is neither 'count' nor 'ignore'.")
        return None, ""
    why = f"The referee ruled note {note.id} {'counts' if count else 'ignored'}. {ruling.note}"
    book.applied(index, why.strip())
    return count, why.strip()


def _fate_allowed(note: Note, book: RulingBook) -> bool:
    found = book.find(RulingKind.FATE_NOT_ALLOWED, note.id)
    if found is None:
        return True
    index, ruling = found
    book.applied(index, f"The fate in note {note.id} is not allowed. {ruling.note}".strip())
    return False


def _stored_stance(note: Note) -> Stance:
    """The stance stored on arrival; read now if none was stored or it is not a stance."""
    if note.stance.__class__ is Stance:
        return note.stance
    try:
        # None, or a stance stored as its text: Stance() takes the text or raises ValueError.
        return Stance(cast(str, note.stance))
    except ValueError:
        return read_stance(note.text).stance


def read_note_facts(note: Note, ctx: TurnContext, book: RulingBook) -> NoteFacts:
    """Noteworthy: "the referee's interpretation is final" -- author, stance and validity
    rulings replace the automatic readings. A note with no stored reading is read now."""
    stance = _stored_stance(note)
    if not book.concerns(note.id):
        author = ctx.by_id.get(note.author_id) if note.author_id is not None else None
        if author is None and note.author_id is not None:
            author = ctx.character(note.author_id) or ctx.joiner(note.author_id)
        return NoteFacts(note, None if author is None else author.id, stance)
    ruled = _ruled_author(note, ctx, book)
    author_id = note.author_id if ruled is _UNSET else ruled
    author = None if author_id is None else ctx.character(author_id) or ctx.joiner(author_id)
    ruled_stance = _ruled_stance(note, book)
    count, why = _ruled_count(note, book)
    fate_allowed = _fate_allowed(note, book)
    author_id = None if author is None else author.id
    return NoteFacts(
        note,
        author_id,
        ruled_stance or stance,
        count,
        why,
        fate_allowed,
        stance_ruled=ruled_stance is not None,
    )


def note_deadline(made_at: datetime, ctx: TurnContext) -> tuple[datetime | None, str]:
    """Noteworthy: notes are tabulated "at the end of each turn, or after a fair interval
    specified by the referee" -- whichever comes first (counted from the challenge)."""
    limits = []
    if ctx.closes is not None:
        limits.append((ctx.closes, "the turn closed"))
    if ctx.fair_interval is not None:
        limits.append((made_at + ctx.fair_interval, "the referee's fair interval ended"))
    return min(limits, key=lambda limit: limit[0]) if limits else (None, "")


def ignore(facts: NoteFacts, reason: IgnoreReason, why: str) -> IgnoredNote:
    return IgnoredNote(facts.note.id, facts.author_id, reason, why)


Deadline = tuple[datetime | None, str]


def _published_after(published: datetime, limit: datetime, what: str) -> str:
    """Why a late note does not count (``_late_words`` gives the same words, faster)."""
    when_published, closed = when_compared(published, limit)
    return f"Published {when_published}, after {what} at {closed}."


def lateness(facts: NoteFacts, deadline: Deadline) -> tuple[IgnoredNote | None, Flag | None]:
    """Noteworthy: "After a turn ends, no PC may post notes on entries from past turns."

    A late note is ignored. A note dated in time but first seen after the deadline may be
    backdated: it counts by its date and is flagged; a ``note_validity`` ruling settles both.
    """
    limit, what = deadline
    note = facts.note
    if limit is None or facts.ruled_count is True:
        return None, None
    if note.published > limit:
        return ignore(facts, IgnoreReason.LATE, _published_after(note.published, limit, what)), None
    return None, backdated(note, deadline)


def backdated(note: Note, deadline: Deadline) -> Flag | None:
    """The flag for a note first seen after the deadline it is dated before, if it is one."""
    limit, what = deadline
    if limit is None or note.first_seen is None or note.first_seen <= limit:
        return None
    dated, seen, closed = when_compared(note.published, note.first_seen, limit)
    message = (
        f"Note {note.id} is dated {dated} but was first seen {seen}, after {what} "
        f"({closed}); it counts unless the referee rules."
    )
    return Flag(FlagKind.BACKDATED_NOTE, message, note.entry_id, note.id)


@dataclass
class Tallying:
    """The positions and ignored notes of one challenge (or the final), being worked out."""

    supporters: list[Position] = field(default_factory=list)
    opposers: list[Position] = field(default_factory=list)
    pending: list[Position] = field(default_factory=list)
    ignored: list[IgnoredNote] = field(default_factory=list)
    fates: list[Fate] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    deciding: dict[object, Note] = field(default_factory=dict)  # note id -> deciding note


def recency(note: Note) -> tuple[datetime, int, str]:
    """Noteworthy: "the PC's most recent note holds sway" -- publication, then arrival."""
    return (note.published, note.arrival, subject_key(note.id))


class _Gate(Enum):
    """The author gate's answer for an author it does not know: a commenter mapped to nobody."""

    UNKNOWN = "unknown"


_UNKNOWN: Final = _Gate.UNKNOWN


def edited_into_challenge(draft: Draft) -> datetime | None:
    """When an entry published with another mood became a challenge (``None`` for an entry
    that was a challenge from the start).

    Noteworthy: "The challenge is resolved through notes added to the challenge entry" -- a
    note can only support or oppose a challenge that exists, so notes written before the
    edit to Challenging take no position. A challenge from the start exists as long as its
    entry: a note dated before it is clock skew between blogs, and counts.
    """
    return draft.made_at if draft.made_at > draft.entry.published else None


def _skip_reason(
    facts: NoteFacts, draft: Draft, ctx: TurnContext, limit: datetime | None
) -> IgnoreReason | None:
    """Why a note takes no position on the challenge, or ``None`` if it may.

    Noteworthy: "Each PC still in the game (except the challenger and target) may ... note
    clear support or opposition"; "An outsider ... cannot support or oppose challenges";
    "After a turn ends, no PC may post notes on entries from past turns".
    """
    author = facts.author_id
    if facts.ruled_count is False:
        return IgnoreReason.REFEREE
    if author is None:
        return IgnoreReason.UNMAPPED
    if author == draft.challenger_id:
        return IgnoreReason.CHALLENGER
    if author == draft.target_id:
        return IgnoreReason.TARGET
    if author not in ctx.by_id:
        return IgnoreReason.JOINED_LATE
    if ctx.by_id[author].status != Status.ACTIVE:
        return IgnoreReason.OUTSIDER
    made_at = edited_into_challenge(draft)
    written = facts.note.published
    if made_at is not None and written < made_at and not (facts.stance_ruled or facts.ruled_count):
        return IgnoreReason.BEFORE_CHALLENGE
    if limit is not None and facts.note.published > limit and facts.ruled_count is not True:
        return IgnoreReason.LATE
    if facts.stance is Stance.NONE:
        return IgnoreReason.NO_POSITION
    return None


def _author_gate(draft: Draft, ctx: TurnContext) -> dict[object, IgnoreReason | None]:
    """``_skip_reason``'s author rules worked out once per challenge instead of per note:
    each character's reason to be ignored (``None``: they may take a position)."""
    gate = dict(ctx.outsiders)
    for who, reason in ((draft.target_id, IgnoreReason.TARGET), (draft.challenger_id, _CHALLENGER)):
        if who in gate:
            gate[who] = reason
    return gate


_PER_AUTHOR = frozenset(
    {
        IgnoreReason.CHALLENGER,
        IgnoreReason.TARGET,
        IgnoreReason.OUTSIDER,
        IgnoreReason.JOINED_LATE,
        IgnoreReason.NO_POSITION,
    }
)


_NO_POSITION_TEXT = "No clear support or opposition."


def _skip_text(
    note: Note,
    author: CharacterId | None,
    reason: IgnoreReason,
    ctx: TurnContext,
    deadline: Deadline,
    ruling_note: str = "",
    made_at: datetime | None = None,
) -> str:
    """Why an ignored note does not count, in words for the dashboard."""
    if reason is IgnoreReason.REFEREE:
        why = ruling_note
    elif reason is IgnoreReason.UNMAPPED:
        label = note.author_label or "the commenter"
        why = f"{label} is not mapped to a character; a ruling can name the author."
    elif reason is IgnoreReason.CHALLENGER:
        why = f"{ctx.name(author)} is the challenger."
    elif reason is IgnoreReason.TARGET:
        why = f"{ctx.name(author)} is the target."
    elif reason is IgnoreReason.OUTSIDER:
        why = f"{ctx.name(author)} is an outsider; outsiders cannot support or oppose."
    elif reason is IgnoreReason.JOINED_LATE:
        why = f"{ctx.name(author)} joined after the turn opened; they take no position in it."
    elif reason is IgnoreReason.LATE:
        limit, what = deadline
        assert limit is not None  # a note is late only against a deadline
        why = _published_after(note.published, limit, what)
    elif reason is IgnoreReason.BEFORE_CHALLENGE:
        assert made_at is not None  # only a challenge made by an edit has notes before it
        why = _written_before(note.published, made_at)
    else:
        why = _NO_POSITION_TEXT
    return why


_VERB_SUPPORT = "supports the challenge"
_VERB_OPPOSE = "opposes the challenge"
_VERB_AMBIGUOUS = "takes an ambiguous position; the referee must rule"


Candidate = tuple[Note, CharacterId, Stance]  # a note that may count: note, author, stance

_BEFORE_CHALLENGE = IgnoreReason.BEFORE_CHALLENGE
_LATE = IgnoreReason.LATE
_NO_POSITION = IgnoreReason.NO_POSITION
_SUPERSEDED = IgnoreReason.SUPERSEDED
_NO_STANCE = Stance.NONE
_AMBIGUOUS = Stance.AMBIGUOUS
_SUPPORT = Stance.SUPPORT
_OPPOSE = Stance.OPPOSE
_UNMAPPED = IgnoreReason.UNMAPPED
_CHALLENGER = IgnoreReason.CHALLENGER
_PUBLISHED = attrgetter("published")
_new_tuple = tuple.__new__


def _fate_of(facts: NoteFacts) -> Fate:
    """Noteworthy: a note may describe a desired fate, but "cannot describe a fate that would
    remove any PC other than the target from the game" -- the referee judges; we show it."""
    if facts.fate_allowed:
        why = "Shown to the referee, who may use none, some or all suggested fates."
    else:
        why = "Not allowed by the referee: a note cannot remove any PC but the target."
    note = facts.note
    assert note.fate is not None  # called for notes with a fate only
    return Fate(note.id, facts.author_id, note.fate, facts.fate_allowed, why)


def _record_fate(facts: NoteFacts, tallying: Tallying) -> None:
    tallying.fates.append(_fate_of(facts))


def _void_notes(notes: list[Note], ctx: TurnContext, book: RulingBook) -> Tallying:
    """Noteworthy: "A withdrawn challenge has no effect" -- nor has an invalid one."""
    tallying = Tallying()
    why = "The challenge is invalid or withdrawn, so notes on it have no effect."
    for note in notes:
        facts = read_note_facts(note, ctx, book)
        if note.fate:
            _record_fate(facts, tallying)
        tallying.ignored.append(ignore(facts, IgnoreReason.CHALLENGE_VOID, why))
    return tallying


def _written_before(published: datetime, made_at: datetime) -> str:
    """Why a note written before its challenge existed takes no position on it."""
    written, made = when_compared(published, made_at)
    return (
        f"Written {written}, before the challenge was made at {made}: a note can only "
        "support or oppose a challenge that exists. A stance ruling can count it."
    )


def _late_words(limit: datetime, what: str) -> Callable[[datetime], str]:
    """``_skip_text``'s words for a late note, with the deadline's half of them worked out
    once per challenge: a busy turn can have hundreds of late notes. The same words as
    ``_published_after`` gives: with seconds when both fall in one minute."""
    limit_minute = limit.replace(second=0, microsecond=0)
    next_minute = limit_minute + timedelta(minutes=1)
    closed = when(limit)
    closed_seconds = when(limit, seconds=True)

    def words(published: datetime) -> str:
        if published.tzinfo is limit.tzinfo:  # a late note is after the limit: one test
            in_limit_minute = published < next_minute
        else:
            in_limit_minute = published.replace(second=0, microsecond=0) == limit_minute
        if in_limit_minute:
            return f"Published {when(published, seconds=True)}, after {what} at {closed_seconds}."
        return f"Published {when(published)}, after {what} at {closed}."

    return words


def tally_notes(draft: Draft, notes: list[Note], ctx: TurnContext, book: RulingBook) -> Tallying:
    """The counted positions on one challenge, each with its deciding note, and every other
    note with the reason it does not count. ``notes`` come in (publication, arrival) order.

    Noteworthy: "If a PC notes both support and opposition to the challenge, the PC's most
    recent note holds sway." The notes are walked latest first, so the first note that takes
    a position met for a character is their deciding one and each later one met is
    superseded; only notes that take a position compete, so a later chatty note does not
    erase a position. The lists are put back in the order the dashboard shows: ignored notes
    in note order, then the superseded ones latest first; positions earliest first.

    The walk goes through three runs of ``notes``: those published after the deadline, those
    in time, and those written before the challenge existed (the notes are in publication
    order, so each run is a slice found by bisection and the loop compares no times). The
    loop has fast paths for the usual notes (a stored stance, no fate, no ruling, by a
    character or by nobody mapped) because a busy turn has thousands of notes; any other
    note takes the general path through ``read_note_facts`` and ``_skip_reason``. Both apply
    the same rules and use the same words.
    """
    if not draft.live:
        return _void_notes(notes, ctx, book)
    tallying = Tallying()
    deadline = note_deadline(draft.made_at, ctx)
    limit = deadline[0]
    made_at = edited_into_challenge(draft)
    gates = _author_gate(draft, ctx)
    gates[None] = _UNMAPPED  # no character: ``_skip_reason`` says unmapped
    by_id = ctx.by_id
    concerns = book.concerns if book.has_rulings else None
    before = 0 if made_at is None else bisect_left(notes, made_at, key=_PUBLISHED)
    late = len(notes) if limit is None else bisect_right(notes, limit, key=_PUBLISHED)
    late = max(late, before)  # a note before the challenge is that first, late or not
    # Each run with the reason its notes by a character who may take a position are
    # ignored for, and its words; an empty run never needs its words.
    late_words = _no_words if limit is None else _late_words(limit, deadline[1])
    before_words = _no_words if made_at is None else partial(_written_before, made_at=made_at)
    runs: tuple[tuple[list[Note], IgnoreReason | None, Callable[[datetime], str]], ...] = (
        (notes[late:], _LATE, late_words),
        (notes[before:late], None, _no_words),
        (notes[:before], _BEFORE_CHALLENGE, before_words),
    )
    # explanations that depend only on the reason and author
    texts: dict[tuple[IgnoreReason, CharacterId | None], str] = {}
    by_author: dict[CharacterId | None, str] = {}  # the same, for authors the gate shuts out
    by_label: dict[str, str] = {}  # why a commenter mapped to nobody is ignored, by label
    # The ignored notes, latest first like every list filled in the loop. Each is made as
    # it is met: keeping a tuple of its fields until after the loop and mapping them all to
    # IgnoredNotes there costs one more object per note for the cyclic collector to walk
    # and free, more than the map saves (measured with callgrind).
    skipped: list[IgnoredNote] = []
    superseded: list[IgnoredNote] = []
    backdated_flags: list[Flag] = []
    fates: list[Fate] = []
    # each character's deciding note (the gate lets characters only: never a None author)
    deciding: dict[CharacterId | None, tuple[Note, CharacterId | None, Stance]] = {}
    # Why a character's deciding note holds sway, shared by the notes it supersedes; None
    # until it is met. Every character the gate lets through has a key, so the loop reads
    # it by subscript (cheaper than a get call).
    sway: dict[object, str | None] = dict.fromkeys(gates)
    # Locals, not globals, in the loop below: it runs for every note of a busy turn.
    skip, supersede = skipped.append, superseded.append
    new, ignored_note = _new_tuple, IgnoredNote
    support, oppose, no_stance, ambiguous = _SUPPORT, _OPPOSE, _NO_STANCE, _AMBIGUOUS
    unknown, no_position, superseding = _UNKNOWN, _NO_POSITION, _SUPERSEDED
    for run, time_reason, time_words in runs:
        for note in reversed(run):
            author = note.author_id
            stance = note.stance
            reason: IgnoreReason | _Gate | None
            try:  # a subscript, not a get call: an author the gate does not know is rare
                reason = gates[author]
            except KeyError:
                reason = unknown
            if (
                reason is unknown
                # the stored stance is a Stance: identity tests, cheaper than its class
                or not (
                    stance is support
                    or stance is oppose
                    or stance is no_stance
                    or stance is ambiguous
                )
                or note.fate
                or (concerns is not None and concerns(note.id))
            ):
                facts = read_note_facts(note, ctx, book)
                if note.fate:
                    fates.append(_fate_of(facts))
                author, stance = facts.author_id, facts.stance
                reason = _skip_reason(facts, draft, ctx, limit)
                if reason is not None:
                    if reason in _PER_AUTHOR:
                        why = texts.get((reason, author))
                        if why is None:
                            why = _skip_text(note, author, reason, ctx, deadline)
                            texts[reason, author] = why
                    else:
                        why = _skip_text(
                            note, author, reason, ctx, deadline, facts.ruling_note, made_at
                        )
                    skip(new(ignored_note, (note.id, author, reason, why)))
                    continue
                late_ok = facts.ruled_count is True
            elif reason is None:  # a character who may take a position
                if time_reason is not None:
                    why = time_words(note.published)
                    skip(new(ignored_note, (note.id, author, time_reason, why)))
                    continue
                if stance is no_stance:
                    skip(new(ignored_note, (note.id, author, no_position, _NO_POSITION_TEXT)))
                    continue
                why = sway[author]
                # Superseded, and not backdated: a backdated note was first seen after the
                # deadline, so it has a time it was first seen (tested here, per note: one
                # walk of all the notes first for such a time cost more).
                if why is not None and note.first_seen is None:
                    supersede(new(ignored_note, (note.id, author, superseding, why)))
                    continue
                late_ok = False
            elif reason is _UNMAPPED:  # a commenter mapped to nobody: worded by their label
                label = note.author_label
                why = by_label.get(label)
                if why is None:
                    why = by_label[label] = _skip_text(note, None, _UNMAPPED, ctx, deadline)
                skip(new(ignored_note, (note.id, None, _UNMAPPED, why)))
                continue
            else:  # the challenger, the target or an outsider
                why = by_author.get(author)
                if why is None:
                    why = by_author[author] = _skip_text(note, author, reason, ctx, deadline)
                skip(new(ignored_note, (note.id, author, reason, why)))
                continue
            # The note takes a position: the author's deciding one, or superseded by it.
            why = sway.get(author)  # the general path's author may be one the gate did not know
            if why is None:
                deciding[author] = (note, author, stance)
                sway[author] = f"{by_id[author].name}'s later note {note.id} holds sway."
            else:
                supersede(new(ignored_note, (note.id, author, superseding, why)))
            if not late_ok and note.first_seen is not None:
                flag = backdated(note, deadline)
                if flag is not None:  # it is one: first seen after the deadline
                    backdated_flags.append(flag)
    skipped.reverse()
    skipped += superseded
    tallying.ignored = skipped
    fates.reverse()
    tallying.fates = fates
    backdated_flags.reverse()
    tallying.flags = backdated_flags
    for note, author, stance in reversed(deciding.values()):
        assert author is not None  # see `deciding`
        _place(note, author, stance, ctx, tallying)
    return tallying


def _no_words(published: datetime) -> str:
    """The words of a run ``tally_notes`` never words: an empty one, or the notes in time."""
    raise AssertionError("no note of this run is ignored for its time")


def _place(
    note: Note, author: CharacterId, stance: Stance, ctx: TurnContext, tallying: Tallying
) -> None:
    tallying.deciding[note.id] = note
    # Tested by identity, not looked up in a dict keyed by Stance (an enum member's hash is
    # a Python call), and the Position made in place: this runs for every counted note.
    if stance is _SUPPORT:
        verb, counted = _VERB_SUPPORT, tallying.supporters
    elif stance is _OPPOSE:
        verb, counted = _VERB_OPPOSE, tallying.opposers
    else:
        verb, counted = _VERB_AMBIGUOUS, tallying.pending
    why = f"{ctx.by_id[author].name} {verb} (note {note.id})."
    counted.append(_new_tuple(Position, (author, note.id, stance, note.published, why)))
    if counted is tallying.pending:
        message = f"{why} Note {note.id} reads both ways."
        tallying.flags.append(Flag(FlagKind.AMBIGUOUS_STANCE, message, note.entry_id, note.id))
