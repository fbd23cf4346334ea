"""What is new to a member since they last read it (issue #29 item 2): "N new" in the
campaign bar, the campaign lists and the board; the new items marked on the planet, an
entry's page and a scene; "Mark all read".

The marks are high-water marks (pbp.models.unread.ReadMarker): an item is new to a member
when its id is above the mark of its place and above the campaign's floor, it is someone
else's, and the member may read it. So:
- a planet's entry is new above the member's "planet" mark; its notes above the entry's
  "entry" mark and the campaign's "notes" floor. Hidden entries (and their notes) are not
  on the planet (pbp.services.noteworthy.hidden_entries), so never new;
- a scene's post is new above the scene's "scene" mark and the campaign's "scenes" floor,
  when it is not deleted and the member may read it: the GM every post, a player a post
  for everyone or a whisper naming them (`visibility.can_see_post`, written here as SQL
  for the counts: a whisper to others or a GM-only post is never counted, nor marked).

Reading a page moves its mark to the newest item it showed (`seen_on_*`); "Mark all
read" raises every mark of the campaign to its newest items (`mark_read`). Marks only
go up, so two devices reading in either order agree.

Counts stop at `CAP` ("99+ new"): each is read with a LIMIT, so a member who never read a
long campaign costs what one who reads every day does. The counts of many campaigns are
one query (`unread_counts`) for up to `BATCH` campaigns (SQLite allows 500 parts in a
UNION). The statements are built once, with bound parameters: building one costs more
than running it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from pbp.errors import Forbidden
from pbp.models import Campaign, Character, Entry, Membership, Note, ReadMarker, User
from pbp.models.forum import Post, PostRecipient, Thread
from pbp.services.forum import threads
from pbp.services.forum.rolls import Viewer
from pbp.services.forum.visibility import FORUM_RULESETS, PostView
from pbp.services.noteworthy import hidden_entries

#: Counts stop here; the pages say "99+ new".
CAP = 99
#: Campaigns counted in one query (two parts each at most).
BATCH = 100

_marker = ReadMarker.__table__  # type: ignore[attr-defined]
# The statements below are built once (functools.lru_cache), with these bound parameters.
_USER = sa.bindparam("user_id", type_=sa.Integer)
_CAMPAIGN = sa.bindparam("campaign_id", type_=sa.Integer)
_ENTRY_MARK = sa.orm.aliased(ReadMarker)
_SCENE_MARK = sa.orm.aliased(ReadMarker)
_AUTHOR = sa.orm.aliased(Character)


def shown(count: int) -> str:
    """ "3 new", "99+ new"; "" for none."""
    if count <= 0:
        return ""
    return f"{CAP}+ new" if count > CAP else f"{count} new"


# -- the marks ----------------------------------------------------------------------------


def _advance(session: Session, rows: list[dict], now: datetime) -> None:
    """Raise marks to `seen_id` in one statement (an upsert on SQLite and PostgreSQL);
    a mark already higher stays (marks only go up)."""
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(_marker).values([{**row, "updated_at": now} for row in rows])
    excluded = statement.excluded
    statement = statement.on_conflict_do_update(
        index_elements=["user_id", "kind", "target_id"],
        set_={
            "seen_id": sa.case(
                (excluded.seen_id > _marker.c.seen_id, excluded.seen_id),
                else_=_marker.c.seen_id,
            ),
            "updated_at": excluded.updated_at,
        },
    )
    session.execute(statement)


def _mark(user_id: int, campaign_id: int, kind: str, target_id: int, seen_id: int) -> dict:
    return {
        "user_id": user_id,
        "campaign_id": campaign_id,
        "kind": kind,
        "target_id": target_id,
        "seen_id": seen_id,
    }


@functools.lru_cache(maxsize=8)
def _marks_statement(kinds: tuple[str, ...]) -> Any:
    return select(ReadMarker.kind, ReadMarker.target_id, ReadMarker.seen_id).where(
        ReadMarker.user_id == _USER,
        sa.or_(
            *(
                sa.and_(
                    col(ReadMarker.kind) == kind,
                    col(ReadMarker.target_id) == sa.bindparam(f"target_{i}", type_=sa.Integer),
                )
                for i, kind in enumerate(kinds)
            )
        ),
    )


def _marks(session: Session, user_id: int, wanted: Iterable[tuple[str, int]]) -> dict:
    """The member's marks for (kind, target) pairs, 0 for a place never read: one query."""
    wanted = list(wanted)
    found = dict.fromkeys(wanted, 0)
    statement = _marks_statement(tuple(kind for kind, _ in wanted))
    params = {f"target_{i}": target for i, (_, target) in enumerate(wanted)}
    for kind, target, seen in session.execute(statement, {"user_id": user_id, **params}).all():
        found[(kind, target)] = seen
    return found


