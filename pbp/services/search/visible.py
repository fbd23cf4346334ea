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
from typing import Any

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


# Each kind's rule is written as "no row of this kind hidden from the reader has this id"
# (NOT EXISTS over the few hidden rows), not "a readable row has it" (EXISTS over nearly
# every row): PostgreSQL plans the latter as a hash of the whole table, a cost that grows
# with every campaign. The hidden conditions are NULL-free (coalesce, IS NULL, NOT NULL
# columns), so no unknown can let a hidden row through. The filters, when given, narrow
# with EXISTS. An index row whose source row is gone matches nothing in `_hits`.


def _entry_hidden(reader: Reader):
    """Entries the reader may not open: hidden by an author who is not the reader."""
    return sa.and_(
        col(Entry.hidden_at).is_not(None),
        col(Entry.character_id).not_in(sorted(reader.character_ids)),
    )


def _entries(reader: Reader, f: Filters):
    if f.kind == "ooc" or f.has_rolls:
        return None
    parts: list[Any] = [_DOC.c.kind == "entry"]
    if not reader.is_referee:
        hidden = sa.exists().where(col(Entry.id) == _DOC.c.ref_id, _entry_hidden(reader))
        parts.append(~hidden)
    narrow: list[Any] = []
    if f.character_id is not None:
        narrow.append(Entry.character_id == f.character_id)
    if f.turn_id is not None:
        narrow.append(Entry.turn_id == f.turn_id)
    if f.mood:
        narrow.append(Entry.mood == nw.normalize_mood(f.mood))
    if narrow:
        parts.append(sa.exists().where(col(Entry.id) == _DOC.c.ref_id, *narrow))
    return sa.and_(*parts)


def _notes(reader: Reader, f: Filters):
    if f.kind == "ooc" or f.has_rolls or f.mood:
        return None
    parts: list[Any] = [_DOC.c.kind == "note"]
    if not reader.is_referee:
        hidden = sa.exists().where(
            col(Note.id) == _DOC.c.ref_id,
            col(Entry.id) == col(Note.entry_id),
            _entry_hidden(reader),
        )
        parts.append(~hidden)
    if f.character_id is not None:
        mine = sa.exists().where(
            col(Note.id) == _DOC.c.ref_id, col(Note.author_character_id) == f.character_id
        )
        parts.append(mine)
    if f.turn_id is not None:
        in_turn = sa.exists().where(
            col(Note.id) == _DOC.c.ref_id, col(Entry.id) == col(Note.entry_id),
            col(Entry.turn_id) == f.turn_id,
        )  # fmt: skip
        parts.append(in_turn)
    return sa.and_(*parts)


def _post_hidden(reader: Reader):
    """`visibility.can_see_post` negated, plus a deleted post's text (the GM's only)."""
    # Ids start at 1: a visitor is 0, a post whose author left is -1, so neither is "own".
    uid = reader.user_id if reader.user_id is not None else 0
    own = sa.func.coalesce(Post.author_id, -1) == uid
    named = sa.exists().where(
        col(PostRecipient.post_id) == col(Post.id), col(PostRecipient.user_id) == uid
    )
    whispered_to = sa.and_(col(Post.audience) == "whisper", named)
    not_for_reader = sa.and_(col(Post.audience) != "all", ~own, ~whispered_to)
    return sa.or_(col(Post.deleted_at).is_not(None), not_for_reader)


def _posts(reader: Reader, f: Filters):
    if f.turn_id is not None or f.mood:
        return None
    parts: list[Any] = [_DOC.c.kind == "post"]
    if not reader.is_referee:
        hidden = sa.exists().where(col(Post.id) == _DOC.c.ref_id, _post_hidden(reader))
        parts.append(~hidden)
    narrow: list[Any] = []
    if f.character_id is not None:
        narrow.append(Post.character_id == f.character_id)
    if f.kind is not None:
        narrow.append(Post.kind == f.kind)
    if f.has_rolls:
        # That a visible post rolled is shown to everyone who reads it (rolls.roll_view
        # hides a roll's dice, never its existence, from a reader of its post).
        narrow.append(sa.exists().where(col(Roll.post_id) == col(Post.id)))
    if narrow:
        parts.append(sa.exists().where(col(Post.id) == _DOC.c.ref_id, *narrow))
    return sa.and_(*parts)


def _events(reader: Reader, f: Filters):
    if f.kind == "ooc" or f.has_rolls or f.mood:
        return None
    parts: list[Any] = [_DOC.c.kind == "event"]
    if not reader.is_referee:
        hidden = sa.exists().where(
            col(Event.id) == _DOC.c.ref_id,
            col(Event.character_id).is_not(None),
            col(Event.character_id).not_in(sorted(reader.character_ids)),
        )
        parts.append(~hidden)
    narrow: list[Any] = []
    if f.character_id is not None:
        narrow.append(Event.character_id == f.character_id)
    if f.turn_id is not None:
        narrow.append(Event.turn_id == f.turn_id)
    if narrow:
        parts.append(sa.exists().where(col(Event.id) == _DOC.c.ref_id, *narrow))
    return sa.and_(*parts)


def readable(reader: Reader, filters: Filters):
    """The condition on `search_doc` rows: found by this reader, within these filters."""
    parts = [p(reader, filters) for p in (_entries, _notes, _posts, _events)]
    kept = [p for p in parts if p is not None]
    return sa.or_(*kept) if kept else sa.false()
