"""Feed a turn's rows to the pure Noteworthy rules and return its Tally.

A fixed number of queries per tally (characters, entries, revisions, notes, rulings),
whatever the number of entries and notes. The planet, the dashboard and an open
challenge's page all tally the open turn on every view, so the rows are read as plain
column tuples (no ORM objects: a crowded turn has thousands of notes, and nothing here
changes them), and the visible text of each stored body is computed once per process.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from pbp.markup import plain_text
from pbp.models import Campaign, Character, Entry, EntryRevision, Note, Ruling, Turn
from pbp.rules import noteworthy as nw
from pbp.rules.noteworthy.model import note_of
from pbp.services.noteworthy import tally_record

ARRIVED_LATE = "arrived after the turn was resolved"

# The visible text is a pure function of the stored body, so it is cached by the body
# itself (an edited body is a new key): the open turn is tallied on every page view, and
# sanitizing every note again each time was a quarter of the tally. 16k bodies: a few
# crowded turns of several campaigns, some megabytes at most.
_visible_text = functools.lru_cache(maxsize=16_384)(plain_text)

# The columns the rules read (attribute access on the rows works like on the models, so
# the pages can show these rows too).
# Columns read as rows (by name or position); sqlmodel's select() overloads cannot type a splat.
CHARACTER_COLUMNS: tuple[Any, ...] = (
    Character.id,
    Character.name,
    Character.status,
    Character.aliases,
    Character.slug,
)
ENTRY_COLUMNS: tuple[Any, ...] = (
    Entry.id,
    Entry.character_id,
    Entry.turn_id,
    Entry.title,
    Entry.body_html,
    Entry.mood_raw,
    Entry.mood,
    Entry.published_at,
    Entry.first_seen_at,
    Entry.url,
)
REVISION_COLUMNS: tuple[Any, ...] = (
    EntryRevision.entry_id,
    EntryRevision.seen_at,
    EntryRevision.mood_raw,
    EntryRevision.mood,
)
NOTE_COLUMNS: tuple[Any, ...] = (
    Note.id,
    Note.entry_id,
    Note.author_character_id,
    Note.author_name,
    Note.body_html,
    Note.published_at,
    Note.first_seen_at,
    Note.stance,
    Note.fate_text,
)


@dataclass(frozen=True)
class TurnRows:
    """One turn's rows as the tally reads them: read-only column rows (see the *_COLUMNS
    above), entries by id, notes in arrival order, revisions oldest first per entry."""

    characters: list[Any]
    entries: list[Any]
    revisions: dict[int, list[Any]]
    notes: list[Any]
    rulings: list[Ruling]


def rules_settings(campaign: Campaign, characters: list[Character]) -> nw.Settings:
    settings = campaign.settings or {}
    hours = settings.get("fair_interval_hours")
    aliases = {alias: c.id for c in characters for alias in (c.aliases or [])}
    return nw.Settings(
        opening_turns=int(settings.get("opening_turns", nw.DEFAULT_OPENING_TURNS)),
        fair_interval=timedelta(hours=float(hours)) if hours else None,
        actions=dict(settings.get("custom_moods") or {}),
        aliases=aliases,
    )


def standings_at_start(turn: Turn, characters: list[Character]) -> tuple[nw.Character, ...]:
    """The statuses snapshotted when the turn opened. A character added later is not in
    them (see `joined_after_start`); a turn without a snapshot uses the current ones."""
    snapshot = turn.start_standings or {}
    result = []
    for c in characters:
        if snapshot and str(c.id) not in snapshot:
            continue
        status = snapshot.get(str(c.id), c.status)
        rules_status = nw.Status.OUTSIDER if status == "outsider" else nw.Status.ACTIVE
        result.append(nw.Character(id=c.id, name=c.name, status=rules_status))
    return tuple(result)


def joined_after_start(turn: Turn, characters: list[Character]) -> tuple[nw.Character, ...]:
    """Characters added to the roster after the turn opened. Noteworthy resolves a turn
    against the standings at its start: they can neither challenge nor take a position
    in it (the rules mark such a challenge "joined after the turn opened")."""
    snapshot = turn.start_standings or {}
    if not snapshot:
        return ()
    return tuple(
        nw.Character(id=c.id, name=c.name) for c in characters if str(c.id) not in snapshot
    )


def _rules_entry(entry: Any, turn: Turn, versions: list[Any]) -> nw.Entry:
    first_mood = versions[0].mood_raw if versions else entry.mood_raw
    revisions, last = [], first_mood
    for version in versions[1:]:
        if version.mood != nw.normalize_mood(last):
            revisions.append(nw.Revision(at=version.seen_at, mood=version.mood_raw))
        last = version.mood_raw
    return nw.Entry(
        id=entry.id,
        owner_id=entry.character_id,
        turn=turn.number,
        published=entry.published_at or entry.first_seen_at,
        mood=first_mood,
        title=entry.title,
        text=_visible_text(entry.body_html),
        revisions=tuple(revisions),
        first_seen=entry.first_seen_at,
    )


_STANCES = {stance.value: stance for stance in nw.Stance}


def _rules_note(note: Any) -> nw.Note:
    # Unpacked by position (NOTE_COLUMNS' order): a crowded turn has thousands of notes,
    # and a row's attribute lookup costs many times its tuple unpacking.
    # note_of is Note(...) with every field in order, without the frozen dataclass's
    # per-field object.__setattr__ (the same object, in about half the time).
    note_id, entry_id, author_id, author_name, body_html, published, first_seen, stance, fate = note
    return note_of(
        note_id,
        entry_id,
        author_id,
        published or first_seen,
        _visible_text(body_html),
        _STANCES.get(stance) or nw.Stance(stance),
        note_id,  # arrival: ids grow as notes arrive
        first_seen,
        author_name,
        fate,
    )


def rules_ruling(ruling: Ruling) -> nw.Ruling:
    return nw.Ruling(
        kind=nw.RulingKind(ruling.kind),
        subject_id=ruling.subject_id if ruling.subject_id else None,
        value=(ruling.value or {}).get("value"),
        note=ruling.reason,
    )


def load_turn(*, session: Session, campaign: Campaign, turn: Turn) -> TurnRows:
    """Five queries whatever the turn's size."""
    characters = session.exec(
        select(*CHARACTER_COLUMNS)
        .where(Character.campaign_id == campaign.id)
        .order_by(Character.id)
    ).all()
    # A hidden entry is read as if it had never been posted, and so are the notes on it
    # (pbp.services.noteworthy.hidden_entries).
    entries = session.exec(
        select(*ENTRY_COLUMNS)
        .where(Entry.turn_id == turn.id, col(Entry.hidden_at).is_(None))
        .order_by(Entry.id)
    ).all()
    entry_ids = [e.id for e in entries]
    versions: dict[int, list[Any]] = defaultdict(list)
    notes: list[Any] = []
    if entry_ids:
        for rev in session.exec(
            select(*REVISION_COLUMNS)
            .where(col(EntryRevision.entry_id).in_(entry_ids))
            .order_by(col(EntryRevision.seen_at), col(EntryRevision.id))
        ):
            versions[rev.entry_id].append(rev)
        notes = session.exec(
            select(*NOTE_COLUMNS).where(col(Note.entry_id).in_(entry_ids)).order_by(Note.id)
        ).all()
    rulings = session.exec(
        select(Ruling)
        .where(Ruling.campaign_id == campaign.id, Ruling.turn_id == turn.id)
        .order_by(col(Ruling.created_at), col(Ruling.id))
    ).all()
    return TurnRows(list(characters), list(entries), versions, list(notes), list(rulings))