def _mark_of(mark: Any, user_id: Any, kind: str, target: Any) -> Any:
    """The join condition of a member's mark (an alias of ReadMarker) on one place."""
    return sa.and_(
        col(mark.user_id) == user_id, col(mark.kind) == kind, col(mark.target_id) == target
    )


def _floor(user_id: Any, kind: str, campaign_id: Any) -> Any:
    """A campaign's mark as a scalar subquery (0 when there is none)."""
    return (
        select(sa.func.coalesce(sa.func.max(ReadMarker.seen_id), 0))
        .where(
            ReadMarker.user_id == user_id,
            ReadMarker.kind == kind,
            ReadMarker.target_id == campaign_id,
        )
        .scalar_subquery()
    )


# -- what is new, as queries ----------------------------------------------------------------


def _new_entries(user_id: Any, campaign_id: Any) -> Any:
    """The campaign's entries new to the member (ids): on the planet, not their own."""
    return (
        select(col(Entry.id).label("id"))
        .join(Character, col(Character.id) == Entry.character_id)
        .where(
            Character.campaign_id == campaign_id,
            col(Entry.hidden_at).is_(None),
            sa.or_(col(Character.user_id).is_(None), col(Character.user_id) != user_id),
            col(Entry.id) > _floor(user_id, "planet", campaign_id),
        )
    )


def _new_notes(user_id: Any, campaign_id: Any) -> Any:
    """The campaign's notes new to the member (ids, with their entry's)."""
    entry_mark, author = _ENTRY_MARK, _AUTHOR
    return (
        select(col(Note.id).label("id"), col(Note.entry_id).label("entry_id"))
        .join(Entry, col(Entry.id) == Note.entry_id)
        .join(Character, col(Character.id) == Entry.character_id)
        .outerjoin(author, col(author.id) == Note.author_character_id)
        .outerjoin(
            entry_mark,
            _mark_of(entry_mark, user_id, "entry", Note.entry_id),
        )
        .where(
            Character.campaign_id == campaign_id,
            col(Entry.hidden_at).is_(None),
            sa.or_(col(author.user_id).is_(None), col(author.user_id) != user_id),
            col(Note.id) > _floor(user_id, "notes", campaign_id),
            col(Note.id) > sa.func.coalesce(entry_mark.seen_id, 0),
        )
    )


def _new_posts(user_id: Any, campaign_id: Any, gm: bool) -> Any:
    """The campaign's posts new to the member (ids, with their thread's): the SQL twin of
    `visibility.can_see_post` for posts by others (tests/services/test_unread.py holds
    them to each other)."""
    scene_mark = _SCENE_MARK
    query: Any = (
        select(col(Post.id).label("id"), col(Post.thread_id).label("thread_id"))
        .join(Thread, col(Thread.id) == Post.thread_id)
        .outerjoin(
            scene_mark,
            _mark_of(scene_mark, user_id, "scene", Post.thread_id),
        )
        .where(
            Thread.campaign_id == campaign_id,
            col(Post.deleted_at).is_(None),
            sa.or_(col(Post.author_id).is_(None), col(Post.author_id) != user_id),
            col(Post.id) > _floor(user_id, "scenes", campaign_id),
            col(Post.id) > sa.func.coalesce(scene_mark.seen_id, 0),
        )
    )
    if not gm:
        to_me = select(PostRecipient.id).where(
            PostRecipient.post_id == Post.id, PostRecipient.user_id == user_id
        )
        query = query.where(
            sa.or_(
                col(Post.audience) == "all",
                sa.and_(col(Post.audience) == "whisper", sa.exists(to_me)),
            )
        )
    return query


def _kind(campaign: Campaign) -> str:
    return "forum" if campaign.ruleset in FORUM_RULESETS else "noteworthy"


@functools.lru_cache(maxsize=256)
def _counts_statement(shape: tuple[tuple[str, bool], ...]) -> Any:
    """The counts of campaigns of this shape (each one's kind and whether the member is its
    GM), built once: the statements are large, and building one costs more than running
    it. The user and the campaigns are bound parameters."""
    parts = []
    for i, (kind, gm) in enumerate(shape):
        campaign_id = sa.bindparam(f"campaign_{i}", type_=sa.Integer)
        if kind == "forum":
            queries = [_new_posts(_USER, campaign_id, gm)]
        else:
            queries = [_new_entries(_USER, campaign_id), _new_notes(_USER, campaign_id)]
        for query in queries:
            capped = query.limit(CAP + 1).subquery()
            parts.append(
                select(
                    sa.cast(campaign_id, sa.Integer).label("campaign_id"),
                    sa.func.count().label("n"),
                ).select_from(capped)
            )
    return sa.union_all(*parts)


