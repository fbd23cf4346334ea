"""A forum's threads (scenes): listing, reading, who a post can go to and be written as,
and watching a thread."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from pbp.errors import Forbidden, NotFound
from pbp.models import Campaign, Character, Membership, User
from pbp.models.forum import Thread, Watch
from pbp.services import campaigns
from pbp.services.forum.rolls import Viewer
from pbp.services.forum.visibility import (
    PostView,
    characters_of,
    membership_of,
    require_forum,
    viewer_for,
    visible_posts,
)


@dataclass(frozen=True)
class ThreadSummary:
    id: int
    title: str
    posts: int
    last_post_at: datetime


def list_threads(*, session: Session, campaign: Campaign, viewer: Viewer) -> list[ThreadSummary]:
    """Threads with at least one post the viewer may read, latest activity first; the
    counts and times are of those posts only, so a hidden post leaves no trace."""
    threads = {
        t.id: t for t in session.exec(select(Thread).where(Thread.campaign_id == campaign.id))
    }
    seen: dict[int, list[PostView]] = {}
    for view in visible_posts(session=session, campaign=campaign, viewer=viewer):
        seen.setdefault(view.thread_id, []).append(view)
    summaries = [
        ThreadSummary(tid, threads[tid].title, len(views), views[-1].created_at)
        for tid, views in seen.items()
    ]
    return sorted(summaries, key=lambda s: (s.last_post_at, s.id), reverse=True)


def get_thread(
    *, session: Session, campaign: Campaign, thread_id: int, viewer: Viewer
) -> tuple[Thread, list[PostView]]:
    thread = session.get(Thread, thread_id)
    if thread is None or thread.campaign_id != campaign.id:
        raise NotFound("there is no such thread")
    posts = visible_posts(session=session, campaign=campaign, viewer=viewer, thread=thread)
    if not posts:
        raise NotFound("there is no such thread")
    return thread, posts


@dataclass(frozen=True)
class Member:
    user_id: int
    name: str
    role: str


def members(*, session: Session, campaign: Campaign) -> list[Member]:
    """Everyone a whisper can go to: the campaign's members, by name."""
    rows = session.exec(
        select(Membership, User)
        .join(User, col(User.id) == Membership.user_id)
        .where(Membership.campaign_id == campaign.id)
        .order_by(User.display_name)
    )
    return [Member(user.id, user.display_name, m.role) for m, user in rows]


@dataclass(frozen=True)
class MemberWithCharacters:
    member: Member
    characters: tuple[Character, ...]


def member_list(
    *, session: Session, campaign: Campaign, user: User | None
) -> list[MemberWithCharacters]:
    """The members and the characters each plays, for any member (issue #35 item 3): a
    player needs the ids to address a whisper, as the scene page's form lists them."""
    campaigns.require_member(
        session=session, campaign=campaign, user=user, doing="list its members"
    )
    played: dict[int, list[Character]] = {}
    for character in characters_of(session, campaign):
        if character.user_id is not None:
            played.setdefault(character.user_id, []).append(character)
    return [
        MemberWithCharacters(m, tuple(played.get(m.user_id, ())))
        for m in members(session=session, campaign=campaign)
    ]


def postable_characters(*, session: Session, campaign: Campaign, viewer: Viewer) -> list[Character]:
    """The characters the viewer may post as: their own; for the GM, every one."""
    if not viewer.is_member:
        return []
    return [
        c
        for c in characters_of(session, campaign)
        if viewer.is_gm or (c.user_id is not None and c.user_id == viewer.user_id)
    ]


def own_characters(*, session: Session, campaign: Campaign, viewer: Viewer) -> list[Character]:
    """The characters the viewer plays (the GM's front page lists none of theirs: they
    post as anyone)."""
    if not viewer.is_member or viewer.user_id is None:
        return []
    return [c for c in characters_of(session, campaign) if c.user_id == viewer.user_id]


def set_watch(
    *, session: Session, campaign: Campaign, thread: Thread, user: User, on: bool, now: datetime
) -> bool:
    """Watch a thread (new posts you can read are emailed to you) or stop; idempotent."""
    if membership_of(session, campaign, user.id) is None:
        raise Forbidden(f"only members of {campaign.name} can watch its threads")
    row = session.exec(
        select(Watch).where(Watch.thread_id == thread.id, Watch.user_id == user.id)
    ).first()
    if on and row is None:
        session.add(Watch(thread_id=thread.id, user_id=user.id, created_at=now))
    elif not on and row is not None:
        session.delete(row)
    session.flush()
    return on


def is_watching(*, session: Session, thread: Thread, viewer: Viewer) -> bool:
    if viewer.user_id is None:
        return False
    return (
        session.exec(
            select(Watch.id).where(Watch.thread_id == thread.id, Watch.user_id == viewer.user_id)
        ).first()
        is not None
    )


def watch_thread(
    *, session: Session, campaign: Campaign, thread_id: int, user: User, on: bool, now: datetime
) -> Thread:
    """A member watches a thread they may read, or stops (`set_watch`); idempotent."""
    require_forum(campaign)
    viewer = viewer_for(session=session, campaign=campaign, user=user)
    thread, _ = get_thread(session=session, campaign=campaign, thread_id=thread_id, viewer=viewer)
    set_watch(session=session, campaign=campaign, thread=thread, user=user, on=on, now=now)
    return thread