def input_of(campaign: Campaign, turn: Turn, rows: TurnRows) -> nw.TurnInput:
    return nw.TurnInput(
        number=turn.number,
        closes=turn.closed_at,
        opens=turn.opened_at,
        characters=standings_at_start(turn, rows.characters),
        joined=joined_after_start(turn, rows.characters),
        entries=tuple(_rules_entry(e, turn, rows.revisions.get(e.id, [])) for e in rows.entries),
        notes=tuple(_rules_note(n) for n in rows.notes),
        rulings=tuple(rules_ruling(r) for r in rows.rulings),
        settings=rules_settings(campaign, rows.characters),
    )


def turn_input(*, session: Session, campaign: Campaign, turn: Turn) -> nw.TurnInput:
    return input_of(campaign, turn, load_turn(session=session, campaign=campaign, turn=turn))


def tally_of(campaign: Campaign, turn: Turn, rows: TurnRows) -> nw.Tally:
    """The tally of rows already loaded (the dashboard shows the same rows)."""
    return nw.tally_turn(input_of(campaign, turn, rows))


def tally(*, session: Session, campaign: Campaign, turn: Turn) -> nw.Tally:
    return nw.tally_turn(turn_input(session=session, campaign=campaign, turn=turn))


def live_challenges(
    *, session: Session, campaign: Campaign, turn: Turn | None
) -> list[nw.ChallengeResult]:
    """The challenges of a turn not yet resolved, as they stand now (Challenge rows are
    stored only when the turn is resolved); none for other rulesets and resolved turns."""
    if campaign.ruleset != "noteworthy" or turn is None or turn.status == "resolved":
        return []
    return list(tally(session=session, campaign=campaign, turn=turn).challenges)


