"""The forum, for every campaign not played on blogs: scenes (threads) and posts, whispers,
edits with history, watching, the GM's start and end, and the export.

Who sees what is decided in two functions only: `can_see_post` (here) for posts and
`rolls.roll_view` for rolls. Every page, the feed, the email and the export read posts
through `visible_posts` and rolls through `roll_view`, so no output can show more than
these two allow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from adapters.sanitize import text_to_html
from pbp import limits, links
from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.limits import check_length
from pbp.markup import TooIntricate, render_markdown
from pbp.models import AuditLog, Campaign, Character, Membership, User
from pbp.models.forum import Post, PostRecipient, PostRevision, Roll, Thread, Watch
from pbp.rules import dice
from pbp.services.forum import rolls
from pbp.services.forum.rolls import AFTER_THE_END as AFTER_THE_END  # re-exported for pages
from pbp.services.forum.rolls import (
    ANONYMOUS,
    ROLL_VISIBILITY,
    RollView,
    Viewer,
    roll_view,
)
from pbp.services.mail.outbox import Letter, MailSettings, queue, wants
from pbp.services.rendering import rendered

FORUM_RULESETS = ("one", "noir", "sex-and-violence", "one-can-have-her")
MAX_TITLE = 200
KINDS = {"ic": "In character", "ooc": "Out of character"}
AUDIENCES = {
    "all": "Everyone",
    "gm": "The GM only",
    "whisper": "A whisper: only the people named and the GM",
}
_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,64}")
# The lines `dice.find_roll_commands` reads: a /roll line outside fenced code.
_ROLL_LINE = re.compile(r"^ {0,3}/roll(?:\s|$)", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


# -- who sees what ---------------------------------------------------------------------------


def viewer_for(*, session: Session, campaign: Campaign, user: User | None) -> Viewer:
    if user is None:
        return ANONYMOUS
    member = _membership(session, campaign, user.id)
    return Viewer(user.id, member.role if member else None)


def can_see_post(post: Post, viewer: Viewer, recipient_ids: set[int] | frozenset[int]) -> bool:
    """The one rule for posts: the GM sees every post; the author sees their own; a post
    for everyone is seen by everyone; a whisper by its named recipients; a GM-only post by
    nobody else."""
    if viewer.is_gm:
        return True
    if viewer.user_id is not None and post.author_id == viewer.user_id:
        return True
    if post.audience == "all":
        return True
    if post.audience == "whisper":
        return viewer.user_id is not None and viewer.user_id in recipient_ids
    return False


@dataclass(frozen=True)
class PostView:
    """A post as one viewer may see it; templates, feed, mail and export use only this."""

    id: int
    thread_id: int
    author_id: int | None
    author: str
    character: str | None
    kind: str
    audience: str
    recipients: tuple[str, ...]
    body: str | None  # Markdown; None for a deleted post unless the viewer is the GM
    html: str
    deleted: bool
    created_at: datetime
    edited_at: datetime | None
    rolls: tuple[RollView, ...]
    can_edit: bool


def require_forum(campaign: Campaign) -> None:
    if campaign.ruleset not in FORUM_RULESETS:
        raise NotFound(f"{campaign.name} is played on blogs, not on the forum")


def is_revealed(*, session: Session, campaign: Campaign) -> bool:
    return rolls.revealed_seed(rolls.get_secret(session=session, campaign=campaign)) is not None


def visible_posts(
    *, session: Session, campaign: Campaign, viewer: Viewer, thread: Thread | None = None
) -> list[PostView]:
    """The posts of a thread (or of the whole forum) that `viewer` may read, oldest first,
    each with its rolls as `roll_view` allows."""
    query = select(Post).join(Thread, Thread.id == Post.thread_id)
    query = query.where(Thread.campaign_id == campaign.id)
    if thread is not None:
        query = query.where(Post.thread_id == thread.id)
    posts = list(session.exec(query.order_by(Post.created_at, Post.id)))
    return _views(session, campaign, posts, viewer)


def _views(
    session: Session, campaign: Campaign, posts: list[Post], viewer: Viewer
) -> list[PostView]:
    recipients = _recipients(session, [p.id for p in posts])
    shown = [p for p in posts if can_see_post(p, viewer, recipients.get(p.id, set()))]
    revealed = is_revealed(session=session, campaign=campaign)
    by_post = rolls.rolls_of_posts(session=session, post_ids=[p.id for p in shown])
    names = _user_names(session, {p.author_id for p in shown}.union(*recipients.values()))
    characters = {c.id: c.name for c in _characters(session, campaign)}
    ended = campaign.status == "ended"
    views = []
    for post in shown:
        deleted = post.deleted_at is not None
        hide_text = deleted and not viewer.is_gm
        roll_views = (
            roll_view(r, viewer, post_visible=True, revealed=revealed)
            for r in by_post.get(post.id, [])
        )
        views.append(
            PostView(
                id=post.id,
                thread_id=post.thread_id,
                author_id=post.author_id,
                author=names.get(post.author_id, "someone who left"),
                character=characters.get(post.character_id),
                kind=post.kind,
                audience=post.audience,
                recipients=tuple(sorted(names[u] for u in recipients.get(post.id, ()))),
                body=None if hide_text else post.body,
                html="" if hide_text else post.body_html,
                deleted=deleted,
                created_at=post.created_at,
                edited_at=post.edited_at,
                rolls=tuple(v for v in roll_views if v is not None),
                can_edit=_can_edit(post, viewer, ended),
            )
        )
    return views


def _can_edit(post: Post, viewer: Viewer, ended: bool) -> bool:
    """The author (still a member) and the GM may edit or delete, until the end."""
    if ended or post.deleted_at is not None or not viewer.is_member:
        return False
    return viewer.is_gm or post.author_id == viewer.user_id


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


def get_post(*, session: Session, campaign: Campaign, post_id: int, viewer: Viewer) -> Post:
    post = session.get(Post, post_id)
    thread = session.get(Thread, post.thread_id) if post else None
    if post is None or thread is None or thread.campaign_id != campaign.id:
        raise NotFound("there is no such post")
    if not can_see_post(post, viewer, _recipients(session, [post.id]).get(post.id, set())):
        raise NotFound("there is no such post")
    return post


def post_to_edit(*, session: Session, campaign: Campaign, post_id: int, viewer: Viewer) -> Post:
    """A post its editor may change; the edit form shows its text, so a deleted post, or
    someone else's, is refused here and not only when the change is saved (issue #16)."""
    post = get_post(session=session, campaign=campaign, post_id=post_id, viewer=viewer)
    if not _can_edit(post, viewer, campaign.status == "ended"):
        raise Forbidden("only the post's author and the GM can change it, until the end")
    return post


