"""A Noteworthy tally as plain JSON: what the API answers and what a resolved turn keeps.

Resolving a turn stores this record on the turn (`Turn.result["tally"]`), so the API and the
dashboard show a resolved turn exactly as it was resolved, never a tally computed again from
notes that arrived or changed later (those are listed beside it instead; see
`tally.late_arrivals`). Every challenge, position and note names the character and the
entry (title and address) beside the ids, so a reader needs no second lookup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pbp import links
from pbp.rules import noteworthy as nw


@dataclass(frozen=True)
class Labels:
    """Names and entries by id, from the rows the tally was computed on."""

    names: Mapping[Any, str]
    entries: Mapping[Any, tuple[str, str]]  # entry id -> (title, URL)

    def name(self, character_id) -> str | None:
        return None if character_id is None else self.names.get(character_id)

    def entry(self, entry_id) -> dict:
        title, url = self.entries.get(entry_id, (None, None))
        return {"entry_id": entry_id, "entry_title": title, "entry_url": url}


def labels_of(campaign_slug: str, characters: Iterable, entries: Iterable) -> Labels:
    """`characters` and `entries` are rows with the columns of `tally.CHARACTER_COLUMNS` and
    `tally.ENTRY_COLUMNS`; an entry's URL is its address on the player's own blog, or its
    page here for a built-in blog."""
    characters = list(characters)
    slugs = {c.id: c.slug for c in characters}
    return Labels(
        names={c.id: c.name for c in characters},
        entries={
            e.id: (
                e.title,
                e.url or links.entry(campaign_slug, slugs.get(e.character_id, ""), e.id),
            )
            for e in entries
        },
    )


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _position(p: nw.Position, entry_id, labels: Labels) -> dict:
    return {
        "character_id": p.character_id,
        "character_name": labels.name(p.character_id),
        "note_id": p.note_id,
        **labels.entry(entry_id),
        "stance": p.stance.value,
        "published": _time(p.published),
        "explanation": p.explanation,
    }


def _ignored(i: nw.IgnoredNote, entry_id, labels: Labels) -> dict:
    return {
        "note_id": i.note_id,
        "author_id": i.author_id,
        "author_name": labels.name(i.author_id),
        **labels.entry(entry_id),
        "reason": i.reason.value,
        "explanation": i.explanation,
    }


def challenge_record(c: nw.ChallengeResult, labels: Labels) -> dict:
    return {
        **labels.entry(c.entry_id),
        "challenger_id": c.challenger_id,
        "challenger_name": labels.name(c.challenger_id),
        "target_id": c.target_id,
        "target_name": labels.name(c.target_id),
        "target_explanation": c.target.explanation,
        "made_at": _time(c.made_at),
        "valid": c.valid,
        "invalid_reason": c.invalid_reason.value if c.invalid_reason else None,
        "withdrawn": c.withdrawn,
        "outcome": c.outcome.value,
        "supporters": [_position(p, c.entry_id, labels) for p in c.supporters],
        "opposers": [_position(p, c.entry_id, labels) for p in c.opposers],
        "pending": [_position(p, c.entry_id, labels) for p in c.pending],
        "ignored": [_ignored(i, c.entry_id, labels) for i in c.ignored],
        "explanation": list(c.explanation),
        "consequence": None,
    }


def tally_record(t: nw.Tally, labels: Labels, note_entries: Mapping | None = None) -> dict:
    """The tally as JSON (the shape of the API's TallyOut). `note_entries`: note id -> entry
    id, so a vote in the final names the entry it was left on."""
    winner = t.endgame.winner_id if t.endgame.phase is nw.EndgamePhase.WON else None
    ignored = [_ignored(i, c.entry_id, labels) for c in t.challenges for i in c.ignored]
    record = {
        "turn": t.turn,
        "closed": t.closed,
        "complete": t.complete,
        "needs_ruling": t.needs_ruling,
        "challenges": [challenge_record(c, labels) for c in t.challenges],
        "ignored_notes": ignored,
        "final": _final(t, labels, note_entries or {}),
        "flags": [
            {
                "kind": f.kind.value,
                "message": f.message,
                "entry_id": f.entry_id,
                "note_id": f.note_id,
            }
            for f in t.flags
        ],
        "standings": [
            {"id": c.id, "name": c.name, "status": "winner" if c.id == winner else c.status.value}
            for c in t.standings
        ],
        "advanced": list(t.advanced),
        "eliminated": list(t.eliminated),
        "endgame": {
            "phase": t.endgame.phase.value,
            "finalists": list(t.endgame.finalists),
            "winner_id": t.endgame.winner_id,
            "winner_name": labels.name(t.endgame.winner_id),
            "explanation": t.endgame.explanation,
        },
        "provocation": t.provocation.explanation if t.provocation.recommended else None,
        "rulings": [
            {
                "kind": r.ruling.kind.value,
                "subject_id": r.ruling.subject_id,
                "value": r.ruling.value,
                "applied": r.applied,
                "explanation": r.explanation,
            }
            for r in t.rulings
        ],
        "explanation": list(t.explanation),
        "resolved": False,
        "arrived_after_resolution": [],
    }
    return record


def _flag(f: nw.Flag) -> dict:
    return {
        "kind": f.kind.value,
        "message": f.message,
        "entry_id": f.entry_id,
        "note_id": f.note_id,
    }


def _final(t: nw.Tally, labels: Labels, note_entries: Mapping) -> dict | None:
    final = t.final
    if final is None:
        return None

    def position(p: nw.Position) -> dict:
        return _position(p, note_entries.get(p.note_id), labels)

    return {
        "sides": [
            {
                "finalist_id": side.finalist_id,
                "finalist_name": labels.name(side.finalist_id),
                "entries": [labels.entry(e) for e in side.entry_ids],
                "votes": [position(p) for p in side.votes],
            }
            for side in final.sides
        ],
        "pending": [position(p) for p in final.pending],
        "ignored": [_ignored(i, note_entries.get(i.note_id), labels) for i in final.ignored],
        "winner_id": final.winner_id,
        "winner_name": labels.name(final.winner_id),
        "explanation": list(final.explanation),
    }


def without_ruling_notes(record: dict, notes: Iterable[str]) -> dict:
    """The challenges as players may read them before the turn is resolved: the referee's
    ruling notes are the referee's until then (they end the explanation that applies the
    ruling, so each is cut from the end of a line)."""
    # Longest first: one note may end with another.
    tails = sorted({f" {n.strip()}" for n in notes if n and n.strip()}, key=len, reverse=True)
    if not tails:
        return record

    def cut(text: str) -> str:
        for tail in tails:
            if text.endswith(tail):
                return text[: -len(tail)]
        return text

    def clean(item: Any) -> Any:
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        if isinstance(item, list):
            return [clean(v) for v in item]
        return cut(item) if isinstance(item, str) else item

    return clean(record)
