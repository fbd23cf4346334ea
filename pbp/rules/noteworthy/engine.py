"""Noteworthy, Allen Varney's blogger's roleplaying game: the pure rules engine.

Docstrings quote the rules text (Noteworthy draft 1.0, October 2004). This package holds no
database, clock, network or randomness: the services layer builds the inputs from its rows,
calls these functions and stores or shows what they return.

Public API (everything is importable from this module)::

    normalize_mood(raw: str | None) -> str | None
        The comparable form of a "Current mood:" value ("Challenging!" -> "challenging").
    is_challenging(raw: str | None) -> bool
    read_stance(text: str) -> StanceReading
        Call once when a note arrives; store ``.stance`` on the note (``Note.stance``).
    detect_target(title, body, characters, challenger_id, aliases=None) -> TargetReading
        The one character a challenge names, or ``target_id=None`` when it needs a ruling.
    find_named_characters(text, characters, aliases=None) -> tuple[CharacterId, ...]
    tally_turn(inp: TurnInput) -> Tally
        Everything the referee dashboard shows for one turn. Never raises on odd data: it
        flags it. Deterministic: the same input (in any order) gives the same tally.
    run_campaign(characters, turns) -> tuple[Tally, ...]
        Tally turns in order, feeding each turn's standings into the next.

Inputs: :class:`Character` (id, name, status), :class:`Entry` (with mood :class:`Revision`
history), :class:`Note` (with the stored :class:`Stance`), :class:`Ruling` (see
:class:`RulingKind` for what each kind's subject and value are), :class:`Settings` (opening
turns, fair interval, action moods, aliases; raises :class:`RulesError` on a bad setting) and
:class:`TurnInput`. Output: :class:`Tally` with one :class:`ChallengeResult` per challenge,
:class:`ActionReport` s, the :class:`FinalResult` of a final turn, the standings after the
turn, a :class:`Provocation` hint, the :class:`Endgame` state, :class:`Flag` s for the referee
and every :class:`AppliedRuling`. Each carries human-readable ``explanation`` text.

Times are ``datetime`` objects, all timezone-aware (or all naive) so they compare. Ids may be
ints or strings; a ruling's ids may be the text form of an int id (from a web form).

The implementation is split by topic: ``model`` (the records above),
``text`` (moods, stances, targets), ``context`` (rulings and the
turn's cast), ``challenges`` (which entries are valid challenges),
``positions`` (which notes count), ``resolve`` (mutual challenges,
majorities, standings) and ``final`` (endgame and provocation).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import islice
from operator import attrgetter

from pbp.rules.noteworthy.challenges import (
    Draft,
    MoodTimeline,
    find_challenges,
    mood_events,
    read_mood_timeline,
    report_mood,
)
from pbp.rules.noteworthy.context import RulingBook, TurnContext, subject_key, when
from pbp.rules.noteworthy.final import endgame_after, provocation, tally_final
from pbp.rules.noteworthy.model import (
    CHALLENGING,
    DEFAULT_OPENING_TURNS,
    RULING_FOR_FLAG,
    ActionReport,
    AppliedRuling,
    ChallengeResult,
    Character,
    CharacterId,
    Endgame,
    EndgamePhase,
    Entry,
    EntryId,
    Fate,
    FinalResult,
    FinalSide,
    Flag,
    FlagKind,
    IgnoredNote,
    IgnoreReason,
    InvalidReason,
    Note,
    NoteId,
    Outcome,
    Position,
    Provocation,
    Revision,
    RulesError,
    Ruling,
    RulingKind,
    Settings,
    Stance,
    StanceReading,
    Status,
    Tally,
    TargetMethod,
    TargetReading,
    TurnInput,
)
from pbp.rules.noteworthy.positions import Tallying, tally_notes
from pbp.rules.noteworthy.resolve import (
    decide,
    mutual_pairs,
    standings_after,
    void_both_sides,
    winner_and_loser,
)
from pbp.rules.noteworthy.text import (
    CHALLENGING_MOOD_PATTERN,
    detect_target,
    find_named_characters,
    is_challenging,
    looks_like_challenge,
    normalize_mood,
    read_stance,
)

__all__ = [
    "CHALLENGING",
    "CHALLENGING_MOOD_PATTERN",
    "RULING_FOR_FLAG",
    "DEFAULT_OPENING_TURNS",
    "ActionReport",
    "AppliedRuling",
    "ChallengeResult",
    "Character",
    "CharacterId",
    "Endgame",
    "EndgamePhase",
    "Entry",
    "EntryId",
    "Fate",
    "FinalResult",
    "FinalSide",
    "Flag",
    "FlagKind",
    "IgnoreReason",
    "IgnoredNote",
    "InvalidReason",
    "Note",
    "NoteId",
    "Outcome",
    "Position",
    "Provocation",
    "Revision",
    "Ruling",
    "RulingKind",
    "RulesError",
    "Settings",
    "Stance",
    "StanceReading",
    "Status",
    "Tally",
    "TargetMethod",
    "TargetReading",
    "TurnInput",
    "detect_target",
    "find_named_characters",
    "is_challenging",
    "normalize_mood",
    "read_stance",
    "run_campaign",
    "tally_turn",
    "Draft",
    "MoodTimeline",
    "RulingBook",
    "Tallying",
    "TurnContext",
    "decide",
    "endgame_after",
    "find_challenges",
    "looks_like_challenge",
    "mood_events",
    "mutual_pairs",
    "provocation",
    "read_mood_timeline",
    "report_mood",
    "standings_after",
    "subject_key",
    "tally_final",
    "tally_notes",
    "void_both_sides",
    "when",
    "winner_and_loser",
]


_BY_ID = attrgetter("id")
_BY_ARRIVAL = attrgetter("arrival")
_BY_PUBLISHED = attrgetter("published")


def _sort_notes(notes: list[Note]) -> None:
    """Noteworthy: "the PC's most recent note holds sway" -- by publication time, then
    arrival order; the id only makes the order total so input order never matters.

    Three stable single-key sorts: much cheaper than one sort on a tuple key when a turn has
    thousands of notes (see the benchmark). Ids and arrivals both follow the order notes
    were stored in, so after the id sort the arrival sort meets sorted runs and costs little.
    """
    try:
        notes.sort(key=_BY_ID)
    except TypeError:  # ids of mixed types: compare them as text
        notes.sort(key=lambda note: subject_key(note.id))
    notes.sort(key=_BY_ARRIVAL)
    notes.sort(key=_BY_PUBLISHED)


def _group_notes(
    notes: Iterable[Note], entries: list[Entry]
) -> tuple[dict[EntryId, list[Note]], list[Note]]:
    """The notes on this turn's entries grouped by entry id (in the order given), and the
    notes that look like a challenge. Noteworthy: "notes are permitted only on the current
    turn's entries"."""
    grouped: dict[EntryId, list[Note]] = {e.id: [] for e in entries}
    by_text = {subject_key(e.id): e.id for e in entries}
    challenging = []
    for note in notes:
        group = grouped.get(note.entry_id)
        if group is None:
            entry_id = by_text.get(subject_key(note.entry_id))
            if entry_id is None:
                continue
            group = grouped[entry_id]
        group.append(note)
        text = note.text
        # The substring tests are a cheap filter before the regular expression.
        if ("allenging" in text or "ALLENGING" in text) and looks_like_challenge(text):
            challenging.append(note)
    return grouped, challenging