def get_roll_view(
    *, session: Session, campaign: Campaign, roll_id: str, viewer: Viewer
) -> tuple[RollView, PostView | None]:
    """A roll's permanent page: the roll, and its post if the viewer may read that."""
    roll = session.get(Roll, roll_id)
    if roll is None or roll.campaign_id != campaign.id:
        raise NotFound("there is no such roll")
    post = session.get(Post, roll.post_id)
    thread = session.get(Thread, post.thread_id)
    views = visible_posts(session=session, campaign=campaign, viewer=viewer, thread=thread)
    post_view = next((v for v in views if v.id == post.id), None)
    revealed = is_revealed(session=session, campaign=campaign)
    view = roll_view(roll, viewer, post_visible=post_view is not None, revealed=revealed)
    if view is None:
        raise NotFound("there is no such roll")
    return view, post_view


@dataclass(frozen=True)
class Member:
    user_id: int
    name: str
    role: str


def members(*, session: Session, campaign: Campaign) -> list[Member]:
    """Everyone a whisper can go to: the campaign's members, by name."""
    rows = session.exec(
        select(Membership, User)
        .join(User, User.id == Membership.user_id)
        .where(Membership.campaign_id == campaign.id)
        .order_by(User.display_name)
    )
    return [Member(user.id, user.display_name, m.role) for m, user in rows]


def postable_characters(*, session: Session, campaign: Campaign, viewer: Viewer) -> list[Character]:
    """The characters the viewer may post as: their own; for the GM, every one."""
    if not viewer.is_member:
        return []
    return [
        c
        for c in _characters(session, campaign)
        if viewer.is_gm or (c.user_id is not None and c.user_id == viewer.user_id)
    ]


# -- writing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft:
    """A post as submitted by the form."""

    body: str
    kind: str = "ic"
    audience: str = "all"
    recipient_ids: tuple[int, ...] = ()
    character_id: int | None = None
    roll_visibility: str = "public"
    client_token: str | None = None


