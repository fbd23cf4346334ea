"""The campaign "planet": every blog's entries merged by time, with their notes.

A fixed number of queries whatever the campaign's size (no query per entry or note).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlmodel import Session, select

from pbp.models import Campaign, Character, Entry, Event, Note, Turn


@dataclass
class PlanetEntry:
    entry: Entry
    author: Character
    notes: list[tuple[Note, Character | None]] = field(default_factory=list)


@dataclass
class Planet:
    campaign: Campaign
    characters: list[Character]
    turn: Turn | None
    events: list[Event]
    entries: list[PlanetEntry]


def planet(*, session: Session, campaign: Campaign, limit: int = 100) -> Planet:
    chars = list(
        session.exec(
            select(Character).where(Character.campaign_id == campaign.id).order_by(Character.name)
        )
    )
    by_id = {c.id: c for c in chars}
    turn = session.exec(
        select(Turn).where(Turn.campaign_id == campaign.id).order_by(Turn.number.desc())
    ).first()
    events = []
    if turn is not None:
        events = list(
            session.exec(select(Event).where(Event.turn_id == turn.id, Event.mode == "all"))
        )
    rows = list(
        session.exec(
            select(Entry)
            .where(Entry.character_id.in_(by_id) if by_id else False)
            .order_by(Entry.published_at.desc(), Entry.id.desc())
            .limit(limit)
        )
    )
    notes_by_entry: dict[int, list] = defaultdict(list)
    if rows:
        notes = session.exec(
            select(Note)
            .where(Note.entry_id.in_([e.id for e in rows]))
            .order_by(Note.published_at, Note.id)
        )
        for note in notes:
            author = by_id.get(note.author_character_id)
            notes_by_entry[note.entry_id].append((note, author))
    entries = [PlanetEntry(e, by_id[e.character_id], notes_by_entry[e.id]) for e in rows]
    return Planet(campaign, chars, turn, events, entries)
