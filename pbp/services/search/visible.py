"""Which indexed rows a reader may find: the pages' rules, as SQL over `search_doc`.

Each kind has the rule of the pages that show it, so a search never finds more than the
reader could open:

- an entry: anyone, unless its author hid it; then its author and the referee
  (`hidden_entries.may_see`, `hidden_entries.SHOWN`);
- a note: as its entry (a hidden entry's notes answer 404 like the entry);
- a forum post: `visibility.can_see_post` (the GM every post; the author their own; a
  whisper its recipients; a GM-only post nobody else), and a deleted post's text the GM
  only (`visibility.views_of`);
- an event: the text for everyone to anyone; a tailored text to the referee and the
  player of its character (`turn_page`).

The referee's queued event (a draft) is kept in the campaign's settings, never indexed,
so nobody finds it before the turn opens. The filters narrow the same predicates.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import col

from pbp.models import Entry, Event, Note, Post, PostRecipient, Roll, SearchDoc
from pbp.rules import noteworthy as nw

_DOC = SearchDoc.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Reader:
    """Who searches: their user id (None: a visitor), whether they referee the campaign,
    and the ids of their characters in it."""

    user_id: int | None = None
    is_referee: bool = False
    character_ids: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Filters:
    """What the searcher narrowed the search to. `kind`: "ic" or "ooc" (forum posts say
    which they are; entries, notes and events are the story itself, so in character)."""

    character_id: int | None = None
    turn_id: int | None = None
    mood: str | None = None
    kind: str | None = None
    has_rolls: bool = False


def _entry_shown(reader: Reader):
    if reader.is_referee:
        return sa.true()
    mine = col(Entry.character_id).in_(sorted(reader.character_ids))
    return sa.or_(col(Entry.hidden_at).is_(None), mine)


def _entries(reader: Reader, f: Filters):
    if f.kind == "ooc" or f.has_rolls:
        return None
    where = [col(Entry.id) == _DOC.c.ref_id, _entry_shown(reader)]
    if f.character_id is not None:
        where.append(Entry.character_id == f.character_id)
    if f.turn_id is not None:
        where.append(Entry.turn_id == f.turn_id)
    if f.mood:
        where.append(Entry.mood == nw.normalize_mood(f.mood))
    return sa.and_(_DOC.c.kind == "entry", sa.exists().where(*where))


def _notes(reader: Reader, f: Filters):
    if f.kind == "ooc" or f.has_rolls or f.mood:
        return None
    where = [col(Note.id) == _DOC.c.ref_id, col(Entry.id) == Note.entry_id, _entry_shown(reader)]
    if f.character_id is not None:
        where.append(Note.author_character_id == f.character_id)
    if f.turn_id is not None:
        where.append(Entry.turn_id == f.turn_id)
    return sa.and_(_DOC.c.kind == "note", sa.exists().where(*where))


def _post_shown(reader: Reader):
    if reader.is_referee:
        return sa.true()
    readable = [col(Post.audience) == "all"]
    if reader.user_id is not None:
        readable.append(col(Post.author_id) == reader.user_id)
        named = sa.exists().where(
            col(PostRecipient.post_id) == Post.id, PostRecipient.user_id == reader.user_id
        )
        readable.append(sa.and_(col(Post.audience) == "whisper", named))
    return sa.and_(col(Post.deleted_at).is_(None), sa.or_(*readable))


def _posts(reader: Reader, f: Filters):
    if f.turn_id is not None or f.mood:
        return None
    where = [col(Post.id) == _DOC.c.ref_id, _post_shown(reader)]
    if f.character_id is not None:
        where.append(Post.character_id == f.character_id)
    if f.kind is not None:
        where.append(Post.kind == f.kind)
    if f.has_rolls:
        # That a visible post rolled is shown to everyone who reads it (rolls.roll_view
        # hides a roll's dice, never its existence, from a reader of its post).
        where.append(sa.exists().where(col(Roll.post_id) == Post.id))
    return sa.and_(_DOC.c.kind == "post", sa.exists().where(*where))


def _events(reader: Reader, f: Filters):
    if f.kind == "ooc" or f.has_rolls or f.mood:
        return None
    where = [col(Event.id) == _DOC.c.ref_id]
    if not reader.is_referee:
        mine = col(Event.character_id).in_(sorted(reader.character_ids))
        where.append(sa.or_(col(Event.character_id).is_(None), mine))
    if f.character_id is not None:
        where.append(Event.character_id == f.character_id)
    if f.turn_id is not None:
        where.append(Event.turn_id == f.turn_id)
    return sa.and_(_DOC.c.kind == "event", sa.exists().where(*where))


def readable(reader: Reader, filters: Filters):
    """The condition on `search_doc` rows: found by this reader, within these filters."""
    parts = [p(reader, filters) for p in (_entries, _notes, _posts, _events)]
    kept = [p for p in parts if p is not None]
    return sa.or_(*kept) if kept else sa.false()
