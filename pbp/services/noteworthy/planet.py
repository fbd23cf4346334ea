"""The campaign "planet": every blog's entries merged by time, with their notes, the
turn's event on top, and live support / oppose counts on this turn's challenges.

A fixed number of queries whatever the campaign's size (no query per entry or note), and
a page of `PAGE_SIZE` entries: older ones are a link away (`before`, the last entry shown),
so a campaign's hundredth turn costs what its first did.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import defer, load_only
from sqlmodel import Session, col, select

from pbp.models import Campaign, Character, CharacterIcon, Entry, Event, Note, Turn
from pbp.rules import noteworthy as nw
from pbp.services import icons, mentions
from pbp.services.noteworthy import note_counts as counting
from pbp.services.noteworthy import tally as tally_service
from pbp.services.noteworthy.note_counts import NoteCount

PAGE_SIZE = 50

NOTE_COLUMNS: tuple[Any, ...] = (  # read as rows; select(*...) cannot be typed
    Note.id,
    Note.entry_id,
    Note.author_character_id,
    Note.author_name,
    Note.body_html,
    Note.published_at,
    Note.stance,
    Note.icon_id,
)


@dataclass
class PlanetEntry:
    entry: Entry
    author: Character
    # (note, its author): the note as a read-only row of NOTE_COLUMNS.
    notes: list[tuple[Any, Character | None]] = field(default_factory=list)
    challenge: nw.ChallengeResult | None = None
    # How each note counts, by note id, in the tally's words (pbp.services.noteworthy.
    # note_counts); a note on no challenge (nor the final) has no label.
    note_counts: dict[Any, NoteCount] = field(default_factory=dict)
    # The icon beside the entry and beside each note by id (issue #33 item 1): picked, or
    # its character's default; none for a character without icons.
    icon: icons.IconView | None = None
    note_icons: dict[Any, icons.IconView] = field(default_factory=dict)


@dataclass
class Planet:
    campaign: Campaign
    characters: list[Character]
    turn: Turn | None
    entries: list[PlanetEntry]
    turns: list[Any]  # (id, number) rows, the latest first
    filters: dict
    # The `before` of the next (older) page, None on the last page.
    older: int | None = None


def planet(
    *,
    session: Session,
    campaign: Campaign,
    limit: int | None = None,
    turn_number: int | None = None,
    character_slug: str | None = None,
    mood: str | None = None,
    before: int | None = None,
) -> Planet:
    limit = limit or PAGE_SIZE
    chars, faces_of = _characters(session, campaign)
    by_id = {c.id: c for c in chars}
    # Every turn's number for the filter, but only the latest turn's row: the others carry
    # their standings and results, which this page never reads.
    # Rows read by column name (sqlmodel types them as plain tuples).
    turns: list[Any] = list(
        session.exec(
            select(Turn.id, Turn.number)
            .where(Turn.campaign_id == campaign.id)
            .order_by(col(Turn.number).desc())
        )
    )
    turn = None
    if turns:
        turn = session.exec(select(Turn).where(Turn.id == turns[0].id)).one()
    # The newest `limit` entries are picked by id first and only then read whole: sorting
    # a long campaign's entries (thousands, bodies included) to keep a page costs more
    # than the rest of the page.
    newest = select(Entry.id).where(
        col(Entry.character_id).in_(by_id) if by_id else False,
        col(Entry.hidden_at).is_(None),  # hidden by its author (hidden_entries)
    )
    if turn_number is not None:
        wanted = next((t.id for t in turns if t.number == turn_number), -1)
        newest = newest.where(Entry.turn_id == wanted)
    if character_slug:
        wanted_ids = [c.id for c in chars if c.slug == character_slug] or [-1]
        newest = newest.where(col(Entry.character_id).in_(wanted_ids))
    if mood:
        newest = newest.where(Entry.mood == nw.normalize_mood(mood))
    if before is not None:
        newest = newest.where(_older_than(session, before))
    order = (col(Entry.published_at).desc(), col(Entry.id).desc())
    # One more than the page holds tells whether an older page exists.
    newest = newest.order_by(*order).limit(limit + 1)
    # Only what the entry card and this page read (templates/_entry_card.html): not the
    # Markdown source, the flags, the feed's bookkeeping, for up to 50 entries.
    shown: Any = (  # instrumented attributes, typed as their values
        Entry.id,
        Entry.character_id,
        Entry.turn_id,
        Entry.title,
        Entry.body_html,
        Entry.mood_raw,
        Entry.mood,
        Entry.published_at,
        Entry.icon_id,
    )
    whole = select(Entry).options(load_only(*shown, raiseload=True))
    rows = list(session.exec(whole.where(col(Entry.id).in_(newest)).order_by(*order)))
    older = rows[limit - 1].id if len(rows) > limit else None
    rows = rows[:limit]
    notes_by_entry: dict[int, list] = defaultdict(list)
    if rows:
        # Up to 100 entries' notes, a thousand or more: read-only rows, not ORM objects.
        notes = session.exec(
            select(*NOTE_COLUMNS)
            .where(col(Note.entry_id).in_([e.id for e in rows]))
            .order_by(Note.published_at, Note.id)
        )
        for note in notes:
            notes_by_entry[note.entry_id].append((note, by_id.get(note.author_character_id)))
    challenges, counts = _tallies(session, campaign, turn, chars, rows, notes_by_entry)
    faces = _faces(faces_of, rows, notes_by_entry)
    entries = [
        PlanetEntry(
            e,
            by_id[e.character_id],
            notes_by_entry[e.id],
            challenges.get(e.id),
            {n.id: counts[n.id] for n, _ in notes_by_entry[e.id] if n.id in counts},
            faces.get((e.character_id, e.icon_id)),
            {
                n.id: faces[(n.author_character_id, n.icon_id)]
                for n, _ in notes_by_entry[e.id]
                if (n.author_character_id, n.icon_id) in faces
            },
        )
        for e in rows
    ]
    filters = {"turn": turn_number, "character": character_slug, "mood": mood}
    return Planet(campaign, chars, turn, entries, turns, filters, older)


def _characters(session: Session, campaign: Campaign) -> tuple[list[Character], list]:
    """The campaign's characters by name, and all their icons (issue #33 item 1), in the one
    query the page made for its characters alone before it showed icons: the planet's
    queries stay as many. The icons' pictures are not read (only their addresses show)."""
    icon = CharacterIcon
    data: Any = icon.data  # an instrumented attribute, typed as its value
    rows = session.exec(
        select(Character, icon)
        .outerjoin(icon, col(icon.character_id) == Character.id)
        .where(Character.campaign_id == campaign.id)
        .order_by(col(Character.name), col(icon.id))
        .options(defer(data))
    )
    chars: dict[int, Character] = {}
    faces = []
    for character, face in rows:
        chars.setdefault(character.id, character)
        if face is not None:
            faces.append(face)
    return list(chars.values()), faces


