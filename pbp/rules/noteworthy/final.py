"""The endgame (the final conflict and the winner) and the referee's provocation hint.

Noteworthy: "When only two PCs are still active ... the referee's final event sets up a
conflict between the two characters. ... Each outsider may now post a note supporting one
side or the other (but not both sides). Post the note to the entry of the PC you support."
"""

from __future__ import annotations

from collections.abc import Mapping

from pbp.rules.noteworthy.challenges import Draft
from pbp.rules.noteworthy.context import RulingBook, TurnContext, when
from pbp.rules.noteworthy.model import (
    Character,
    CharacterId,
    Endgame,
    EndgamePhase,
    Entry,
    EntryId,
    FinalResult,
    FinalSide,
    Flag,
    FlagKind,
    IgnoredNote,
    IgnoreReason,
    Note,
    Position,
    Provocation,
    RulingKind,
    Stance,
)
from pbp.rules.noteworthy.positions import (
    NoteFacts,
    ignore,
    lateness,
    note_deadline,
    read_note_facts,
    recency,
)

Vote = tuple[NoteFacts, CharacterId | None]


def _skip_voter(
    facts: NoteFacts, finalists: tuple[CharacterId, ...], ctx: TurnContext
) -> IgnoredNote | None:
    """Noteworthy: in the final "each outsider may now post a note supporting one side"."""
    if facts.ruled_count is False:
        return ignore(facts, IgnoreReason.REFEREE, facts.ruling_note)
    if facts.author_id is None:
        label = facts.note.author_label or "the commenter"
        return ignore(facts, IgnoreReason.UNMAPPED, f"{label} is not mapped to a character.")
    if facts.author_id in finalists:
        return ignore(facts, IgnoreReason.FINALIST, f"{ctx.name(facts.author_id)} is a finalist.")
    if facts.author_id not in ctx.by_id:
        why = f"{ctx.name(facts.author_id)} joined after the turn opened; they take no side in it."
        return ignore(facts, IgnoreReason.JOINED_LATE, why)
    if facts.stance is Stance.NONE:
        return ignore(facts, IgnoreReason.NO_POSITION, "No clear support or opposition.")
    return None


def _side(
    facts: NoteFacts, owner: CharacterId, finalists: tuple[CharacterId, ...]
) -> CharacterId | None:
    """A note supports the finalist whose entry it is on; an explicit "Oppose" there backs the
    rival; an ambiguous note has no side until the referee rules."""
    if facts.stance is Stance.SUPPORT:
        return owner
    if facts.stance is Stance.OPPOSE:
        return next((f for f in finalists if f != owner), None)
    return None


def _collect_votes(
    entries: Mapping[CharacterId, list[Entry]],
    notes: Mapping[EntryId, list[Note]],
    finalists: tuple[CharacterId, ...],
    ctx: TurnContext,
    book: RulingBook,
    ignored: list[IgnoredNote],
    flags: list[Flag],
) -> list[Vote]:
    votes: list[Vote] = []
    for owner, owned in entries.items():
        for entry in owned:
            deadline = note_deadline(entry.published, ctx)
            for note in notes.get(entry.id, []):
                facts = read_note_facts(note, ctx, book)
                skipped = _skip_voter(facts, finalists, ctx)
                if skipped is None:
                    skipped, flag = lateness(facts, deadline)
                    flags.extend([flag] if flag and skipped is None else [])
                if skipped is not None:
                    ignored.append(skipped)
                else:
                    votes.append((facts, _side(facts, owner, finalists)))
    return votes


def _latest_votes(
    votes: list[Vote], ctx: TurnContext, ignored: list[IgnoredNote]
) -> dict[CharacterId | None, Vote]:
    """Noteworthy: "a later note moves the vote"; support for both sides -> only the most
    recent holds (the earlier is listed as "both sides")."""
    votes = sorted(votes, key=lambda vote: recency(vote[0].note))
    latest: dict[CharacterId | None, Vote] = {}
    for facts, side in votes:
        earlier = latest.get(facts.author_id)
        if earlier is not None:
            moved = earlier[1] != side
            reason = IgnoreReason.BOTH_SIDES if moved else IgnoreReason.SUPERSEDED
            why = f"{ctx.name(facts.author_id)}'s later note {facts.note.id} holds sway"
            why += " (a vote for both sides: only the most recent holds)." if moved else "."
            ignored.append(ignore(earlier[0], reason, why))
        latest[facts.author_id] = (facts, side)
    return latest


