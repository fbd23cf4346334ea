"""The Noteworthy tally as it was before the speed work of issue #19 item 4, kept verbatim.

The benchmark (tests/bench/test_bench_tally.py) times it beside ``tally_turn`` in the same
run, and tests/rules/noteworthy/test_reference.py checks the two give equal tallies on
generated turns. Only the functions that work changed are copied here (note order, grouping
notes by entry, positions, their wording and the "most recent note holds sway" pass);
everything else is the engine's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from operator import attrgetter

from pbp.rules.noteworthy.challenges import Draft, find_challenges
from pbp.rules.noteworthy.context import RulingBook, TurnContext, subject_key, when_compared
from pbp.rules.noteworthy.engine import (
    _final_entries,
    _freeze,
    _read_entries,
    _results_and_losers,
    _summary,
)
from pbp.rules.noteworthy.final import endgame_after, provocation, tally_final
from pbp.rules.noteworthy.model import (
    CharacterId,
    Entry,
    EntryId,
    Flag,
    FlagKind,
    IgnoredNote,
    IgnoreReason,
    Note,
    Outcome,
    Position,
    Stance,
    Tally,
    TurnInput,
)
from pbp.rules.noteworthy.positions import (
    _PER_AUTHOR,
    _UNKNOWN,
    Candidate,
    Deadline,
    Tallying,
    _author_gate,
    _record_fate,
    _skip_reason,
    _void_notes,
    backdated,
    edited_into_challenge,
    note_deadline,
    read_note_facts,
)
from pbp.rules.noteworthy.resolve import mutual_pairs, standings_after, void_both_sides
from pbp.rules.noteworthy.text import looks_like_challenge


def _note_order(notes: Iterable[Note]) -> list[Note]:
    """Noteworthy: "the PC's most recent note holds sway" -- by publication time, then
    arrival order; the id only makes the order total so input order never matters.

    Three stable single-key sorts: much cheaper than one sort on a tuple key when a turn has
    thousands of notes (see the benchmark).
    """
    ordered = list(notes)
    try:
        ordered.sort(key=attrgetter("id"))
    except TypeError:  # ids of mixed types: compare them as text
        ordered.sort(key=lambda note: subject_key(note.id))
    ordered.sort(key=attrgetter("arrival"))
    ordered.sort(key=attrgetter("published"))
    return ordered


def _read_notes(
    notes: list[Note], entries: list[Entry]
) -> tuple[dict[EntryId, list[Note]], list[Flag]]:
    """The notes on this turn's entries, grouped by entry id (in order). Noteworthy: "notes
    are permitted only on the current turn's entries", and "You cannot issue a challenge in a
    note" -- a note that looks like one is pointed out, never treated as one."""
    ids = {e.id for e in entries}
    by_text = {subject_key(e.id): e.id for e in entries}
    grouped: dict[EntryId, list[Note]] = {}
    flags = []
    for note in notes:
        entry_id = note.entry_id
        if entry_id not in ids:
            entry_id = by_text.get(subject_key(entry_id))
            if entry_id is None:
                continue
        group = grouped.get(entry_id)
        if group is None:
            group = grouped[entry_id] = []
        group.append(note)
        text = note.text
        # The substring tests are a cheap filter before the regular expression.
        if ("allenging" in text or "ALLENGING" in text) and looks_like_challenge(text):
            message = (
                f"Note {note.id} says 'Challenging', but a challenge can only be an entry "
                "on the challenger's own blog; it is not a challenge."
            )
            flags.append(Flag(FlagKind.CHALLENGE_IN_NOTE, message, note.entry_id, note.id))
    return grouped, flags


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
    on_entry, note_flags = _read_notes(_note_order(inp.notes), entries)
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


def keep_latest(
    candidates: list[Candidate], ctx: TurnContext, tallying: Tallying
) -> list[Candidate]:
    """Noteworthy: "If a PC notes both support and opposition to the challenge, the PC's most
    recent note holds sway." Candidates come in (publication, arrival) order; only notes that
    take a position compete, so a later chatty note does not erase a position. Returns each
    character's deciding note, earliest first."""
    holders: dict[CharacterId, Candidate] = {}
    reasons: dict[CharacterId, str] = {}  # one explanation per holder, shared by its notes
    ignored = tallying.ignored
    superseded = IgnoreReason.SUPERSEDED
    for candidate in reversed(candidates):
        note, author, _ = candidate
        why = reasons.get(author)
        if why is None:
            holders[author] = candidate
            reasons[author] = f"{ctx.name(author)}'s later note {note.id} holds sway."
            continue
        ignored.append(IgnoredNote(note.id, author, superseded, why))
    return list(reversed(holders.values()))


