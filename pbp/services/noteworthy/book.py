"""The campaign as a book (issue #33 item 3): every entry in story order, turn by turn, each
turn opened by its event, the notes kept with their entry; for the whole campaign or one
character's entries.

It shows a reader exactly what the planet shows them: no entry its author hid (nor the
notes on it), the event for everyone, and a tailored part only to the character it was
written for (as `planet.turn_header` does for the current turn). The book is read whole:
five queries whatever the campaign's size (characters, turns, events, entries, notes).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import defer
from sqlmodel import Session, col, select

from pbp.errors import NotFound
from pbp.models import Campaign, Character, Entry, Event, Note, Turn
from pbp.services import campaigns
from pbp.services.noteworthy.planet import NOTE_COLUMNS, PlanetEntry, TailoredText


@dataclass
class Chapter:
    """One turn: its event (for everyone, and the reader's own tailored part) and its
    entries in the order they were published. `number` None: entries from before turn 1."""

    number: int | None
    event: str | None = None
    tailored: list[TailoredText] = field(default_factory=list)
    entries: list[PlanetEntry] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"Turn {self.number}" if self.number is not None else "Before the first turn"


@dataclass
class Book:
    campaign: Campaign
    character: Character | None  # whose book; None: the whole campaign's
    chapters: list[Chapter]

    @property
    def title(self) -> str:
        if self.character is None:
            return self.campaign.name
        return f"{self.character.name} — {self.campaign.name}"

    @property
    def entry_count(self) -> int:
        return sum(len(c.entries) for c in self.chapters)


def book(
    *,
    session: Session,
    campaign: Campaign,
    reader: Character | None,
    character_slug: str | None = None,
) -> Book:
    """The book of `campaign` (or of one character's entries) as `reader`, the viewer's
    own character (None for a visitor, a stranger or the referee), may read it."""
    if campaign.ruleset != "noteworthy":
        raise NotFound(f"{campaign.name} is a forum game: its story is in its scenes")
    whose = None
    if character_slug is not None:
        whose = campaigns.character_by_slug(session=session, campaign=campaign, slug=character_slug)
    chars = {
        c.id: c for c in session.exec(select(Character).where(Character.campaign_id == campaign.id))
    }
    turns = list(
        session.exec(select(Turn).where(Turn.campaign_id == campaign.id).order_by(col(Turn.number)))
    )
    chapters = {t.id: Chapter(t.number) for t in turns}
    _events(session, turns, chapters, reader)
    prologue = Chapter(None)
    entries = _entries(session, chars, whose)
    notes = _notes(session, [e.id for e in entries], chars)
    opened = [t.opened_at for t in turns]
    for entry in entries:
        chapter = chapters.get(entry.turn_id) if entry.turn_id is not None else None
        if chapter is None:
            chapter = _by_time(entry.published_at, opened, turns, chapters) or prologue
        chapter.entries.append(PlanetEntry(entry, chars[entry.character_id], notes[entry.id]))
    ordered = ([prologue] if prologue.entries else []) + [chapters[t.id] for t in turns]
    return Book(campaign, whose, ordered)


def _events(
    session: Session, turns: list[Turn], chapters: dict[Any, Chapter], reader: Character | None
) -> None:
    if not turns:
        return
    wanted: list[sa.ColumnElement[bool]] = [col(Event.character_id).is_(None)]
    if reader is not None:
        wanted.append(col(Event.character_id) == reader.id)
    rows = session.exec(
        select(Event)
        .where(col(Event.turn_id).in_(chapters), sa.or_(*wanted))
        .order_by(col(Event.id))
    )
    for event in rows:
        chapter = chapters[event.turn_id]
        if event.character_id is None:
            chapter.event = event.text
        elif reader is not None:
            chapter.tailored.append(TailoredText(reader, event.mode, event.text))


def _entries(session: Session, chars: dict[Any, Character], whose: Character | None) -> list[Entry]:
    if not chars:
        return []
    ids = [whose.id] if whose is not None else list(chars)
    source: Any = Entry.body_source  # the Markdown is for the edit page alone
    return list(
        session.exec(
            select(Entry)
            .options(defer(source))
            .where(
                col(Entry.character_id).in_(ids),
                col(Entry.hidden_at).is_(None),  # hidden by its author (hidden_entries)
            )
            .order_by(col(Entry.published_at), col(Entry.id))
        )
    )


def _notes(session: Session, entry_ids: list[Any], chars: dict[Any, Character]) -> dict:
    notes: dict[Any, list] = defaultdict(list)
    if not entry_ids:
        return notes
    rows = session.exec(
        select(*NOTE_COLUMNS)
        .where(col(Note.entry_id).in_(entry_ids))
        .order_by(col(Note.published_at), col(Note.id))
    )
    for note in rows:
        notes[note.entry_id].append((note, chars.get(note.author_character_id)))
    return notes


def _by_time(
    when: datetime | None, opened: list[datetime], turns: list[Turn], chapters: dict
) -> Chapter | None:
    """An entry pbp could not place in a turn: the turn open when it was published."""
    if when is None or not turns:
        return None
    at = bisect.bisect_right([_naive(o) for o in opened], _naive(when))
    return chapters[turns[at - 1].id] if at else None


def _naive(moment: datetime) -> datetime:
    return moment.replace(tzinfo=None)