def _final_position(facts: NoteFacts, side: CharacterId | None, ctx: TurnContext) -> Position:
    note = facts.note
    assert facts.author_id is not None  # _skip_voter ignored the notes of no character
    backs = f"backs {ctx.name(side)}" if side is not None else "takes an ambiguous position"
    why = f"{ctx.name(facts.author_id)} {backs} (note {note.id}, {when(note.published)})."
    return Position(facts.author_id, note.id, facts.stance, note.published, why)


def _final_tiebreak(
    finalists: tuple[CharacterId, ...],
    entries: Mapping[CharacterId, list[Entry]],
    ctx: TurnContext,
    book: RulingBook,
) -> CharacterId | None:
    subjects = [None] + [entry.id for owned in entries.values() for entry in owned]
    for subject in subjects:
        found = book.find(RulingKind.TIEBREAK, subject)
        if found is None:
            continue
        index, ruling = found
        winner = ctx.character(ruling.value)
        if winner is not None and winner.id in finalists:
            book.applied(index, f"The referee decided the final for {winner.name}.")
            return winner.id
        book.rejected(index, f"{ruling.value!r} is not one of the finalists.")
    return None


def _decide_final(
    finalists: tuple[CharacterId, CharacterId],
    counts: dict[CharacterId, int],
    pending: int,
    entries: Mapping[CharacterId, list[Entry]],
    ctx: TurnContext,
    book: RulingBook,
) -> tuple[CharacterId | None, str, Flag | None]:
    """Noteworthy: "the referee totals the votes and resolves the challenge normally".

    Reading: a final has no target for a tie to favour, so a tie (or ambiguous votes that
    could swing it) is reported for the referee, whose ``tiebreak`` ruling decides it.
    """
    a, b = finalists
    score = f"{ctx.name(a)} {counts[a]}, {ctx.name(b)} {counts[b]}"
    if pending == 0 and counts[a] != counts[b]:
        winner = a if counts[a] > counts[b] else b
        return winner, f"{score}: {ctx.name(winner)} wins the game.", None
    if pending and abs(counts[a] - counts[b]) > pending:
        winner = a if counts[a] > counts[b] else b
        return winner, f"{score} ({pending} ambiguous): {ctx.name(winner)} wins the game.", None
    ruled = _final_tiebreak(finalists, entries, ctx, book)
    if ruled is not None:
        return ruled, f"{score}: the referee decided for {ctx.name(ruled)}.", None
    why = f"{score}" + (f", {pending} ambiguous" if pending else "") + ": the referee decides."
    return None, why, Flag(FlagKind.FINAL_TIE, f"The final needs a ruling. {why}")


def tally_final(
    finalists: tuple[CharacterId, CharacterId],
    entries: Mapping[CharacterId, list[Entry]],
    notes: Mapping[EntryId, list[Note]],
    ctx: TurnContext,
    book: RulingBook,
) -> FinalResult:
    """Count the outsiders' votes on the two finalists' entries (every entry each finalist
    posted with a mood this turn). A vote needs a clear stance, as in any challenge."""
    ignored: list[IgnoredNote] = []
    flags = [
        Flag(FlagKind.NO_FINAL_ENTRY, f"{ctx.name(f)} posted no entry for the final.")
        for f in finalists
        if not entries.get(f)
    ]
    votes = _collect_votes(entries, notes, finalists, ctx, book, ignored, flags)
    latest = _latest_votes(votes, ctx, ignored)
    sides: dict[CharacterId | None, list[Position]] = {f: [] for f in finalists}
    pending: list[Position] = []
    for facts, side in latest.values():
        sides.get(side, pending).append(_final_position(facts, side, ctx))
    counts = {f: len(sides[f]) for f in finalists}
    winner, why, flag = _decide_final(finalists, counts, len(pending), entries, ctx, book)
    flags += [flag] if flag else []
    result_sides = tuple(
        FinalSide(f, tuple(e.id for e in entries.get(f, [])), tuple(sides[f])) for f in finalists
    )
    opening = f"The final conflict: {ctx.name(finalists[0])} against {ctx.name(finalists[1])}."
    return FinalResult(
        sides=result_sides,
        pending=tuple(pending),
        ignored=tuple(ignored),
        winner_id=winner,
        flags=tuple(flags),
        explanation=(opening, why),
    )


