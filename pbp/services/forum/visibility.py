"""Who sees what in a forum: the viewer, the posts they may read, their rolls.

Who sees what is decided in two functions only: `can_see_post` (here) for posts and
`rolls.roll_view` for rolls. Every page, the feed, the email and the export read posts
through `visible_posts` and rolls through `roll_view`, so no output can show more than
these two allow.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from pbp.errors import NotFound
from pbp.models import Campaign, Character, Membership, User
from pbp.models.forum import Post, PostRecipient, Roll, Thread
from pbp.services import icons
from pbp.services.forum import rolls, seeds
from pbp.services.forum.rolls import ANONYMOUS, RollView, Viewer, roll_view
from pbp.services.icons import IconView

FORUM_RULESETS = seeds.FORUM_RULESETS


def require_forum(campaign: Campaign) -> None:
    if campaign.ruleset not in FORUM_RULESETS:
        raise NotFound(f"{campaign.name} is played on blogs, not on the forum")


def viewer_for(*, session: Session, campaign: Campaign, user: User | None) -> Viewer:
    if user is None:
        return ANONYMOUS
    member = membership_of(session, campaign, user.id)
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
    # The icon beside it (issue #33 item 1), read only for a post the viewer may read.
    icon: IconView | None = None


def is_revealed(*, session: Session, campaign: Campaign) -> bool:
    return rolls.revealed_seed(rolls.get_secret(session=session, campaign=campaign)) is not None


def visible_posts(
    *, session: Session, campaign: Campaign, viewer: Viewer, thread: Thread | None = None
) -> list[PostView]:
    """The posts of a thread (or of the whole forum) that `viewer` may read, oldest first,
    each with its rolls as `roll_view` allows."""
    query = select(Post).join(Thread, col(Thread.id) == Post.thread_id)
    query = query.where(Thread.campaign_id == campaign.id)
    if thread is not None:
        query = query.where(Post.thread_id == thread.id)
    posts = list(session.exec(query.order_by(col(Post.created_at), col(Post.id))))
    return views_of(session, campaign, posts, viewer)


def views_of(
    session: Session, campaign: Campaign, posts: list[Post], viewer: Viewer
) -> list[PostView]:
    recipients = recipients_of(session, [p.id for p in posts])
    shown = [p for p in posts if can_see_post(p, viewer, recipients.get(p.id, set()))]
    revealed = is_revealed(session=session, campaign=campaign)
    by_post = rolls.rolls_of_posts(session=session, post_ids=[p.id for p in shown])
    names = user_names(session, {p.author_id for p in shown}.union(*recipients.values()))
    characters = {c.id: c.name for c in characters_of(session, campaign)}
    faces = icons.shown(session=session, pairs=((p.character_id, p.icon_id) for p in shown))
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
                author=names.get(post.author_id or 0, "someone who left"),
                character=characters.get(post.character_id or 0),
                kind=post.kind,
                audience=post.audience,
                recipients=tuple(sorted(names[u] for u in recipients.get(post.id, ()))),
                body=None if hide_text else post.body,
                html="" if hide_text else post.body_html,
                deleted=deleted,
                created_at=post.created_at,
                edited_at=post.edited_at,
                rolls=tuple(v for v in roll_views if v is not None),
                can_edit=can_edit(post, viewer, ended),
                icon=faces.get((post.character_id, post.icon_id)),
            )
        )
    return views


def can_edit(post: Post, viewer: Viewer, ended: bool) -> bool:
    """The author (still a member) and the GM may edit or delete, until the end."""
    if ended or post.deleted_at is not None or not viewer.is_member:
        return False
    return viewer.is_gm or post.author_id == viewer.user_id


def get_post(*, session: Session, campaign: Campaign, post_id: int, viewer: Viewer) -> Post:
    post = session.get(Post, post_id)
    thread = session.get(Thread, post.thread_id) if post else None
    if post is None or thread is None or thread.campaign_id != campaign.id:
        raise NotFound("there is no such post")
    if not can_see_post(post, viewer, recipients_of(session, [post.id]).get(post.id, set())):
        raise NotFound("there is no such post")
    return post


def get_roll_view(
    *, session: Session, campaign: Campaign, roll_id: str, viewer: Viewer
) -> tuple[RollView, PostView | None]:
    """A roll's permanent page: the roll, and its post if the viewer may read that."""
    roll = session.get(Roll, roll_id)
    if roll is None or roll.campaign_id != campaign.id:
        raise NotFound("there is no such roll")
    post = session.get(Post, roll.post_id)
    if post is None:  # a roll's post is never deleted (RESTRICT): only its text is
        raise NotFound("there is no such roll")
    thread = session.get(Thread, post.thread_id)
    views = visible_posts(session=session, campaign=campaign, viewer=viewer, thread=thread)
    post_view = next((v for v in views if v.id == post.id), None)
    revealed = is_revealed(session=session, campaign=campaign)
    view = roll_view(roll, viewer, post_visible=post_view is not None, revealed=revealed)
    if view is None:
        raise NotFound("there is no such roll")
    return view, post_view


def membership_of(session: Session, campaign: Campaign, user_id: int | None) -> Membership | None:
    if user_id is None:
        return None
    return session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == user_id
        )
    ).first()


def recipients_of(session: Session, post_ids: list[int]) -> dict[int, set[int]]:
    if not post_ids:
        return {}
    found: dict[int, set[int]] = {}
    query = select(PostRecipient).where(col(PostRecipient.post_id).in_(post_ids))
    for row in session.exec(query):
        found.setdefault(row.post_id, set()).add(row.user_id)
    return found


def user_names(session: Session, user_ids) -> dict[int, str]:
    ids = [u for u in user_ids if u is not None]
    if not ids:
        return {}
    return {u.id: u.display_name for u in session.exec(select(User).where(col(User.id).in_(ids)))}


def characters_of(session: Session, campaign: Campaign) -> list[Character]:
    query = select(Character).where(Character.campaign_id == campaign.id)
    return list(session.exec(query.order_by(Character.name)))
