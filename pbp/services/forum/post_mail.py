"""The mail a forum post causes: its thread's watchers and a whisper's recipients, each
sent the post as they may see it."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from pbp import links
from pbp.models import Campaign, Membership, User
from pbp.models.forum import Post, Thread, Watch
from pbp.services.forum.drafts import KINDS
from pbp.services.forum.rolls import Viewer
from pbp.services.forum.visibility import can_see_post, recipients_of, views_of
from pbp.services.mail import chat
from pbp.services.mail.preferences import wants_any
from pbp.services.mail.queue import Letter, ReplyTo, queue_letter
from pbp.services.mail.settings import MailSettings


def notify(
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
    # A post for everyone goes to the campaign's and the scene's chat channels too.
    chat.forum_post(
        session=session, settings=mail, campaign=campaign, thread=thread, post=post, now=now
    )
    recipient_ids = recipients_of(session, [post.id]).get(post.id, set())
    watcher_ids = set(session.exec(select(Watch.user_id).where(Watch.thread_id == thread.id)))
    wanted = (watcher_ids | recipient_ids) - {post.author_id}
    if not wanted:
        return
    members = session.exec(
        select(Membership, User)
        .join(User, col(User.id) == Membership.user_id)
        .where(Membership.campaign_id == campaign.id, col(Membership.user_id).in_(wanted))
    ).all()
    for membership, user in members:
        viewer = Viewer(user.id, membership.role)
        if not wants_any(membership, "forum"):
            continue
        if not can_see_post(post, viewer, recipient_ids):
            continue
        (view,) = views_of(session, campaign, [post], viewer)
        url = links.absolute(mail.base_url, links.post(campaign.slug, thread.id, post.id))
        letter = Letter(
            kind="forum_post",
            template="forum_post",
            dedupe_key=f"forum-post:{post.id}:{user.id}",
            to=user,
            campaign=campaign,
            membership=membership,  # whose channels carry it (issue #31: mail, push)
            subject=f"{view.author} in {thread.title}",
            context={
                "thread": thread,
                "view": view,
                "kind": KINDS[view.kind].lower(),
                "url": url,
                # The icon as this reader's view of the post has it (issue #33 item 1).
                "icon_url": links.absolute(mail.base_url, view.icon.path) if view.icon else None,
            },
            # Replies by mail are public posts: offered under public posts only, so a
            # reply (or a quote left in it) cannot carry a whisper or a GM-only post out.
            reply=ReplyTo(thread_id=thread.id) if post.audience == "all" else None,
        )
        queue_letter(session=session, settings=mail, letter=letter, now=now)
