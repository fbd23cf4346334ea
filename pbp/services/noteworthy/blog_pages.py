"""What a character's page and an entry's page show: the reads behind pbp.web.blog, with
the rules' answers for the viewer (may they leave a note, take a position, vote in the
final) decided here rather than in the view."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbp.models import Blog, Campaign, Challenge, Character, Entry, EntryRevision, Note, Turn, User
from pbp.rules import noteworthy as nw
from pbp.services import campaigns, icons
from pbp.services.noteworthy import hidden_entries, hosted_blog, note_threads, play, turns
from pbp.services.noteworthy import note_counts as counting
from pbp.services.noteworthy import tally as tally_service
from pbp.services.noteworthy.ids import row_id_or_none
from pbp.services.noteworthy.note_counts import NoteCount


@dataclass(frozen=True)
class EntryPage:
    author: Character
    entry: Entry
    notes: list[Note]
    names: dict[int, Character]
    mine: Character | None
    challenge: Any  # the tally's reading of this challenge, in its open turn
    note_refusal: str | None
    position_refusal: str | None
    final_vote: bool
    # Its author may hide it now (theirs, shown, its turn open: hidden_entries).
    may_hide: bool = False
    # A hidden entry's every version, for the referee (hidden_entries.versions).
    versions: tuple[EntryRevision, ...] = ()
    # The viewer wrote it on pbp's own blog: they may edit it here (a feed's entry is
    # edited on its blog).
    editable: bool = False
    # How each note counts, by note id, in the tally's words (issue #27 item 4).
    note_counts: dict[Any, NoteCount] = field(default_factory=dict)
    # The icon beside the entry and beside each note (issue #33 item 1): picked, or the
    # character's default; the note's by note id.
    icon: icons.IconView | None = None
    note_icons: dict[int, icons.IconView] = field(default_factory=dict)

    @property
    def threads(self) -> list[note_threads.ThreadedNote]:
        """The notes as threads, each reply under the note it answers (issue #29 item 3)."""
        return note_threads.threaded(self.notes)

    def note_by_id(self, value: str | int | None) -> Note | None:
        """The note of this entry a reply form answers (`?reply_to=`), if it is one."""
        return next((n for n in self.notes if str(n.id) == str(value or "")), None)


def entry_page(
    *,
    session: Session,
    campaign: Campaign,
    character_slug: str,
    entry_id: int,
    user: User | None,
    now: datetime | None = None,
) -> EntryPage:
    author, entry = hosted_blog.entry_at(
        session=session, campaign=campaign, character_slug=character_slug, entry_id=entry_id
    )
    hidden_entries.check_visible(session=session, campaign=campaign, entry=entry, user=user)
    notes = session.exec(
        select(Note).where(Note.entry_id == entry.id).order_by(col(Note.published_at), col(Note.id))
    ).all()
    names = {c.id: c for c in campaigns.characters(session=session, campaign=campaign)}
    turn = play.open_turn(session=session, campaign=campaign)
    mine = play.character_of(session=session, campaign=campaign, user=user)
    final = play.finalists(session=session, campaign=campaign, turn=turn)
    result, counts = None, {}
    in_open_turn = turn is not None and entry.turn_id == turn.id
    if in_open_turn and (entry.mood == nw.CHALLENGING or notes):
        assert turn is not None  # in_open_turn
        tally = tally_service.tally(session=session, campaign=campaign, turn=turn)
        result = tally.challenge_for(entry.id)
        counts = counting.of_tally(tally, {i: c.name for i, c in names.items()})
    elif notes and entry.turn_id is not None:
        counts = _counts_of_turn(session, campaign, entry.turn_id)
    refusal = play.note_refusal(entry=entry, turn=turn)
    position = play.position_refusal(
        character=mine,
        entry=entry,
        target_id=row_id_or_none(result.target_id) if result else None,
        final=final,
        turn=turn,
        challenge=result,
        fair_interval_ends=play.fair_interval_ended(campaign, result, now),
    )
    return EntryPage(
        author=author,
        entry=entry,
        notes=list(notes),
        names=names,
        mine=mine,
        challenge=result,
        note_refusal=refusal,
        position_refusal=position,
        final_vote=refusal is None and entry.character_id in final,
        may_hide=(
            mine is not None
            and mine.id == entry.character_id
            and entry.hidden_at is None
            and turn is not None
            and entry.turn_id == turn.id
            and not play.was_challenge(session=session, entry=entry)
        ),
        versions=_versions_for(session, campaign, entry, author, user),
        editable=mine is not None
        and mine.id == author.id
        and hosted_blog.editable(session=session, entry=entry),
        note_counts={n.id: counts[n.id] for n in notes if n.id in counts},
        **_icons(session, entry, notes),
    )


def _icons(session: Session, entry: Entry, notes) -> dict[str, Any]:
    pairs = [(entry.character_id, entry.icon_id)]
    pairs += [(n.author_character_id, n.icon_id) for n in notes]
    faces = icons.shown(session=session, pairs=pairs)
    by_note = {n.id: faces.get((n.author_character_id, n.icon_id)) for n in notes}
    return {
        "icon": faces.get(pairs[0]),
        "note_icons": {i: face for i, face in by_note.items() if face is not None},
    }


def _versions_for(session, campaign, entry, author, user) -> tuple[EntryRevision, ...]:
    """Issue #27 item 2: "Its revisions stay for the referee" -- shown on a hidden entry's
    page to the referee (its author saw them as they wrote them)."""
    if entry.hidden_at is None or user is None or author.user_id == user.id:
        return ()
    return tuple(hidden_entries.versions(session=session, entry=entry))


def _counts_of_turn(session: Session, campaign: Campaign, turn_id: int) -> dict[Any, NoteCount]:
    """How the notes of a turn not open now counted: the result a resolved turn keeps, or
    the tally of a closed one waiting to be resolved."""
    turn = session.get(Turn, turn_id)
    if turn is None or turn.status == "open":
        return {}
    if turn.status == "resolved":
        return counting.of_turn_result(turn.result)
    tally = tally_service.tally(session=session, campaign=campaign, turn=turn)
    names = {c.id: c.name for c in campaigns.characters(session=session, campaign=campaign)}
    return counting.of_tally(tally, names)


@dataclass(frozen=True)
class CharacterPage:
    character: Character
    entries: list[Any]  # (id, title, mood_raw, published_at): titles only
    made: list[Challenge]
    received: list[Challenge]
    names: dict[int, Character]
    blog: Blog
    current: list[Any]  # this turn's live challenges made or received
    turn: Turn | None


def character_page(*, session: Session, campaign: Campaign, character_slug: str) -> CharacterPage:
    who = campaigns.character_by_slug(session=session, campaign=campaign, slug=character_slug)
    # The list shows titles only: no bodies read for up to 100 entries.
    entries = session.exec(
        select(Entry.id, Entry.title, Entry.mood_raw, Entry.published_at)
        .where(Entry.character_id == who.id, col(Entry.hidden_at).is_(None))
        .order_by(col(Entry.published_at).desc(), col(Entry.id).desc())
        .limit(100)
    ).all()
    made = session.exec(select(Challenge).where(Challenge.challenger_id == who.id)).all()
    received = session.exec(select(Challenge).where(Challenge.target_id == who.id)).all()
    names = {c.id: c for c in campaigns.characters(session=session, campaign=campaign)}
    turn = turns.latest_turn(session=session, campaign=campaign)
    current = [
        c
        for c in tally_service.live_challenges(session=session, campaign=campaign, turn=turn)
        if who.id in (c.challenger_id, c.target_id) and c.challenger_id in names
    ]
    return CharacterPage(
        character=who,
        entries=list(entries),
        made=list(made),
        received=list(received),
        names=names,
        blog=hosted_blog.blog_of(session=session, character=who),
        current=current,
        turn=turn,
    )
