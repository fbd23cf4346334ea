"""How each note counts, in the tally's words: the label every page shows beside a note.

Issue #27 item 4: a note's label said what the note *reads as* ("opposes"), so the target's
own note and a late joiner's note were shown opposing on a challenge whose count said
"0 oppose". The label now says what the tally did with the note: "counts: opposes", or
"does not count: the target's own note". Nothing is decided here: each label is the tally's
answer for that note (its counted positions, and its ignored notes with their reasons),
read from a live tally or from the record a resolved turn keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pbp.rules import noteworthy as nw

# The tally's reasons (nw.IgnoreReason), worded to follow "does not count:".
NOT_COUNTED = {
    nw.IgnoreReason.LATE: "written after the deadline for notes on this challenge",
    nw.IgnoreReason.BEFORE_CHALLENGE: "written before the challenge was made",
    nw.IgnoreReason.OUTSIDER: "an outsider's note (outsiders cannot support or oppose)",
    nw.IgnoreReason.JOINED_LATE: "joined after the turn opened",
    nw.IgnoreReason.CHALLENGER: "the challenger's own note",
    nw.IgnoreReason.TARGET: "the target's own note",
    nw.IgnoreReason.FINALIST: "a finalist's note (the outsiders decide the final)",
    nw.IgnoreReason.UNMAPPED: "its author is not mapped to a character",
    nw.IgnoreReason.SUPERSEDED: "a later note by the same character holds sway",
    nw.IgnoreReason.BOTH_SIDES: "took both sides of a mutual challenge; the later note holds",
    nw.IgnoreReason.NO_POSITION: "takes no position",
    nw.IgnoreReason.CHALLENGE_VOID: "the challenge is invalid or withdrawn",
    nw.IgnoreReason.REFEREE: "ruled out by the referee",
}
COUNTED = {nw.Stance.SUPPORT.value: "supports", nw.Stance.OPPOSE.value: "opposes"}


@dataclass(frozen=True)
class NoteCount:
    """One note's label: `kind` is "support", "oppose", "pending" (reads both ways, waits
    for the referee) or "ignored"; `words` the text shown."""

    kind: str
    words: str


def _counted(stance: str, side: str | None = None) -> NoteCount:
    if side is not None:  # a vote in the final
        return NoteCount("support", f"counts: a vote for {side}")
    return NoteCount(stance, f"counts: {COUNTED[stance]}")


PENDING = NoteCount("pending", "waits for the referee: it reads both ways")


def _ignored(reason: str) -> NoteCount:
    try:
        words = NOT_COUNTED[nw.IgnoreReason(reason)]
    except ValueError:  # a reason a later version of the rules may add
        words = reason
    return NoteCount("ignored", f"does not count: {words}")


def _labels(
    counted: Iterable[tuple[Any, str, str | None]],
    pending: Iterable[Any],
    ignored: Iterable[tuple[Any, str]],
) -> dict[Any, NoteCount]:
    """(note id, stance, finalist backed) counted, note ids pending, (note id, reason)
    ignored: a note is in one of them (the ignored first, as the tally lists them)."""
    labels = {note_id: _ignored(reason) for note_id, reason in ignored}
    labels |= {note_id: PENDING for note_id in pending}
    labels |= {note_id: _counted(stance, side) for note_id, stance, side in counted}
    return labels


def of_tally(tally: nw.Tally, names: Mapping[Any, str]) -> dict[Any, NoteCount]:
    """Every note of a live tally, by note id (the challenges' and the final's)."""
    counted: list[tuple[Any, str, str | None]] = []
    pending: list[Any] = []
    ignored: list[tuple[Any, str]] = []
    for c in tally.challenges:
        counted += [(p.note_id, p.stance.value, None) for p in (*c.supporters, *c.opposers)]
        pending += [p.note_id for p in c.pending]
        ignored += [(i.note_id, i.reason.value) for i in c.ignored]
    if tally.final is not None:
        for side in tally.final.sides:
            name = names.get(side.finalist_id, "a finalist")
            counted += [(p.note_id, p.stance.value, name) for p in side.votes]
        pending += [p.note_id for p in tally.final.pending]
        ignored += [(i.note_id, i.reason.value) for i in tally.final.ignored]
    return _labels(counted, pending, ignored)


def of_record(record: Mapping[str, Any]) -> dict[Any, NoteCount]:
    """Every note of a resolved turn's stored tally (pbp.services.noteworthy.tally_record)."""
    counted: list[tuple[Any, str, str | None]] = []
    pending: list[Any] = []
    ignored: list[tuple[Any, str]] = []
    for c in record.get("challenges") or []:
        for p in (*c.get("supporters", []), *c.get("opposers", [])):
            counted.append((p["note_id"], p["stance"], None))
        pending += [p["note_id"] for p in c.get("pending", [])]
        ignored += [(i["note_id"], i["reason"]) for i in c.get("ignored", [])]
    final = record.get("final")
    if final:
        for side in final.get("sides", []):
            name = side.get("finalist_name") or "a finalist"
            counted += [(p["note_id"], p["stance"], name) for p in side.get("votes", [])]
        pending += [p["note_id"] for p in final.get("pending", [])]
        ignored += [(i["note_id"], i["reason"]) for i in final.get("ignored", [])]
    return _labels(counted, pending, ignored)


def of_turn_result(result: Mapping[str, Any] | None) -> dict[Any, NoteCount]:
    """A resolved turn's labels from its stored result (none for a turn resolved before
    the whole tally was kept)."""
    record = (result or {}).get("tally")
    return of_record(record) if record else {}