def _read_notes(
    notes: Sequence[Note], entries: list[Entry]
) -> tuple[dict[EntryId, list[Note]], list[Flag]]:
    """The notes on this turn's entries, grouped by entry id, each group in note order (see
    ``_sort_notes``). Noteworthy: "You cannot issue a challenge in a note" -- a note that
    looks like one is pointed out (in note order), never treated as one.

    When every id is an int, or every id a str, the groups are sorted one by one: the same
    order as sorting all notes first (ids of one such type always compare), with shorter
    sorts. Any other mix of ids is sorted all together first, exactly as the rule says:
    whether ids compare as text is decided over all the notes.
    """
    presorted = _presorted(notes, entries)
    if presorted is not None:
        return presorted
    kinds = {note.id.__class__ for note in notes}
    one_kind = len(kinds) == 1 and (int in kinds or str in kinds)
    if one_kind:
        grouped, challenging = _group_notes(notes, entries)
        for group in grouped.values():
            _sort_notes(group)
        _sort_notes(challenging)
    else:
        ordered = list(notes)
        _sort_notes(ordered)
        grouped, challenging = _group_notes(ordered, entries)
    flags = []
    for note in challenging:
        message = (
            f"Note {note.id} says 'Challenging', but a challenge can only be an entry "
            "on the challenger's own blog; it is not a challenge."
        )
        flags.append(Flag(FlagKind.CHALLENGE_IN_NOTE, message, note.entry_id, note.id))
    return grouped, flags