@dataclass(frozen=True)
class _Prepared:
    body: str
    html: str
    character: Character | None
    recipients: tuple[int, ...]
    planned: tuple[rolls.PlannedRoll, ...]


def strip_roll_lines(text: str) -> str:
    """The post's text without its ``/roll`` lines (they become `Roll` rows)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _ROLL_LINE.match(line):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def typed_body(text: str | None) -> str:
    """A post's text as stored: one kind of line end, trimmed, within the limit."""
    body = (text or "").replace("\r\n", "\n").strip()
    return check_length(body, limits.POST_BODY, "a post")


def preview(*, session: Session, text: str) -> tuple[str, list[str]]:
    """What a post will look like: its HTML and the commands it will roll when posted.
    Nothing is rolled and nothing is stored; a bad command raises `RollError`. The same
    limit as posting applies, and no transaction stays open across the render."""
    body = typed_body(text)
    commands = [c.canonical() for c in dice.find_roll_commands(body)]
    return rendered(session=session, text=strip_roll_lines(body)), commands


def create_thread(
    *,
    session: Session,
    campaign: Campaign,
    author: User,
    title: str,
    draft: Draft,
    mail: MailSettings,
    now: datetime,
) -> Post:
    """Open a scene with its first post. A repeated submit of the same form returns the
    first post (and its thread) instead of opening a second."""
    html = rendered(session=session, text=strip_roll_lines(typed_body(draft.body)))
    existing = _by_token(session, author, draft.client_token)
    if existing is not None:
        return existing
    title = " ".join(title.split())
    if not title:
        raise UserError("a thread needs a title")
    if len(title) > MAX_TITLE:
        raise UserError(f"a title may be at most {MAX_TITLE} characters")
    prepared = _prepare(session, campaign, author, draft, html)
    thread = Thread(campaign_id=campaign.id, title=title, created_by=author.id, created_at=now)
    return _store(session, campaign, thread, author, draft, prepared, mail, now)


def create_post(
    *,
    session: Session,
    campaign: Campaign,
    thread: Thread,
    author: User,
    draft: Draft,
    mail: MailSettings,
    now: datetime,
) -> Post:
    """Post in a thread and make its rolls, all in the caller's transaction.

    Everything the post needs (membership, character, recipients, every roll command and
    named skill) is checked before anything is written, so a refused post leaves nothing
    behind. A repeated submit of the same form (same `client_token`) returns the first post.
    """
    if thread.campaign_id != campaign.id:
        raise NotFound("there is no such thread")
    html = rendered(session=session, text=strip_roll_lines(typed_body(draft.body)))
    existing = _by_token(session, author, draft.client_token)
    if existing is not None:
        return existing
    prepared = _prepare(session, campaign, author, draft, html)
    viewer = viewer_for(session=session, campaign=campaign, user=author)
    if not viewer.is_gm and not visible_posts(
        session=session, campaign=campaign, viewer=viewer, thread=thread
    ):
        raise NotFound("there is no such thread")
    return _store(session, campaign, thread, author, draft, prepared, mail, now)


def _prepare(
    session: Session, campaign: Campaign, author: User, draft: Draft, html: str
) -> _Prepared:
    require_forum(campaign)
    member = _membership(session, campaign, author.id)
    if member is None:
        raise Forbidden(f"only members of {campaign.name} can post in its forum")
    if campaign.status == "ended":
        raise Conflict(f"{campaign.name} has ended; its forum is read-only")
    for value, allowed, what in (
        (draft.kind, KINDS, "kind of post"),
        (draft.audience, AUDIENCES, "audience"),
        (draft.roll_visibility, ROLL_VISIBILITY, "roll visibility"),
    ):
        if value not in allowed:
            raise UserError(f"unknown {what} {value!r}; choose one of {', '.join(allowed)}")
    if draft.client_token is not None and not _TOKEN.fullmatch(draft.client_token):
        raise UserError("the form is damaged (its token is not valid): reload the page")
    body = typed_body(draft.body)
    character = _character_for(session, campaign, author, member, draft.character_id)
    recipients = _recipients_for(session, campaign, author, draft)
    planned = rolls.plan_rolls(session=session, character=character, text=body)
    if not strip_roll_lines(body) and not planned:
        raise UserError("write something to post")
    return _Prepared(body, html, character, recipients, planned)


