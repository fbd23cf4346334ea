"""Search a campaign's story (issue #33 item 2): entries, notes, forum posts and events,
ranked, with highlighted snippets, paged, as each reader may read them.

One service for both databases: `match` holds the only dialect-specific SQL (FTS5 on
SQLite, a GIN-indexed tsvector on PostgreSQL), `visible` the pages' visibility rules as
SQL, `index` the copy of every written text, `snippets` the safe HTML of a snippet.
The page and the API both call `search`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup
from sqlmodel import Session, col, select

from pbp.errors import UserError
from pbp.models import Campaign, Character, Entry, Event, Note, Post, SearchDoc, Thread, Turn, User
from pbp.models.forum import Roll
from pbp.services import campaigns, lookups
from pbp.services.search import match
from pbp.services.search.snippets import highlighted
from pbp.services.search.visible import Filters, Reader, readable

__all__ = ["Hit", "SearchPage", "SearchRequest", "search"]

PAGE_SIZE = 20


@dataclass(frozen=True)
class SearchRequest:
    """What the reader typed and chose (the page's form and the API's query string)."""

    text: str
    character: str | None = None  # a character's slug
    turn: int | None = None  # a turn's number
    mood: str | None = None
    kind: str | None = None  # "ic" or "ooc"
    has_rolls: bool = False


@dataclass(frozen=True)
class Hit:
    """One found text, with what a page needs to link to it."""

    kind: str  # entry, note, post, event
    id: int
    title: str
    snippet: Markup
    character: str | None  # the writer's (or a tailored event's) character
    character_slug: str | None  # where an entry or note lives: its entry's author's blog
    entry_id: int | None
    thread_id: int | None
    turn: int | None
    ooc: bool
    rolls: int
    at: datetime | None


@dataclass(frozen=True)
class SearchPage:
    words: list[str]
    hits: list[Hit]
    offset: int
    next_offset: int | None


def reader_of(*, session: Session, campaign: Campaign, user: User | None) -> Reader:
    if user is None:
        return Reader()
    member = campaigns.membership(session=session, campaign=campaign, user=user)
    mine = session.exec(
        select(Character.id).where(
            Character.campaign_id == campaign.id, Character.user_id == user.id
        )
    )
    is_referee = member is not None and member.role == "referee"
    return Reader(user.id, is_referee, frozenset(mine))


def _filters(session: Session, campaign: Campaign, request: SearchRequest) -> Filters:
    if request.kind not in (None, "ic", "ooc"):
        raise UserError("in or out of character is 'ic' or 'ooc'")
    character = (
        campaigns.character_by_slug(session=session, campaign=campaign, slug=request.character)
        if request.character
        else None
    )
    turn = (
        lookups.get_turn(session=session, campaign=campaign, number=request.turn)
        if request.turn is not None
        else None
    )
    return Filters(
        character_id=character.id if character else None,
        turn_id=turn.id if turn else None,
        mood=(request.mood or "").strip() or None,
        kind=request.kind,
        has_rolls=request.has_rolls,
    )


def search(
    *,
    session: Session,
    campaign: Campaign,
    user: User | None,
    request: SearchRequest,
    limit: int = PAGE_SIZE,
    offset: int = 0,
) -> SearchPage:
    """The texts of `campaign` matching every word of `request.text` that `user` may read,
    best first, `limit` from `offset` on. A filter naming a character or turn the
    campaign lacks is refused as the pages refuse it (NotFound)."""
    terms = match.words(request.text)
    filters = _filters(session, campaign, request)
    if not terms:
        return SearchPage([], [], offset, None)
    reader = reader_of(session=session, campaign=campaign, user=user)
    dialect = session.get_bind().dialect.name
    where = (SearchDoc.campaign_id == campaign.id) & readable(reader, filters)
    connection = session.connection()
    ranked = match.ranked(dialect, terms, where, limit + 1, offset)
    ids = list(connection.execute(ranked).scalars())
    more, ids = len(ids) > limit, ids[:limit]
    snips = {i: s for i, s in connection.execute(match.snippets(dialect, terms, ids))}
    hits = _hits(session, campaign, ids, snips)
    return SearchPage(terms, hits, offset, offset + limit if more else None)


def _hits(session: Session, campaign: Campaign, ids: list[int], snips: dict) -> list[Hit]:
    if not ids:
        return []
    docs = {d.id: d for d in session.exec(select(SearchDoc).where(col(SearchDoc.id).in_(ids)))}
    by_kind: dict[str, list[int]] = {}
    for doc in docs.values():
        by_kind.setdefault(doc.kind, []).append(doc.ref_id)
    chars = {c.id: c for c in campaigns.characters(session=session, campaign=campaign)}
    turns = dict(
        session.exec(select(Turn.id, Turn.number).where(Turn.campaign_id == campaign.id)).all()
    )
    found: dict[tuple[str, int], Hit] = {}
    for kind, refs in by_kind.items():
        for ref_id, hit in _LOADERS[kind](session, refs, chars, turns):
            found[(kind, ref_id)] = hit
    hits = []
    for doc_id in ids:
        doc = docs[doc_id]
        hit = found.get((doc.kind, doc.ref_id))
        if hit is not None:
            snippet = highlighted((snips.get(doc_id) or doc.body[:200]).strip())
            hits.append(Hit(**{**hit.__dict__, "snippet": snippet}))
    return hits


def _name(chars: dict[int, Character], cid: int | None) -> tuple[str | None, str | None]:
    c = chars.get(cid or 0)
    return (c.name, c.slug) if c else (None, None)


def _entries(session, refs, chars, turns):
    for e in session.exec(select(Entry).where(col(Entry.id).in_(refs))):
        name, slug = _name(chars, e.character_id)
        yield e.id, Hit(
            "entry", e.id, e.title or "(untitled)", Markup(), name, slug, e.id, None,
            turns.get(e.turn_id), False, 0, e.published_at or e.first_seen_at,
        )  # fmt: skip


def _notes(session, refs, chars, turns):
    rows = session.exec(
        select(Note, Entry)
        .join(Entry, col(Entry.id) == Note.entry_id)
        .where(col(Note.id).in_(refs))
    )
    for n, e in rows:
        name = _name(chars, n.author_character_id)[0] or n.author_name or "someone"
        slug = _name(chars, e.character_id)[1]
        yield n.id, Hit(
            "note", n.id, f"A note on “{e.title or '(untitled)'}”", Markup(), name, slug,
            e.id, None, turns.get(e.turn_id), False, 0, n.published_at or n.first_seen_at,
        )  # fmt: skip


def _posts(session, refs, chars, turns):
    rows = session.exec(
        select(Post, Thread.title)
        .join(Thread, col(Thread.id) == Post.thread_id)
        .where(col(Post.id).in_(refs))
    )
    counts: dict[int, int] = {}
    for post_id in session.exec(select(Roll.post_id).where(col(Roll.post_id).in_(refs))):
        counts[post_id] = counts.get(post_id, 0) + 1
    for p, title in rows:
        yield p.id, Hit(
            "post", p.id, title, Markup(), _name(chars, p.character_id)[0], None, None,
            p.thread_id, None, p.kind == "ooc", counts.get(p.id, 0), p.created_at,
        )  # fmt: skip


def _events(session, refs, chars, turns):
    for v in session.exec(select(Event).where(col(Event.id).in_(refs))):
        number = turns.get(v.turn_id)
        name = _name(chars, v.character_id)[0]
        title = f"Turn {number}: the event" + (f" for {name}" if name else "")
        yield v.id, Hit(
            "event", v.id, title, Markup(), name, None, None, None, number, False, 0,
            v.created_at,
        )  # fmt: skip


_LOADERS = {"entry": _entries, "note": _notes, "post": _posts, "event": _events}
