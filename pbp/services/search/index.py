"""Keeping the search index in step: every entry, note, forum post and event the ORM
writes is copied into `search_doc` as plain text, in the same flush.

Why an ORM hook and not a call in each service, nor database triggers: entries and notes
are written by the hosted blog, the feed ingester and the referee's tools, posts by the
forum's post and edit paths, events by the turn's opening; a call in each would be one
more thing to forget in the next writer. Triggers would have to be written twice (SQLite
and PL/pgSQL) and would have to turn HTML into text in SQL. One `after_flush` listener on
every Session sees every ORM write on both databases, in the writer's transaction. pbp
writes these four tables only through the ORM (the bulk loaders of the benchmarks call
`rebuild_campaign` afterwards). On SQLite the FTS5 table follows `search_doc` by the
triggers of migration 0023; PostgreSQL's GIN index follows it by itself.

The copy holds text only: who may read a row is decided at search time from the row
itself (`pbp.services.search.visible`), so a post that becomes a whisper or an entry
that is hidden is never found by the wrong reader, whatever the copy says.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session as OrmSession
from sqlmodel import col

from pbp.markup import plain_text
from pbp.models import Character, Entry, Event, Note, Post, SearchDoc, Thread, Turn

# The highlight marks of the snippets (pbp.services.search.snippets): private-use
# characters, taken out of every indexed text so no stored text can forge a mark.
START, STOP = "\ue000", "\ue001"
_NO_MARKS = str.maketrans("", "", START + STOP)

KINDS: dict[type, str] = {Entry: "entry", Note: "note", Post: "post", Event: "event"}
# The attributes whose change changes the copy.
TEXT_FIELDS = {"entry": ("title", "body_html"), "note": ("body_html",), "post": ("body_html",)}
TEXT_FIELDS["event"] = ("text",)

_DOC = SearchDoc.__table__  # type: ignore[attr-defined]


def clean(text: str) -> str:
    return text.translate(_NO_MARKS).strip()


def texts(kind: str, row: Any) -> tuple[str, str]:
    """(title, body) as indexed: the visible text of the stored HTML."""
    if kind == "entry":
        return clean(plain_text(row.title))[:1000], clean(plain_text(row.body_html))
    if kind == "event":
        return "", clean(row.text)
    return "", clean(plain_text(row.body_html))


# The campaign of each kind's row, for a batch of ids.
_CAMPAIGN_OF: dict[str, sa.Select[int, int]] = {
    "entry": sa.select(col(Entry.id), col(Character.campaign_id)).join(
        Character, col(Character.id) == Entry.character_id
    ),
    "note": sa.select(col(Note.id), col(Character.campaign_id))
    .join(Entry, col(Entry.id) == Note.entry_id)
    .join(Character, col(Character.id) == Entry.character_id),
    "post": sa.select(col(Post.id), col(Thread.campaign_id)).join(
        Thread, col(Thread.id) == Post.thread_id
    ),
    "event": sa.select(col(Event.id), col(Turn.campaign_id)).join(
        Turn, col(Turn.id) == Event.turn_id
    ),
}
_MODEL: dict[str, Any] = {kind: model for model, kind in KINDS.items()}


def _changed(obj: Any, kind: str) -> bool:
    state = sa.inspect(obj)
    return any(state.attrs[name].history.has_changes() for name in TEXT_FIELDS[kind])


def _after_flush(session: OrmSession, _context: Any) -> None:
    written: dict[str, dict[int, Any]] = {}
    gone: dict[str, set[int]] = {}
    for obj in session.new:
        kind = KINDS.get(type(obj))
        if kind is not None:
            written.setdefault(kind, {})[obj.id] = obj
    for obj in session.dirty:
        kind = KINDS.get(type(obj))
        if kind is not None and _changed(obj, kind):
            written.setdefault(kind, {})[obj.id] = obj
    for obj in session.deleted:
        kind = KINDS.get(type(obj))
        if kind is not None:
            gone.setdefault(kind, set()).add(obj.id)
    if written or gone:
        connection = session.connection()
        for kind, ids in gone.items():
            _delete(connection, kind, ids)
        for kind, rows in written.items():
            store(connection, kind, rows.values())


def _delete(connection: sa.Connection, kind: str, ids: Iterable[int]) -> None:
    connection.execute(sa.delete(_DOC).where(_DOC.c.kind == kind, _DOC.c.ref_id.in_(list(ids))))


# The copy's campaign is read in the INSERT itself (INSERT ... SELECT through the row's own
# joins): a write costs no SELECT more, which the poll pass counts (issue #32's budgets).
_FROM = {
    "entry": 'entry s JOIN "character" c ON c.id = s.character_id',
    "note": 'note s JOIN entry e ON e.id = s.entry_id JOIN "character" c ON c.id = e.character_id',
    "post": "forum_post s JOIN forum_thread c ON c.id = s.thread_id",
    "event": "event s JOIN turn c ON c.id = s.turn_id",
}
_INSERT = {
    kind: sa.text(
        "INSERT INTO search_doc (campaign_id, kind, ref_id, title, body) "
        "SELECT c.campaign_id, CAST(:kind AS VARCHAR(8)), s.id, CAST(:title AS VARCHAR(1000)), "
        f"CAST(:body AS TEXT) FROM {joined} WHERE s.id = :ref_id"
    )
    for kind, joined in _FROM.items()
}


def store(connection: sa.Connection, kind: str, rows: Iterable[Any]) -> None:
    """Replace the copies of `rows` (all of one kind) by their current text."""
    by_id = {row.id: row for row in rows}
    if not by_id:
        return
    _delete(connection, kind, by_id)
    values = []
    for ref_id, row in by_id.items():
        title, body = texts(kind, row)
        values.append({"kind": kind, "ref_id": ref_id, "title": title, "body": body})
    connection.execute(_INSERT[kind], values)


def rebuild_campaign(*, connection: sa.Connection, campaign_id: int, batch: int = 2000) -> int:
    """Copy every entry, note, post and event of a campaign afresh (for rows written
    around the ORM, as the benchmarks' bulk loaders do); returns how many."""
    connection.execute(sa.delete(_DOC).where(_DOC.c.campaign_id == campaign_id))
    count = 0
    for kind, model in _MODEL.items():
        of_kind = _CAMPAIGN_OF[kind]
        ids = of_kind.where(of_kind.selected_columns[1] == campaign_id)
        wanted = [row[0] for row in connection.execute(ids)]
        for start in range(0, len(wanted), batch):
            chunk = wanted[start : start + batch]
            table = model.__table__  # type: ignore[attr-defined]
            rows = connection.execute(sa.select(table).where(table.c.id.in_(chunk))).all()
            store(connection, kind, rows)
            count += len(rows)
    return count


# Installed on import; pbp.services imports this module, so any writer has it.
sa.event.listen(OrmSession, "after_flush", _after_flush)