def _presorted(
    notes: Sequence[Note], entries: list[Entry]
) -> tuple[dict[EntryId, list[Note]], list[Flag]] | None:
    """``_read_notes`` for notes that already come in note order with no tie for the id to
    break (by publication, and by strictly rising arrival), every one on an entry of the
    turn by its own id and none looking like a challenge: the same groups, with nothing to
    sort and no note to flag. The service passes notes so (by id, ids given in arrival
    order, arrival following publication as a feed is polled). ``None`` when that is not
    so, and the general path decides. One loop of plain attribute reads: cheaper here than
    sorting, even on sorted runs, which reads each key through a getter call.
    """
    if not notes:
        return None
    grouped: dict[EntryId, list[Note]] = {e.id: [] for e in entries}
    # The first note has no arrival before it to compare with: its own stands in, and the
    # loop starts at the second note.
    first = notes[0]
    last_published, last_arrival = first.published, first.arrival
    try:
        grouped[first.entry_id].append(first)
        # Each test is one bytecode's cheap form (a dict subscript, not dict.get; the text's
        # test once): this loop reads every note of the turn.
        for note in islice(notes, 1, None):
            grouped[note.entry_id].append(note)
            published, arrival = note.published, note.arrival
            if published < last_published or arrival <= last_arrival:
                return None
            last_published, last_arrival = published, arrival
    except (KeyError, TypeError):  # an entry not of the turn by its own id, or times or
        return None  # arrivals that do not compare (the sorts say so)
    # The texts searched as one: two searches of it cost less than two of each text, and
    # a note that looks like a challenge is rare.
    texts = [note.text for note in notes]
    joined = "\n".join(texts)
    if "allenging" in joined or "ALLENGING" in joined:
        for text in texts:
            if ("allenging" in text or "ALLENGING" in text) and looks_like_challenge(text):
                return None
    return grouped, []


def _read_entries(
    entries: list[Entry], ctx: TurnContext, book: RulingBook
) -> tuple[dict[EntryId, MoodTimeline], list[ActionReport], list[Flag]]:
    """Every entry's mood history read against the turn's close, with the game actions its
    mood names and the flags (missing moods, late revisions) it raises."""
    timelines = {e.id: read_mood_timeline(e, mood_events(e, book), ctx) for e in entries}
    actions: list[ActionReport] = []
    flags: list[Flag] = []
    for entry in entries:
        flags.extend(timelines[entry.id].flags)
        action, flag = report_mood(entry, timelines[entry.id], ctx)
        actions += [action] if action else []
        flags += [flag] if flag else []
    return timelines, actions, flags


def _freeze(
    draft: Draft, tallying: Tallying, ctx: TurnContext, book: RulingBook
) -> ChallengeResult:
    outcome, why = decide(draft, tallying, ctx, book)
    return ChallengeResult(
        entry_id=draft.entry.id,
        challenger_id=draft.challenger_id,
        target=draft.target,
        made_at=draft.made_at,
        valid=draft.invalid is None,
        invalid_reason=draft.invalid,
        withdrawn=draft.withdrawn,
        supporters=tuple(tallying.supporters),
        opposers=tuple(tallying.opposers),
        pending=tuple(tallying.pending),
        ignored=tuple(tallying.ignored),
        fates=tuple(tallying.fates),
        flags=tuple(draft.flags + tallying.flags),
        outcome=outcome,
        explanation=(*draft.explanation, why),
    )


def _final_entries(
    entries: list[Entry],
    timelines: dict[EntryId, MoodTimeline],
    finalists: tuple[CharacterId, ...],
    ctx: TurnContext,
) -> dict[CharacterId, list[Entry]]:
    """Each finalist's entries this turn; an entry with no mood is no game action."""
    with_mood = [e for e in entries if timelines[e.id].mood_at_close is not None]
    return {f: [e for e in with_mood if ctx.canonical(e.owner_id) == f] for f in finalists}


def _results_and_losers(
    challenges: tuple[ChallengeResult, ...], final: FinalResult | None, drafts: list[Draft]
) -> tuple[list[CharacterId], set[CharacterId | None]]:
    # A decided challenge has both ids; None stays out of the standings' lookups anyway.
    winners: list[CharacterId] = []
    losers: set[CharacterId | None] = set()
    for draft, result in zip(drafts, challenges, strict=True):
        winner, loser = winner_and_loser(draft, result.outcome)
        if winner is not None:
            winners.append(winner)
            losers.add(loser)
    if final is not None and final.winner_id is not None:
        winners.append(final.winner_id)
        losers.update(s.finalist_id for s in final.sides if s.finalist_id != final.winner_id)
    return list(dict.fromkeys(winners)), losers