def record_of(campaign: Campaign, rows: TurnRows, result: nw.Tally) -> dict:
    """The tally as JSON, with names, titles and addresses from the same rows."""
    labels = tally_record.labels_of(campaign.slug, rows.characters, rows.entries)
    note_entries = {note[0]: note[1] for note in rows.notes}
    return tally_record.tally_record(result, labels, note_entries)


def late_arrivals(*, session: Session, turn: Turn) -> list[dict]:
    """Entries, mood edits and notes of a resolved turn first seen after it was resolved:
    listed for the referee beside the stored result, which they do not change."""
    if turn.resolved_at is None:
        return []
    since = turn.resolved_at
    shown = (Entry.turn_id == turn.id, col(Entry.hidden_at).is_(None))  # as load_turn reads
    entry_ids = select(Entry.id).where(*shown)
    # (what, its id, the entry's id, the character's id, first seen), by tuple position:
    # sqlmodel types a several-column row as a plain tuple.
    rows: list[tuple[str, int, int, int | None, datetime]] = [
        ("entry", entry_id, entry_id, character_id, seen)
        for entry_id, character_id, seen in session.exec(
            select(Entry.id, Entry.character_id, Entry.first_seen_at).where(
                *shown, Entry.first_seen_at > since
            )
        )
    ]
    rows += [
        ("mood edit", revision_id, entry_id, None, seen)
        for revision_id, entry_id, seen in session.exec(
            select(EntryRevision.id, EntryRevision.entry_id, EntryRevision.seen_at).where(
                col(EntryRevision.entry_id).in_(entry_ids), EntryRevision.seen_at > since
            )
        )
    ]
    rows += [
        ("note", note_id, entry_id, author_id, seen)
        for note_id, entry_id, author_id, seen in session.exec(
            select(Note.id, Note.entry_id, Note.author_character_id, Note.first_seen_at).where(
                col(Note.entry_id).in_(entry_ids), Note.first_seen_at > since
            )
        )
    ]
    rows.sort(key=lambda row: (row[4], row[0], row[1]))
    return [
        {
            "kind": kind,
            "id": item_id,
            "entry_id": entry_id,
            "character_id": character_id,
            "first_seen": seen.isoformat(),
            "reason": ARRIVED_LATE,
        }
        for kind, item_id, entry_id, character_id, seen in rows
    ]


def turn_record(*, session: Session, campaign: Campaign, turn: Turn) -> dict:
    """The tally the API and the dashboard show. A resolved turn shows the result stored
    when it was resolved, with what arrived since listed beside it (changing nothing); a
    turn resolved before results were stored is tallied again."""
    stored = (turn.result or {}).get("tally") if turn.status == "resolved" else None
    if stored is not None:
        later = late_arrivals(session=session, turn=turn)
        return {**stored, "resolved": True, "arrived_after_resolution": later}
    rows = load_turn(session=session, campaign=campaign, turn=turn)
    record = record_of(campaign, rows, tally_of(campaign, turn, rows))
    record["resolved"] = turn.status == "resolved"
    return record


def public_challenges(*, session: Session, campaign: Campaign, turn: Turn) -> list[dict]:
    """The turn's challenges as every member may read them: the referee's ruling notes stay
    out until the turn is resolved."""
    record = turn_record(session=session, campaign=campaign, turn=turn)
    if turn.status == "resolved":
        return record["challenges"]
    notes = ruling_notes(session=session, campaign=campaign, turn=turn)
    return tally_record.without_ruling_notes(record, notes)["challenges"]


def ruling_notes(*, session: Session, campaign: Campaign, turn: Turn) -> list[str]:
    """The referee's notes on the turn's rulings (for keeping them out of public pages)."""
    return list(
        session.exec(
            select(Ruling.reason).where(
                Ruling.campaign_id == campaign.id, Ruling.turn_id == turn.id
            )
        )
    )
