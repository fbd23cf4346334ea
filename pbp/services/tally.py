"""Feed a turn's rows to the pure Noteworthy rules and return its Tally.

A fixed number of queries per tally (characters, entries, revisions, notes, rulings),
whatever the number of entries and notes.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from sqlmodel import Session, select

from pbp.markup import plain_text
from pbp.models import Campaign, Character, Entry, EntryRevision, Note, Ruling, Turn
from pbp.rules import noteworthy as nw


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
    """The statuses snapshotted when the turn opened (current ones for characters that
    joined later)."""
    snapshot = turn.start_standings or {}
    result = []
    for c in characters:
        status = snapshot.get(str(c.id), c.status)
        rules_status = nw.Status.OUTSIDER if status == "outsider" else nw.Status.ACTIVE
        result.append(nw.Character(id=c.id, name=c.name, status=rules_status))
    return tuple(result)


def _rules_entry(entry: Entry, turn: Turn, versions: list[EntryRevision]) -> nw.Entry:
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
        text=plain_text(entry.body_html),
        revisions=tuple(revisions),
        first_seen=entry.first_seen_at,
    )


def _rules_note(note: Note) -> nw.Note:
    return nw.Note(
        id=note.id,
        entry_id=note.entry_id,
        author_id=note.author_character_id,
        published=note.published_at or note.first_seen_at,
        text=plain_text(note.body_html),
        stance=nw.Stance(note.stance),
        arrival=note.id,
        first_seen=note.first_seen_at,
        author_label=note.author_name,
        fate=note.fate_text,
    )


def rules_ruling(ruling: Ruling) -> nw.Ruling:
    return nw.Ruling(
        kind=nw.RulingKind(ruling.kind),
        subject_id=ruling.subject_id if ruling.subject_id else None,
        value=(ruling.value or {}).get("value"),
        note=ruling.reason,
    )


def turn_input(*, session: Session, campaign: Campaign, turn: Turn) -> nw.TurnInput:
    characters = list(
        session.exec(
            select(Character).where(Character.campaign_id == campaign.id).order_by(Character.id)
        )
    )
    entries = list(session.exec(select(Entry).where(Entry.turn_id == turn.id).order_by(Entry.id)))
    entry_ids = [e.id for e in entries]
    versions: dict[int, list[EntryRevision]] = defaultdict(list)
    notes: list[Note] = []
    if entry_ids:
        for rev in session.exec(
            select(EntryRevision)
            .where(EntryRevision.entry_id.in_(entry_ids))
            .order_by(EntryRevision.seen_at, EntryRevision.id)
        ):
            versions[rev.entry_id].append(rev)
        notes = list(session.exec(select(Note).where(Note.entry_id.in_(entry_ids))))
    rulings = session.exec(
        select(Ruling)
        .where(Ruling.campaign_id == campaign.id, Ruling.turn_id == turn.id)
        .order_by(Ruling.created_at, Ruling.id)
    )
    return nw.TurnInput(
        number=turn.number,
        closes=turn.closed_at,
        opens=turn.opened_at,
        characters=standings_at_start(turn, characters),
        entries=tuple(_rules_entry(e, turn, versions[e.id]) for e in entries),
        notes=tuple(_rules_note(n) for n in notes),
        rulings=tuple(rules_ruling(r) for r in rulings),
        settings=rules_settings(campaign, characters),
    )


def tally(*, session: Session, campaign: Campaign, turn: Turn) -> nw.Tally:
    return nw.tally_turn(turn_input(session=session, campaign=campaign, turn=turn))