def _store(
    session: Session,
    campaign: Campaign,
    thread: Thread,
    author: User,
    draft: Draft,
    prepared: _Prepared,
    mail: MailSettings,
    now: datetime,
) -> Post:
    executed = rolls.execute_rolls(
        session=session, campaign=campaign, planned=prepared.planned, now=now
    )
    text = strip_roll_lines(prepared.body)
    post = Post(
        author_id=author.id,
        character_id=prepared.character.id if prepared.character else None,
        kind=draft.kind,
        audience=draft.audience,
        body=text,
        body_html=prepared.html,
        client_token=draft.client_token,
        created_at=now,
    )
    try:
        with session.begin_nested():
            session.add(thread)
            session.flush()
            post.thread_id = thread.id
            session.add(post)
    except sa.exc.IntegrityError:
        existing = _by_token(session, author, draft.client_token)
        if existing is None:
            raise
        return existing  # the same form, submitted twice at once: the first one won
    rolls.store_rolls(
        session=session,
        campaign=campaign,
        post=post,
        executed=executed,
        visibility=draft.roll_visibility,
        roller=author,
        now=now,
    )
    for user_id in prepared.recipients:
        session.add(PostRecipient(post_id=post.id, user_id=user_id))
    session.add(PostRevision(post_id=post.id, body=text, edited_by=author.id, created_at=now))
    set_watch(session=session, campaign=campaign, thread=thread, user=author, on=True, now=now)
    session.flush()
    _notify(session, campaign, thread, post, mail, now)
    return post


def edit_post(
    *, session: Session, campaign: Campaign, post: Post, editor: User, body: str, now: datetime
) -> Post:
    """Change a post's text, keeping every version for the GM. Rolls are not touched and
    no new ones are made: dice are rolled only when a post is first submitted. The text is
    rendered first, with no transaction open; the checks and the change come after."""
    body = typed_body(body)
    if strip_roll_lines(body) != body:
        raise UserError(
            "rolls are made only when a post is first submitted: write a new post "
            "to roll (this post's rolls stay as they were)"
        )
    html = rendered(session=session, text=body)
    viewer = viewer_for(session=session, campaign=campaign, user=editor)
    if not _can_edit(post, viewer, campaign.status == "ended"):
        raise Forbidden("only the post's author and the GM can change it, until the end")
    if body == post.body:
        return post
    if not body and not rolls.rolls_of_posts(session=session, post_ids=[post.id]):
        raise UserError("a post cannot be empty: delete it instead")
    post.body, post.body_html, post.edited_at = body, html, now
    session.add(post)
    session.add(PostRevision(post_id=post.id, body=body, edited_by=editor.id, created_at=now))
    session.flush()
    return post


def delete_post(
    *, session: Session, campaign: Campaign, post: Post, actor: User, now: datetime
) -> Post:
    """Hide a post's text (the GM still sees it). Its rolls stay, shown as before."""
    viewer = viewer_for(session=session, campaign=campaign, user=actor)
    if not _can_edit(post, viewer, campaign.status == "ended"):
        raise Forbidden("only the post's author and the GM can delete it, until the end")
    post.deleted_at = now
    session.add(post)
    _audit(session, campaign, actor, "post.delete", now, post_id=post.id)
    session.flush()
    return post


def _stored_html(body: str) -> str:
    """A stored revision as HTML: one kept from before the shape checks (pbp.markup) may
    be refused by them now; the GM still reads it, as plain text."""
    try:
        return render_markdown(body)
    except TooIntricate:
        return text_to_html(body)


@dataclass(frozen=True)
class Revision:
    body: str
    html: str
    editor: str
    created_at: datetime


def post_history(
    *, session: Session, campaign: Campaign, post: Post, viewer: Viewer
) -> list[Revision]:
    """Every version of a post, oldest first: for the GM only."""
    if not viewer.is_gm:
        raise Forbidden("only the GM can read a post's edit history")
    rows = list(
        session.exec(
            select(PostRevision)
            .where(PostRevision.post_id == post.id)
            .order_by(PostRevision.created_at, PostRevision.id)
        )
    )
    names = _user_names(session, {r.edited_by for r in rows})
    return [
        Revision(
            r.body,
            _stored_html(r.body),
            names.get(r.edited_by, "someone who left"),
            r.created_at,
        )
        for r in rows
    ]