def endgame_after(
    standings: tuple[Character, ...],
    final: FinalResult | None,
    ctx: TurnContext,
    book: RulingBook,
) -> tuple[Endgame, Flag | None]:
    """Noteworthy: "When only two PCs are still active ... the referee's final event sets up
    a conflict"; "The last PC left wins". Nobody left (e.g. both sides of a mutual challenge
    lost) is reported for a ``tiebreak`` ruling with no subject naming the winner."""
    if final is not None:
        finalists = tuple(side.finalist_id for side in final.sides)
        if final.winner_id is None:
            return Endgame(EndgamePhase.NEEDS_RULING, finalists, None, final.explanation[-1]), None
        why = f"{ctx.name(final.winner_id)} won the final and the game."
        return Endgame(EndgamePhase.WON, finalists, final.winner_id, why), None
    active = tuple(c.id for c in standings if c.active)
    if len(active) > 2:
        why = f"{len(active)} characters active{_not_active(standings, ctx)}."
        return Endgame(EndgamePhase.IN_PLAY, (), None, why), None
    if len(active) == 2:
        why = f"Only {ctx.name(active[0])} and {ctx.name(active[1])} remain: the final is next."
        return Endgame(EndgamePhase.FINAL_NEXT, active, None, why), None
    if len(active) == 1:
        why = f"{ctx.name(active[0])} is the last active character and wins the game."
        return Endgame(EndgamePhase.WON, (), active[0], why), None
    return _nobody_left(ctx, book)


def _not_active(standings: tuple[Character, ...], ctx: TurnContext) -> str:
    """Who of the roster is not active, and why: "; not active: Dov (an outsider before
    this turn), Eli (becomes an outsider this turn)" (issue #27 item 10: "3 characters
    active" with 4 on the roster left readers counting)."""
    out = []
    for c in standings:
        if c.active:
            continue
        before = ctx.character(c.id)
        if before is not None and before.active:
            out.append(f"{c.name} (becomes an outsider this turn)")
        else:
            out.append(f"{c.name} (an outsider before this turn)")
    return f"; not active: {', '.join(out)}" if out else ""


def _nobody_left(ctx: TurnContext, book: RulingBook) -> tuple[Endgame, Flag | None]:
    found = book.find(RulingKind.TIEBREAK, None)
    if found is not None:
        index, ruling = found
        winner = ctx.character(ruling.value)
        if winner is not None:
            why = f"No active character is left; the referee named {winner.name} the winner."
            book.applied(index, why)
            return Endgame(EndgamePhase.WON, (), winner.id, why), None
        book.rejected(index, f"{ruling.value!r} is not a character in this game.")
    why = "No active character is left; the referee must decide the game."
    return Endgame(EndgamePhase.NEEDS_RULING, (), None, why), Flag(FlagKind.NO_ONE_LEFT, why)


def provocation(drafts: list[Draft], final_turn: bool, ctx: TurnContext) -> Provocation:
    """Noteworthy: "After the first two turns, if no PC makes a challenge in a turn, the
    referee should use a later turn's event to provoke a direct conflict and consequent
    challenges among at least two named PCs."

    Reading: any challenge entry by an active character counts as made -- withdrawn or
    invalid alike. Once two or fewer remain the final takes over, so no hint is given.
    """
    if ctx.number <= ctx.settings.opening_turns:
        return Provocation(False, "Still in the opening turns, when no challenges are allowed.")
    if final_turn or len(ctx.active_ids) <= 2:
        return Provocation(False, "The endgame has begun; no provocation is needed.")
    made = [d for d in drafts if ctx.is_active(d.challenger_id)]
    if made:
        names = ", ".join(dict.fromkeys(ctx.name(d.challenger_id) for d in made))
        return Provocation(False, f"Challenges were made this turn (by {names}).")
    why = (
        "No character made a challenge this turn: the next event should name at least two "
        "characters and provoke a direct conflict between them."
    )
    return Provocation(True, why)