def tally_notes(draft: Draft, notes: list[Note], ctx: TurnContext, book: RulingBook) -> Tallying:
    """The counted positions on one challenge, each with its deciding note, and every other
    note with the reason it does not count. ``notes`` come in (publication, arrival) order.

    The loop has a fast path for the usual note (a known author, a stored stance, no fate and
    no ruling) because a busy turn has thousands of notes; any other note takes the general
    path through ``read_note_facts`` and ``_skip_reason``. Both apply the same rules.
    """
    if not draft.live:
        return _void_notes(notes, ctx, book)
    tallying = Tallying()
    deadline = note_deadline(draft.made_at, ctx)
    limit = deadline[0]
    made_at = edited_into_challenge(draft)
    gate = _author_gate(draft, ctx)
    ruled = book.has_rulings
    texts: dict[tuple, str] = {}  # explanations that depend only on the reason and author
    candidates: list[Candidate] = []
    for note in notes:
        author, stance, ruling_note = note.author_id, note.stance, ""
        reason = gate.get(author, _UNKNOWN)
        if (
            reason is _UNKNOWN
            or stance.__class__ is not Stance
            or note.fate
            or (ruled and book.concerns(note.id))
        ):
            facts = read_note_facts(note, ctx, book)
            if note.fate:
                _record_fate(facts, tallying)
            author, stance, ruling_note = facts.author_id, facts.stance, facts.ruling_note
            reason = _skip_reason(facts, draft, ctx, limit)
            late_ok = facts.ruled_count is True
        else:
            late_ok = False
            if reason is None and made_at is not None and note.published < made_at:
                reason = IgnoreReason.BEFORE_CHALLENGE
            elif reason is None and limit is not None and note.published > limit:
                reason = IgnoreReason.LATE
            elif reason is None and stance is Stance.NONE:
                reason = IgnoreReason.NO_POSITION
        if reason is None:
            candidates.append((note, author, stance))
            seen = note.first_seen
            if seen is not None and limit is not None and seen > limit and not late_ok:
                tallying.flags.append(backdated(note, deadline))
            continue
        if reason in _PER_AUTHOR:
            why = texts.get((reason, author))
            if why is None:
                why = texts[reason, author] = _skip_text(note, author, reason, ctx, deadline)
        else:
            why = _skip_text(note, author, reason, ctx, deadline, ruling_note, made_at)
        tallying.ignored.append(IgnoredNote(note.id, author, reason, why))
    for note, author, stance in keep_latest(candidates, ctx, tallying):
        _place(note, author, stance, ctx, tallying)
    return tallying


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
        published, closed = when_compared(note.published, limit)
        why = f"Published {published}, after {what} at {closed}."
    elif reason is IgnoreReason.BEFORE_CHALLENGE:
        written, made = when_compared(note.published, made_at)
        why = (
            f"Written {written}, before the challenge was made at {made}: a note can only "
            "support or oppose a challenge that exists. A stance ruling can count it."
        )
    else:
        why = "No clear support or opposition."
    return why


_VERBS = {
    Stance.SUPPORT: "supports the challenge",
    Stance.OPPOSE: "opposes the challenge",
    Stance.AMBIGUOUS: "takes an ambiguous position; the referee must rule",
}


def _place(
    note: Note, author: CharacterId, stance: Stance, ctx: TurnContext, tallying: Tallying
) -> None:
    tallying.deciding[note.id] = note
    why = f"{ctx.name(author)} {_VERBS[stance]} (note {note.id})."
    position = Position(author, note.id, stance, note.published, why)
    if stance is Stance.SUPPORT:
        tallying.supporters.append(position)
    elif stance is Stance.OPPOSE:
        tallying.opposers.append(position)
    else:
        tallying.pending.append(position)
        message = f"{why} Note {note.id} reads both ways."
        tallying.flags.append(Flag(FlagKind.AMBIGUOUS_STANCE, message, note.entry_id, note.id))