def _summary(
    inp: TurnInput, ctx: TurnContext, eliminated: tuple[CharacterId, ...], extra: list[str]
) -> tuple[str, ...]:
    state = f"closed {when(inp.closes)}" if inp.closes else "still open; provisional"
    lines = [f"Turn {inp.number} ({state})."]
    if eliminated:
        names = ", ".join(ctx.name(c) for c in eliminated)
        lines.append(f"Becoming outsiders: {names}.")
    return (*lines, *extra)


def tally_turn(inp: TurnInput) -> Tally:
    """Tally one turn: its challenges, positions, outcomes, standings, hints and flags.

    Noteworthy: "At the end of each turn, or after a fair interval specified by the referee,
    the referee reviews each PCs' challenge and tabulates the notes supporting or opposing
    it." When exactly two characters are active at the turn's start the turn is the final.
    """
    known = {c.id for c in inp.characters}
    joined = tuple(c for c in inp.joined if c.id not in known)
    ctx = TurnContext.build(inp.number, inp.closes, inp.settings, inp.characters, joined)
    book = RulingBook(inp.rulings)
    entries = sorted(
        (e for e in inp.entries if e.turn == inp.number),
        key=lambda e: (e.published, subject_key(e.id)),
    )
    timelines, actions, flags = _read_entries(entries, ctx, book)
    finalists = ctx.active_ids if len(ctx.active_ids) == 2 else ()
    contested = [e for e in entries if ctx.canonical(e.owner_id) not in finalists]
    drafts = find_challenges(contested, timelines, ctx, book)
    on_entry, note_flags = _read_notes(inp.notes, entries)
    flags += note_flags

    judged = [(d, tally_notes(d, on_entry.get(d.entry.id, []), ctx, book)) for d in drafts]
    for pair in mutual_pairs(judged):
        void_both_sides(pair, ctx)
    challenges = tuple(_freeze(d, t, ctx, book) for d, t in judged)
    final = None
    if finalists:
        final_entries = _final_entries(entries, timelines, finalists, ctx)
        final = tally_final(finalists, final_entries, on_entry, ctx, book)

    advanced, losers = _results_and_losers(challenges, final, drafts)
    # Joiners are in the game from the next turn on (Noteworthy resolves a turn against
    # the standings at its start, which do not name them).
    standings = standings_after((*ctx.characters, *joined), losers)
    endgame, end_flag = endgame_after(standings, final, ctx, book)
    hint = provocation(drafts, bool(finalists), ctx)
    rulings, ruling_flags = book.report()
    flags += [flag for result in challenges for flag in result.flags]
    flags += [*(final.flags if final else ()), *([end_flag] if end_flag else ()), *ruling_flags]
    eliminated = tuple(c.id for c in (*ctx.characters, *joined) if c.id in losers and c.active)
    explanation = [c.explanation[-1] for c in challenges if c.outcome is not Outcome.NO_EFFECT]
    explanation += [*(final.explanation if final else ()), endgame.explanation]
    return Tally(
        turn=inp.number,
        closed=inp.closes is not None,
        challenges=challenges,
        actions=tuple(actions),
        final=final,
        standings=standings,
        advanced=tuple(advanced),
        eliminated=eliminated,
        provocation=hint,
        endgame=endgame,
        flags=tuple(flags),
        rulings=rulings,
        explanation=_summary(inp, ctx, eliminated, [*explanation, hint.explanation]),
    )


def run_campaign(characters: Sequence[Character], turns: Iterable[TurnInput]) -> tuple[Tally, ...]:
    """Tally ``turns`` in order; turn 1 starts from ``characters`` and every later turn from
    the previous tally's standings (each turn's own ``characters`` field is replaced).

    All of a turn's challenges are resolved against the standings at the turn's start, so a
    campaign is a fold of ``tally_turn`` over its turns.
    """
    standings = tuple(characters)
    tallies = []
    for turn in turns:
        tally = tally_turn(replace(turn, characters=standings))
        tallies.append(tally)
        standings = tally.standings
    return tuple(tallies)
