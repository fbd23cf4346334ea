"""Resolving challenges: mutual challenges, majorities, ties and the standings they leave.

Noteworthy: "The majority wins; ties favor the target. The winner of the challenge advances
in the setting ... The loser becomes an outsider and is no longer able to advance."
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from pbp.rules.noteworthy.challenges import Draft
from pbp.rules.noteworthy.context import RulingBook, TurnContext, subject_key
from pbp.rules.noteworthy.model import (
    Character,
    CharacterId,
    Flag,
    FlagKind,
    IgnoredNote,
    IgnoreReason,
    Outcome,
    Position,
    RulingKind,
    Stance,
    Status,
)
from pbp.rules.noteworthy.positions import Tallying, recency


def side_of(draft: Draft, position: Position) -> CharacterId | None:
    """In a mutual challenge A<->B, supporting A's challenge or opposing B's is A's side."""
    return draft.challenger_id if position.stance is Stance.SUPPORT else draft.target_id


Judged = tuple[Draft, Tallying]


def mutual_pairs(judged: list[Judged]) -> list[tuple[Judged, Judged]]:
    """Pairs of live challenges where two characters challenge each other."""
    by_pair: dict[tuple[CharacterId | None, CharacterId | None], Judged] = {
        (draft.challenger_id, draft.target_id): (draft, tallying)
        for draft, tallying in judged
        if draft.live and draft.target_id is not None
    }
    pairs, seen = [], set()
    for (challenger, target), one in by_pair.items():
        two = by_pair.get((target, challenger))
        if two is not None and challenger != target and (target, challenger) not in seen:
            seen.add((challenger, target))
            pairs.append((one, two))
    return pairs


def _counted(tallying: Tallying) -> dict[CharacterId, Position]:
    return {p.character_id: p for p in tallying.supporters + tallying.opposers}


def _void(judged: Judged, position: Position, why: str) -> None:
    draft, tallying = judged
    for positions in (tallying.supporters, tallying.opposers):
        if position in positions:
            positions.remove(position)
    tallying.ignored.append(
        IgnoredNote(position.note_id, position.character_id, IgnoreReason.BOTH_SIDES, why)
    )
    tallying.flags.append(Flag(FlagKind.BOTH_SIDES, why, draft.entry.id, position.note_id))


def void_both_sides(pair: tuple[Judged, Judged], ctx: TurnContext) -> None:
    """Noteworthy: "If two PCs are challenging each other, you cannot support both sides."

    A character may take A's side on both entries (support A's challenge, oppose B's). One
    who took both sides has only their most recent position across the pair counted; the
    earlier one is void and flagged.
    """
    one, two = pair
    positions_two = _counted(two[1])
    notes = {**one[1].deciding, **two[1].deciding}
    for character_id, p1 in _counted(one[1]).items():
        p2 = positions_two.get(character_id)
        if p2 is None or side_of(one[0], p1) == side_of(two[0], p2):
            continue
        later_is_two = recency(notes[p2.note_id]) > recency(notes[p1.note_id])
        void, keep, where = (p1, p2, one) if later_is_two else (p2, p1, two)
        why = (
            f"{ctx.name(character_id)} took both sides of the mutual challenge between "
            f"{ctx.name(one[0].challenger_id)} and {ctx.name(two[0].challenger_id)}; only "
            f"their most recent position (note {keep.note_id}) counts."
        )
        _void(where, void, why)


def _tiebreak(draft: Draft, ctx: TurnContext, book: RulingBook, tied: bool) -> Outcome | None:
    found = book.find(RulingKind.TIEBREAK, draft.entry.id)
    if found is None:
        return None
    index, ruling = found
    if not tied:
        book.rejected(index, "The challenge is not tied.")
        return None
    value = subject_key(ruling.value).casefold()
    if value == "challenger" or value == subject_key(draft.challenger_id).casefold():
        book.applied(index, f"Tie broken for the challenger, {ctx.name(draft.challenger_id)}.")
        return Outcome.CHALLENGER_WINS
    if value == "target" or value == subject_key(draft.target_id).casefold():
        book.applied(index, f"Tie broken for the target, {ctx.name(draft.target_id)}.")
        return Outcome.TARGET_WINS
    book.rejected(index, f"{ruling.value!r} is neither the challenger nor the target.")
    return None


def _ambiguity_matters(supporters: int, opposers: int, pending: int) -> bool:
    """Whether some reading of the pending (ambiguous) positions gives another winner.

    Each pending position may be read as support, opposition or neither, so the support
    can end anywhere from ``supporters`` to ``supporters + pending`` and the opposition
    likewise. The challenger wins every reading only if they win the worst one (all read
    as opposition); the target wins every reading only if the best one (all read as
    support) still fails the majority -- ties favour the target.
    """
    if pending == 0:
        return False
    challenger_always = supporters > opposers + pending
    target_always = supporters + pending <= opposers
    return not (challenger_always or target_always)


def decide(
    draft: Draft, tallying: Tallying, ctx: TurnContext, book: RulingBook
) -> tuple[Outcome, str]:
    """Noteworthy: "The majority wins; ties favor the target" (zero-zero included).

    The outcome needs a ruling while the target is unclear or ambiguous positions could
    swing it; a ``tiebreak`` ruling decides a tie instead of the default.
    """
    if draft.invalid is not None:
        return Outcome.NO_EFFECT, "The challenge is invalid and has no effect."
    if draft.withdrawn:
        return Outcome.NO_EFFECT, "The challenge was withdrawn and has no effect."
    if draft.target_id is None:
        return Outcome.NEEDS_RULING, "The target needs a ruling before the notes decide."
    s, o, k = len(tallying.supporters), len(tallying.opposers), len(tallying.pending)
    score = f"{s} support, {o} oppose"
    if _ambiguity_matters(s, o, k):
        return Outcome.NEEDS_RULING, f"{score}, {k} ambiguous: a stance ruling decides it."
    challenger, target = ctx.name(draft.challenger_id), ctx.name(draft.target_id)
    outcome = _tiebreak(draft, ctx, book, tied=s == o)
    if outcome is None:
        outcome = Outcome.CHALLENGER_WINS if s > o else Outcome.TARGET_WINS
        how = "the majority supports the challenge" if s > o else "the majority opposes it"
        how = "a tie favours the target" if s == o else how
    else:
        how = "the referee broke the tie"
    if outcome is Outcome.CHALLENGER_WINS:
        return outcome, f"{score}: {how}. {challenger} wins; {target} becomes an outsider."
    return outcome, f"{score}: {how}. {target} wins; {challenger} becomes an outsider."


def winner_and_loser(
    draft: Draft, outcome: Outcome
) -> tuple[CharacterId | None, CharacterId | None]:
    if outcome is Outcome.CHALLENGER_WINS:
        return draft.challenger_id, draft.target_id
    if outcome is Outcome.TARGET_WINS:
        return draft.target_id, draft.challenger_id
    return None, None


def standings_after(
    characters: tuple[Character, ...], losers: AbstractSet[CharacterId | None]
) -> tuple[Character, ...]:
    """Noteworthy: "The loser becomes an outsider" -- of any challenge that turn, since all
    of a turn's challenges are resolved against the standings at the turn's start."""
    return tuple(
        Character(c.id, c.name, Status.OUTSIDER) if c.id in losers else c for c in characters
    )