def unread_counts(
    *, session: Session, user: User, campaigns: Iterable[tuple[Campaign, str]]
) -> dict[int, int]:
    """What is new to `user` in each of their campaigns (with their role in it), by
    campaign id, each count stopping just above `CAP`: one query for all of them."""
    mine = list(campaigns)
    counts: dict[int, int] = {}
    for start in range(0, len(mine), BATCH):
        batch = mine[start : start + BATCH]
        shape = tuple((_kind(c), role == "referee") for c, role in batch)
        params = {f"campaign_{i}": c.id for i, (c, _) in enumerate(batch)}
        rows = session.execute(_counts_statement(shape), {"user_id": user.id, **params}).all()
        for campaign_id, n in rows:
            counts[campaign_id] = counts.get(campaign_id, 0) + n
    return counts


@functools.lru_cache(maxsize=2)
def _scene_counts_statement(gm: bool) -> Any:
    new = _new_posts(_USER, _CAMPAIGN, gm).subquery()
    return select(new.c.thread_id, sa.func.count()).group_by(new.c.thread_id)


def scene_counts(*, session: Session, user: User, campaign: Campaign, role: str) -> dict[int, int]:
    """What is new to `user` in each scene of a forum campaign, by thread id (one query)."""
    statement = _scene_counts_statement(role == "referee")
    rows = session.execute(statement, {"user_id": user.id, "campaign_id": campaign.id}).all()
    return {thread_id: n for thread_id, n in rows}


# -- reading a page ---------------------------------------------------------------------------


@dataclass
class Reading:
    """What a page showed that was new to its reader: `new` the ids to mark as new on the
    page, `first` the anchor of the first of them, `marks` the marks to raise."""

    new: set[int] = field(default_factory=set)
    first: str | None = None
    marks: list[dict] = field(default_factory=list)
    # The planet's new notes (its `new` are entries: the two kinds' ids overlap).
    new_notes: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class PlanetNews:
    """Which of the entries a planet page shows, and of their notes, are new to its reader."""

    entries: tuple[int, ...]
    notes: tuple[tuple[int, int], ...]  # (note id, entry id)


@functools.lru_cache(maxsize=1)
def _planet_statement() -> Any:
    """One query: the new entries (entry_id NULL), then the new notes (with their entry)."""
    shown: Any = sa.bindparam("shown", expanding=True)
    entries = (
        _new_entries(_USER, _CAMPAIGN)
        .add_columns(sa.cast(sa.null(), sa.Integer).label("entry_id"))
        .where(col(Entry.id).in_(shown))
    )
    # From the shown entries and their marks to the notes above each mark: the notes
    # index (entry, id) reads only those, not every note of the page.
    entry_mark, author = _ENTRY_MARK, _AUTHOR
    notes: Any = (
        select(col(Note.id).label("id"), col(Note.entry_id).label("entry_id"))
        .select_from(Entry)
        .join(Character, col(Character.id) == Entry.character_id)
        .outerjoin(
            entry_mark,
            _mark_of(entry_mark, _USER, "entry", Entry.id),
        )
        .join(
            Note,
            sa.and_(
                col(Note.entry_id) == Entry.id,
                col(Note.id) > sa.func.coalesce(entry_mark.seen_id, 0),
            ),
        )
        .outerjoin(author, col(author.id) == Note.author_character_id)
        .where(
            col(Entry.id).in_(shown),
            Character.campaign_id == _CAMPAIGN,
            col(Entry.hidden_at).is_(None),
            col(Note.id) > _floor(_USER, "notes", _CAMPAIGN),
            sa.or_(col(author.user_id).is_(None), col(author.user_id) != _USER),
        )
    )
    return sa.union_all(entries, notes)


def planet_news(
    *, session: Session, user: User, campaign: Campaign, entry_ids: Iterable[int]
) -> PlanetNews:
    """One query, bounded by the page (50 entries), whatever the campaign's size."""
    shown = sorted(set(entry_ids))
    if not shown:
        return PlanetNews((), ())
    params = {"user_id": user.id, "campaign_id": campaign.id, "shown": shown}
    rows = session.execute(_planet_statement(), params).all()
    entries = tuple(item for item, entry in rows if entry is None)
    notes = tuple((item, entry) for item, entry in rows if entry is not None)
    return PlanetNews(entries, notes)


def seen_on_planet(
    *,
    user: User,
    campaign: Campaign,
    news: PlanetNews,
    shown_entries: set[int],
    shown_notes: set[int],
) -> Reading:
    """What of `news` the planet showed: marked new there, and read from now on (the
    planet's mark moves to the newest entry shown, each shown entry's to its newest note)."""
    reading = Reading()
    entries = [e for e in news.entries if e in shown_entries]
    notes = [(n, e) for n, e in news.notes if n in shown_notes]
    reading.new = set(entries)
    reading.new_notes = {n for n, _ in notes}
    if entries:
        reading.first = f"entry-{min(entries)}"
        reading.marks.append(_mark(user.id, campaign.id, "planet", campaign.id, max(entries)))
    elif notes:
        reading.first = f"note-{min(n for n, _ in notes)}"
    newest: dict[int, int] = {}
    for note_id, entry_id in notes:
        newest[entry_id] = max(newest.get(entry_id, 0), note_id)
    reading.marks += [_mark(user.id, campaign.id, "entry", e, n) for e, n in newest.items()]
    return reading


