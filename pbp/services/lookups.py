"""The reads the API needs that the pages do not: lookups by id inside one campaign, and
lists in pages.

Lists are paged by keyset ("after id N"), not by offset: a page never repeats or skips a
row when rows are added while a client is paging, and page 1,000 costs what page 1 does.
The API turns `after` into an opaque cursor; this module only sees ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlmodel import Session, col, select

from pbp.errors import NotFound
from pbp.models import (
    Blog,
    Campaign,
    Challenge,
    Character,
    Entry,
    EntryRevision,
    Event,
    Membership,
    Note,
    Ruling,
    Turn,
)

T = TypeVar("T")
MAX_LIMIT = 100


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_after: int | None  # the last id of this page when another page follows


def keyset(
    session: Session, query, id_column, *, after: int | None, limit: int, row_id=None
) -> Page:
    """One page of `query` in id order, starting after the id `after`."""
    limit = max(1, min(limit, MAX_LIMIT))
    if after is not None:
        query = query.where(id_column > after)
    rows = list(session.exec(query.order_by(id_column).limit(limit + 1)))
    return _page(rows, limit, row_id or (lambda row: row.id))


def paginate(
    items: Sequence[T], key: Callable[[T], int], *, after: int | None, limit: int
) -> Page[T]:
    """The same paging over a list a service already built (e.g. what a viewer may see)."""
    limit = max(1, min(limit, MAX_LIMIT))
    ordered = sorted(items, key=key)
    if after is not None:
        ordered = [item for item in ordered if key(item) > after]
    return _page(ordered[: limit + 1], limit, key)


def _page(rows: list, limit: int, row_id: Callable[[Any], int]) -> Page:
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows, row_id(rows[-1]) if more and rows else None)


# -- campaigns, characters, turns ----------------------------------------------------------


def campaigns_page(*, session: Session, after: int | None, limit: int) -> Page[Campaign]:
    return keyset(session, select(Campaign), Campaign.id, after=after, limit=limit)


def characters_page(
    *, session: Session, campaign: Campaign, after: int | None, limit: int
) -> Page[tuple[Character, Blog]]:
    query = (
        select(Character, Blog)
        .join(Blog, col(Blog.character_id) == Character.id)
        .where(Character.campaign_id == campaign.id)
    )
    return keyset(session, query, Character.id, after=after, limit=limit, row_id=lambda r: r[0].id)


def character_by_id(*, session: Session, campaign: Campaign, character_id: int) -> Character:
    character = session.get(Character, character_id)
    if character is None or character.campaign_id != campaign.id:
        raise NotFound(f"there is no character with id {character_id} in {campaign.name}")
    return character


def turns_page(
    *, session: Session, campaign: Campaign, after: int | None, limit: int
) -> Page[Turn]:
    query = select(Turn).where(Turn.campaign_id == campaign.id)
    return keyset(session, query, Turn.id, after=after, limit=limit)


def get_turn(*, session: Session, campaign: Campaign, number: int) -> Turn:
    turn = session.exec(
        select(Turn).where(Turn.campaign_id == campaign.id, Turn.number == number)
    ).first()
    if turn is None:
        raise NotFound(f"{campaign.name} has no turn {number}")
    return turn


def events_of(*, session: Session, turns: Sequence[Turn]) -> dict[int, list[Event]]:
    """Each turn's events (general and tailored), in one query."""
    ids = [t.id for t in turns]
    by_turn: dict[int, list[Event]] = {i: [] for i in ids}
    if ids:
        for event in session.exec(
            select(Event).where(col(Event.turn_id).in_(ids)).order_by(col(Event.id))
        ):
            by_turn[event.turn_id].append(event)
    return by_turn


def rulings_page(*, session: Session, turn: Turn, after: int | None, limit: int) -> Page[Ruling]:
    query = select(Ruling).where(Ruling.turn_id == turn.id)
    return keyset(session, query, Ruling.id, after=after, limit=limit)


def recorded_challenges(*, session: Session, turn: Turn) -> dict[int, Challenge]:
    """The challenges a resolved turn recorded, by entry id (they carry the consequences)."""
    rows = session.exec(select(Challenge).where(Challenge.turn_id == turn.id))
    return {row.entry_id: row for row in rows}


# -- entries and notes ---------------------------------------------------------------------


@dataclass(frozen=True)
class EntryRow:
    entry: Entry
    author: Character
    turn_number: int | None


def entries_page(
    *,
    session: Session,
    campaign: Campaign,
    after: int | None,
    limit: int,
    turn_number: int | None = None,
    character_slug: str | None = None,
    include_hidden: bool = False,
) -> Page[EntryRow]:
    """A page of the campaign's entries; those their authors hid only with
    `include_hidden` (the referee's: pbp.services.noteworthy.hidden_entries)."""
    query = (
        select(Entry, Character, Turn.number)
        .join(Character, col(Character.id) == Entry.character_id)
        .outerjoin(Turn, col(Turn.id) == Entry.turn_id)
        .where(Character.campaign_id == campaign.id)
    )
    if not include_hidden:
        query = query.where(col(Entry.hidden_at).is_(None))
    if turn_number is not None:
        query = query.where(Turn.number == turn_number)
    if character_slug is not None:
        query = query.where(Character.slug == character_slug)
    page = keyset(session, query, Entry.id, after=after, limit=limit, row_id=lambda r: r[0].id)
    return Page([EntryRow(*row) for row in page.items], page.next_after)


def get_entry(*, session: Session, campaign: Campaign, entry_id: int) -> EntryRow:
    row = session.exec(
        select(Entry, Character, Turn.number)
        .join(Character, col(Character.id) == Entry.character_id)
        .outerjoin(Turn, col(Turn.id) == Entry.turn_id)
        .where(Entry.id == entry_id, Character.campaign_id == campaign.id)
    ).first()
    if row is None:
        raise NotFound(f"there is no entry {entry_id} in {campaign.name}")
    return EntryRow(*row)


def latest_revision(*, session: Session, entry: Entry) -> EntryRevision | None:
    return session.exec(
        select(EntryRevision)
        .where(EntryRevision.entry_id == entry.id)
        .order_by(col(EntryRevision.id).desc())
    ).first()


def notes_page(*, session: Session, entry: Entry, after: int | None, limit: int) -> Page[Note]:
    query = select(Note).where(Note.entry_id == entry.id)
    return keyset(session, query, Note.id, after=after, limit=limit)


def roles_of(*, session: Session, user, campaign_ids: Sequence[int]) -> dict[int, str]:
    """The caller's role in each of these campaigns, in one query."""
    if user is None or not campaign_ids:
        return {}
    rows = session.exec(
        select(Membership.campaign_id, Membership.role).where(
            Membership.user_id == user.id, col(Membership.campaign_id).in_(list(campaign_ids))
        )
    )
    return dict(rows.all())