def _faces(faces: list, rows: list[Entry], notes_by_entry: dict[int, list]) -> dict:
    """The icon of every entry and note on the page: picked, or the character's default."""
    pairs = [(e.character_id, e.icon_id) for e in rows]
    pairs += [(n.author_character_id, n.icon_id) for e in rows for n, _ in notes_by_entry[e.id]]
    return icons.shown_of(faces, pairs)


@dataclass(frozen=True)
class TailoredText:
    """A referee's event text for one character: an addition to the general text, or a
    replacement of it (Noteworthy: "may tailor different events to specific PCs")."""

    character: Character
    mode: str  # "addition" or "replacement"
    text: str


@dataclass(frozen=True)
class TurnHeader:
    """The top of the planet: the current turn, its event for everyone and the reader's own
    tailored part (issue #27 item 9: the planet shows it, as the turn page does). Read for
    each reader, outside the cached part of the page."""

    turn: Turn | None
    event: str | None
    tailored: list[TailoredText]


def turn_header(*, session: Session, campaign: Campaign, reader: Character | None) -> TurnHeader:
    # LIMIT 1: `first()` alone has the ORM build every turn, standings and results decoded.
    turn = session.exec(
        select(Turn)
        .where(Turn.campaign_id == campaign.id)
        .order_by(col(Turn.number).desc())
        .limit(1)
    ).first()
    if turn is None:
        return TurnHeader(None, None, [])
    wanted: list[sa.ColumnElement[bool]] = [col(Event.character_id).is_(None)]
    if reader is not None:
        wanted.append(col(Event.character_id) == reader.id)
    general, tailored = None, []
    events = session.exec(
        select(Event).where(Event.turn_id == turn.id, sa.or_(*wanted)).order_by(col(Event.id))
    ).all()
    # Issue #29 item 4: "@Name" in an event links to the character.
    book = mentions.book_if_needed(
        session=session, campaign=campaign, texts=[e.text for e in events]
    )
    for event in events:
        if event.character_id is None:
            general = mentions.plain_text_markup(event.text, book)
        elif reader is not None:
            tailored.append(
                TailoredText(reader, event.mode, mentions.plain_text_markup(event.text, book))
            )
    return TurnHeader(turn, general, tailored)


def _tallies(
    session: Session,
    campaign: Campaign,
    turn: Turn | None,
    chars: list[Character],
    rows: list[Entry],
    notes_by_entry: dict[int, list],
) -> tuple[dict[Any, nw.ChallengeResult], dict[Any, NoteCount]]:
    """The live challenges of the current turn on this page, and how each note shown
    counts: tallied for the turn in play, read from the stored result for a resolved one.
    The tally runs only when a challenge of the current turn, or a note on one of its
    entries (a challenge since withdrawn, the final), is on the page; the page is cached
    per change of the campaign (pbp.web.page_cache), so once per change at most."""
    if campaign.ruleset != "noteworthy":
        return {}, {}
    challenges: dict[Any, nw.ChallengeResult] = {}
    counts: dict[Any, NoteCount] = {}
    live = turn is not None and turn.status != "resolved"
    if live and turn is not None:
        current = [e for e in rows if e.turn_id == turn.id]
        if any(e.mood == nw.CHALLENGING or notes_by_entry[e.id] for e in current):
            result = tally_service.tally(session=session, campaign=campaign, turn=turn)
            challenges = {c.entry_id: c for c in result.challenges}
            counts = counting.of_tally(result, {c.id: c.name for c in chars})
    # Resolved turns whose entries here have notes: their labels from the stored result.
    done = {e.turn_id for e in rows if notes_by_entry[e.id] and e.turn_id is not None}
    done.discard(turn.id if live and turn is not None else None)
    if done:
        for stored in session.exec(
            select(Turn.result).where(col(Turn.id).in_(done), Turn.status == "resolved")
        ):
            counts |= counting.of_turn_result(stored)
    return challenges, counts


def _older_than(session: Session, entry_id: int):
    """Entries after `entry_id` in the planet's newest-first order (keyset paging: no
    OFFSET, whose cost grows with the page number). An unknown id gives the first page."""
    mark = session.exec(select(Entry.published_at).where(Entry.id == entry_id)).first()
    if mark is None:
        return sa.true()
    return sa.or_(
        col(Entry.published_at) < mark,
        sa.and_(col(Entry.published_at) == mark, col(Entry.id) < entry_id),
    )