def seen_on_entry(
    *, session: Session, user: User, campaign: Campaign, entry: Entry, notes: list[Any]
) -> Reading:
    """An entry's page: its notes new to the reader (not their characters' own), and its
    mark raised to its newest note. One query."""
    marks = _marks(session, user.id, [("entry", entry.id), ("notes", campaign.id)])
    above = max(marks.values())
    mine = set(
        session.exec(
            select(Character.id).where(
                Character.campaign_id == campaign.id, Character.user_id == user.id
            )
        ).all()
    )
    new = sorted(n.id for n in notes if n.id > above and n.author_character_id not in mine)
    reading = Reading(new=set(new), first=f"note-{new[0]}" if new else None)
    if notes and max(n.id for n in notes) > marks[("entry", entry.id)]:
        newest = max(n.id for n in notes)
        reading.marks.append(_mark(user.id, campaign.id, "entry", entry.id, newest))
    return reading


def seen_in_scene(
    *, session: Session, user: User, campaign: Campaign, thread: Thread, posts: list[PostView]
) -> Reading:
    """A scene's page: `posts` are those the reader may read (`visibility.visible_posts`),
    so nothing else is marked or counted. One query."""
    marks = _marks(session, user.id, [("scene", thread.id), ("scenes", campaign.id)])
    above = max(marks.values())
    new = [p.id for p in posts if p.id > above and p.author_id != user.id and not p.deleted]
    reading = Reading(new=set(new), first=f"post-{new[0]}" if new else None)
    if posts and max(p.id for p in posts) > marks[("scene", thread.id)]:
        newest = max(p.id for p in posts)
        reading.marks.append(_mark(user.id, campaign.id, "scene", thread.id, newest))
    return reading


def record(*, session: Session, reading: Reading, now: datetime) -> None:
    """Raise the marks a page's reading found (the page's caller commits)."""
    _advance(session, reading.marks, now)


# -- the action -------------------------------------------------------------------------------


def mark_read(
    *,
    session: Session,
    campaign: Campaign,
    user: User,
    now: datetime,
    scene_id: int | None = None,
    entry_id: int | None = None,
) -> int:
    """Mark read everything in a campaign the member may read ("Mark all read"), or only
    one scene or one entry's notes; what is still new in the campaign afterwards."""
    member = session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == user.id
        )
    ).first()
    if member is None:
        raise Forbidden(f"only members of {campaign.name} keep read marks in it")
    if scene_id is not None:
        viewer = Viewer(user.id, member.role)
        thread, posts = threads.get_thread(
            session=session, campaign=campaign, thread_id=scene_id, viewer=viewer
        )
        newest = max(p.id for p in posts)  # of those the member may read
        rows = [_mark(user.id, campaign.id, "scene", thread.id, newest)]
    elif entry_id is not None:
        row = hidden_entries.visible_entry(
            session=session, campaign=campaign, entry_id=entry_id, user=user
        )
        newest = session.exec(
            select(sa.func.max(Note.id)).where(Note.entry_id == row.entry.id)
        ).one()
        rows = [_mark(user.id, campaign.id, "entry", row.entry.id, newest or 0)]
    elif campaign.ruleset in FORUM_RULESETS:
        newest = session.exec(
            select(sa.func.max(Post.id))
            .join(Thread, col(Thread.id) == Post.thread_id)
            .where(Thread.campaign_id == campaign.id)
        ).one()
        rows = [_mark(user.id, campaign.id, "scenes", campaign.id, newest or 0)]
    else:
        entries = session.exec(
            select(sa.func.max(Entry.id))
            .join(Character, col(Character.id) == Entry.character_id)
            .where(Character.campaign_id == campaign.id)
        ).one()
        notes = session.exec(
            select(sa.func.max(Note.id))
            .join(Entry, col(Entry.id) == Note.entry_id)
            .join(Character, col(Character.id) == Entry.character_id)
            .where(Character.campaign_id == campaign.id)
        ).one()
        rows = [
            _mark(user.id, campaign.id, "planet", campaign.id, entries or 0),
            _mark(user.id, campaign.id, "notes", campaign.id, notes or 0),
        ]
    _advance(session, rows, now)
    counts = unread_counts(session=session, user=user, campaigns=[(campaign, member.role)])
    return counts.get(campaign.id, 0)