def set_watch(
    *, session: Session, campaign: Campaign, thread: Thread, user: User, on: bool, now: datetime
) -> bool:
    """Watch a thread (new posts you can read are emailed to you) or stop; idempotent."""
    if _membership(session, campaign, user.id) is None:
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


# -- the GM's start and end ----------------------------------------------------------------


def start_campaign(*, session: Session, campaign: Campaign, actor: User, now: datetime) -> str:
    """Open play and publish the seed's commitment (made now if the campaign has none).
    Returns the commitment."""
    _require_gm(session, campaign, actor)
    if campaign.status == "ended":
        raise Conflict(f"{campaign.name} has ended; it cannot start again")
    secret = rolls.ensure_secret(session=session, campaign=campaign, now=now)
    if campaign.status != "running":
        campaign.status = "running"
        session.add(campaign)
        _audit(session, campaign, actor, "forum.start", now, commitment=secret.commitment)
    session.flush()
    return secret.commitment


def end_campaign(*, session: Session, campaign: Campaign, actor: User, now: datetime) -> str:
    """End play and reveal the seed, so every roll can be checked; idempotent.
    Returns the revealed seed (hex)."""
    _require_gm(session, campaign, actor)
    secret = rolls.reveal(session=session, campaign=campaign, now=now)
    if campaign.status != "ended":
        campaign.status = "ended"
        session.add(campaign)
        _audit(session, campaign, actor, "forum.end", now, commitment=secret.commitment)
    session.flush()
    return rolls.revealed_seed(secret) or ""


# -- export --------------------------------------------------------------------------------


def export_forum(
    *, session: Session, campaign: Campaign, viewer: Viewer, now: datetime
) -> dict[str, Any]:
    """The forum as JSON, as `viewer` may see it; `rolls.verify_export` checks its rolls.

    The seed is included only once it is revealed (the campaign has ended); from then on
    every roll is included in full, so the export verifies completely.
    """
    require_forum(campaign)
    secret = rolls.get_secret(session=session, campaign=campaign)
    posts = visible_posts(session=session, campaign=campaign, viewer=viewer)
    titles = {
        t.id: t.title for t in session.exec(select(Thread).where(Thread.campaign_id == campaign.id))
    }
    threads: dict[int, dict[str, Any]] = {}
    for view in posts:
        thread = threads.setdefault(
            view.thread_id, {"id": view.thread_id, "title": titles[view.thread_id], "posts": []}
        )
        thread["posts"].append(_post_export(view))
    revealed = rolls.revealed_seed(secret) is not None
    visible_ids = {v.id for v in posts}
    roll_rows = []
    for roll in rolls.campaign_rolls(session=session, campaign=campaign):
        view = roll_view(roll, viewer, post_visible=roll.post_id in visible_ids, revealed=revealed)
        if view is not None:
            roll_rows.append(
                view.as_export()
                | ({"post_id": roll.post_id} if roll.post_id in visible_ids else {})
            )
    return {
        "format": rolls.EXPORT_FORMAT,
        "exported_at": rolls.iso(now),
        "campaign": {
            "slug": campaign.slug,
            "name": campaign.name,
            "ruleset": campaign.ruleset,
            "status": campaign.status,
        },
        "fairness": {
            "algorithm": dice.ALGORITHM,
            "commitment": secret.commitment if secret else None,
            "seed": rolls.revealed_seed(secret),
            "revealed_at": rolls.iso(secret.revealed_at) if secret else None,
            "roll_visibility": ROLL_VISIBILITY,
        },
        "threads": list(threads.values()),
        "rolls": roll_rows,
    }


def _post_export(view: PostView) -> dict[str, Any]:
    return {
        "id": view.id,
        "author": view.author,
        "character": view.character,
        "kind": view.kind,
        "audience": view.audience,
        "recipients": list(view.recipients),
        "body": view.body,
        "deleted": view.deleted,
        "created_at": rolls.iso(view.created_at),
        "edited_at": rolls.iso(view.edited_at),
        "rolls": [r.id for r in view.rolls],
    }


# -- notifications -------------------------------------------------------------------------


def _notify(
    session: Session,
    campaign: Campaign,
    thread: Thread,
    post: Post,
    mail: MailSettings,
    now: datetime,
) -> None:
    """Email the thread's watchers and a whisper's recipients, each the post as they may
    see it (`can_see_post`, `roll_view`), through the outbox in this transaction. A member
    can turn forum mail off with the "forum" key of their notification preferences."""
    recipient_ids = _recipients(session, [post.id]).get(post.id, set())
    watcher_ids = set(session.exec(select(Watch.user_id).where(Watch.thread_id == thread.id)))
    wanted = (watcher_ids | recipient_ids) - {post.author_id}
    if not wanted:
        return
    members = session.exec(
        select(Membership, User)
        .join(User, User.id == Membership.user_id)
        .where(Membership.campaign_id == campaign.id, Membership.user_id.in_(wanted))
    ).all()
    for membership, user in members:
        viewer = Viewer(user.id, membership.role)
        if not wants(membership, "forum"):
            continue
        if not can_see_post(post, viewer, recipient_ids):
            continue
        (view,) = _views(session, campaign, [post], viewer)
        url = links.absolute(mail.base_url, links.post(campaign.slug, thread.id, post.id))
        letter = Letter(
            kind="forum_post",
            template="forum_post",
            dedupe_key=f"forum-post:{post.id}:{user.id}",
            to=user,
            campaign=campaign,
            subject=f"{view.author} in {thread.title}",
            context={"thread": thread, "view": view, "kind": KINDS[view.kind].lower(), "url": url},
        )
        queue(session=session, settings=mail, letter=letter, now=now)


# -- helpers -------------------------------------------------------------------------------


def _membership(session: Session, campaign: Campaign, user_id: int | None) -> Membership | None:
    if user_id is None:
        return None
    return session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == user_id
        )
    ).first()


def _require_gm(session: Session, campaign: Campaign, actor: User) -> None:
    require_forum(campaign)
    member = _membership(session, campaign, actor.id)
    if member is None or member.role != "referee":
        raise Forbidden(f"only the GM of {campaign.name} can do this")


def _by_token(session: Session, author: User, token: str | None) -> Post | None:
    if not token:
        return None
    return session.exec(
        select(Post).where(Post.author_id == author.id, Post.client_token == token)
    ).first()


def _character_for(
    session: Session, campaign: Campaign, author: User, member: Membership, character_id
) -> Character | None:
    """Players post as one of their own characters (or as themselves); the GM as anyone."""
    if character_id is None:
        return None
    character = session.get(Character, character_id)
    if character is None or character.campaign_id != campaign.id:
        raise UserError("that character is not in this campaign")
    if member.role != "referee" and character.user_id != author.id:
        raise Forbidden(f"you cannot post as {character.name}: that is not your character")
    return character


def _recipients_for(
    session: Session, campaign: Campaign, author: User, draft: Draft
) -> tuple[int, ...]:
    if draft.audience != "whisper":
        return ()
    wanted = set(draft.recipient_ids) - {author.id}
    if not wanted:
        raise UserError("a whisper needs at least one recipient besides you")
    found = set(
        session.exec(
            select(Membership.user_id).where(
                Membership.campaign_id == campaign.id, Membership.user_id.in_(wanted)
            )
        )
    )
    if found != wanted:
        raise UserError("whispers can only go to members of this campaign")
    return tuple(sorted(wanted))


def _recipients(session: Session, post_ids: list[int]) -> dict[int, set[int]]:
    if not post_ids:
        return {}
    found: dict[int, set[int]] = {}
    query = select(PostRecipient).where(PostRecipient.post_id.in_(post_ids))
    for row in session.exec(query):
        found.setdefault(row.post_id, set()).add(row.user_id)
    return found


def _user_names(session: Session, user_ids) -> dict[int, str]:
    ids = [u for u in user_ids if u is not None]
    if not ids:
        return {}
    return {u.id: u.display_name for u in session.exec(select(User).where(User.id.in_(ids)))}


def _characters(session: Session, campaign: Campaign) -> list[Character]:
    query = select(Character).where(Character.campaign_id == campaign.id)
    return list(session.exec(query.order_by(Character.name)))


def _audit(
    session: Session, campaign: Campaign, actor: User, action: str, now: datetime, **detail
) -> None:
    session.add(
        AuditLog(
            campaign_id=campaign.id, actor_id=actor.id, action=action, detail=detail, created_at=now
        )
    )
