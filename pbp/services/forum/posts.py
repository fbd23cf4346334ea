"""Writing in the forum: opening a thread, posting with rolls, editing with history and
deleting. Every check of a post is made before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col, select

from adapters.sanitize import text_to_html
from pbp import links
from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.markup import TooIntricate, render_markdown
from pbp.models import Campaign, Character, Membership, User
from pbp.models.forum import Post, PostRecipient, PostRevision, Thread
from pbp.services import audit_actions as lines
from pbp.services import audit_log, icons, mentions, saved_drafts
from pbp.services.forum import rolls
from pbp.services.forum.drafts import (
    AUDIENCES,
    KINDS,
    MAX_TITLE,
    TOKEN,
    Draft,
    strip_roll_lines,
    typed_body,
)
from pbp.services.forum.post_mail import notify
from pbp.services.forum.rolls import ROLL_VISIBILITY, Viewer
from pbp.services.forum.threads import set_watch
from pbp.services.forum.visibility import (
    can_edit,
    can_see_post,
    get_post,
    membership_of,
    recipients_of,
    require_forum,
    user_names,
    viewer_for,
    visible_posts,
)
from pbp.services.mail.settings import MailSettings
from pbp.services.rendering import rendered


@dataclass(frozen=True)
class _Prepared:
    body: str
    html: str
    character: Character | None
    recipients: tuple[int, ...]
    planned: tuple[rolls.PlannedRoll, ...]


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
    post = _store(session, campaign, thread, author, draft, prepared, mail, now)
    # Posted: the saved draft of the form goes in the same transaction (issue #29 item 5).
    saved_drafts.discard(session=session, user=author, campaign=campaign, form="scene")
    return post


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
    post = _store(session, campaign, thread, author, draft, prepared, mail, now)
    saved_drafts.discard(
        session=session, user=author, campaign=campaign, form="post", target_id=thread.id
    )
    return post


def _prepare(
    session: Session, campaign: Campaign, author: User, draft: Draft, html: str
) -> _Prepared:
    require_forum(campaign)
    member = membership_of(session, campaign, author.id)
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
    if draft.client_token is not None and not TOKEN.fullmatch(draft.client_token):
        raise UserError("the form is damaged (its token is not valid): reload the page")
    body = typed_body(draft.body)
    character = _character_for(session, campaign, author, member, draft.character_id)
    recipients = _recipients_for(session, campaign, author, draft)
    icons.picked(
        session=session,
        character_id=character.id if character else None,
        icon_id=draft.icon_id,
    )
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
    done = mentions.link(prepared.html, mentions.book_for(session=session, campaign=campaign))
    post = Post(
        author_id=author.id,
        character_id=prepared.character.id if prepared.character else None,
        kind=draft.kind,
        audience=draft.audience,
        body=text,
        body_html=done.html,
        client_token=draft.client_token,
        created_at=now,
        icon_id=draft.icon_id,
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
    notify(session, campaign, thread, post, mail, now)
    mail_mentions(session, campaign, thread, post, done.mentioned, author, mail, now)
    return post


def edit_post(
    *,
    session: Session,
    campaign: Campaign,
    post: Post,
    editor: User,
    body: str,
    now: datetime,
    mail: MailSettings | None = None,
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
    if not can_edit(post, viewer, campaign.status == "ended"):
        raise Forbidden("only the post's author and the GM can change it, until the end")
    if body == post.body:
        return post
    if not body and not rolls.rolls_of_posts(session=session, post_ids=[post.id]):
        raise UserError("a post cannot be empty: delete it instead")
    done = mentions.link(html, mentions.book_for(session=session, campaign=campaign))
    post.body, post.body_html, post.edited_at = body, done.html, now
    session.add(post)
    session.add(PostRevision(post_id=post.id, body=body, edited_by=editor.id, created_at=now))
    session.flush()
    if mail is not None:  # keyed by the post: who was named before is not mailed again
        thread = session.get(Thread, post.thread_id)
        assert thread is not None  # the post's foreign key
        author = session.get(User, post.author_id) if post.author_id else None
        mail_mentions(session, campaign, thread, post, done.mentioned, author, mail, now)
    return post


def mail_mentions(
    session: Session,
    campaign: Campaign,
    thread: Thread,
    post: Post,
    mentioned: tuple[mentions.Mentionable, ...],
    author: User | None,
    mail: MailSettings,
    now: datetime,
) -> None:
    """Issue #29 item 4: the players of the characters a post names with "@" are mailed,
    once per post, if they may read it: a whisper mentions only its recipients (and the
    GM), a GM-only post only the GM (`can_see_post`, the forum's one rule)."""
    if not mentioned:
        return
    recipients = recipients_of(session, [post.id]).get(post.id, set())
    character = session.get(Character, post.character_id) if post.character_id else None
    by = character.name if character else (author.display_name if author else "someone")

    def may_read(user: User, membership: Membership) -> bool:
        return can_see_post(post, Viewer(user.id, membership.role), recipients)

    item = mentions.Item(
        key=f"post:{post.id}",
        what="a forum post",
        title=thread.title,
        path=links.post(campaign.slug, thread.id, post.id),
        html=post.body_html,
        by=by,
    )
    mentions.queue_mentions(
        session=session,
        settings=mail,
        campaign=campaign,
        item=item,
        mentioned=mentioned,
        author_user_id=post.author_id,
        may_read=may_read,
        now=now,
    )


def delete_post(
    *, session: Session, campaign: Campaign, post: Post, actor: User, now: datetime
) -> Post:
    """Hide a post's text (the GM still sees it). Its rolls stay, shown as before."""
    viewer = viewer_for(session=session, campaign=campaign, user=actor)
    if not can_edit(post, viewer, campaign.status == "ended"):
        raise Forbidden("only the post's author and the GM can delete it, until the end")
    post.deleted_at = now
    session.add(post)
    audit(session, campaign, actor, lines.PostDeleted(post.id), now)
    session.flush()
    return post


def post_to_edit(*, session: Session, campaign: Campaign, post_id: int, viewer: Viewer) -> Post:
    """A post its editor may change; the edit form shows its text, so a deleted post, or
    someone else's, is refused here and not only when the change is saved (issue #16)."""
    post = get_post(session=session, campaign=campaign, post_id=post_id, viewer=viewer)
    if not can_edit(post, viewer, campaign.status == "ended"):
        raise Forbidden("only the post's author and the GM can change it, until the end")
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
            .order_by(col(PostRevision.created_at), col(PostRevision.id))
        )
    )
    names = user_names(session, {r.edited_by for r in rows})
    return [
        Revision(
            r.body,
            _stored_html(r.body),
            names.get(r.edited_by, "someone who left") if r.edited_by else "someone who left",
            r.created_at,
        )
        for r in rows
    ]


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
    wanted = (set(draft.recipient_ids) | _players_of(session, campaign, draft)) - {author.id}
    if not wanted:
        raise UserError("a whisper needs at least one recipient besides you")
    found = set(
        session.exec(
            select(Membership.user_id).where(
                Membership.campaign_id == campaign.id, col(Membership.user_id).in_(wanted)
            )
        )
    )
    if found != wanted:
        raise UserError("whispers can only go to members of this campaign")
    return tuple(sorted(wanted))


def _players_of(session: Session, campaign: Campaign, draft: Draft) -> set[int]:
    """The players of the characters a whisper names by slug (issue #35 item 3)."""
    players = set()
    for slug in draft.recipient_characters:
        character = session.exec(
            select(Character).where(Character.campaign_id == campaign.id, Character.slug == slug)
        ).first()
        if character is None:
            raise UserError(f"there is no character {slug!r} in {campaign.name} to whisper to")
        if character.user_id is None:
            raise UserError(f"{character.name} has no player yet: nobody would read the whisper")
        players.add(character.user_id)
    return players


def audit(
    session: Session, campaign: Campaign, actor: User, line: lines.Line, now: datetime
) -> None:
    audit_log.record(session, line=line, actor=actor, campaign_id=campaign.id, now=now)


# -- the actions by id: what the pages and the API call ------------------------------------


def reply(
    *,
    session: Session,
    campaign: Campaign,
    thread_id: int,
    author: User,
    draft: Draft,
    mail: MailSettings,
    now: datetime,
) -> Post:
    """A member posts in a thread they may read (`create_post` holds the checks)."""
    require_forum(campaign)
    thread = session.get(Thread, thread_id)
    if thread is None or thread.campaign_id != campaign.id:
        raise NotFound("there is no such thread")
    return create_post(
        session=session,
        campaign=campaign,
        thread=thread,
        author=author,
        draft=draft,
        mail=mail,
        now=now,
    )


def change_post(
    *,
    session: Session,
    campaign: Campaign,
    post_id: int,
    editor: User,
    body: str,
    now: datetime,
    mail: MailSettings | None = None,
) -> Post:
    """The author (or the GM) changes a post they may read: `edit_post`'s checks."""
    require_forum(campaign)
    viewer = viewer_for(session=session, campaign=campaign, user=editor)
    post = get_post(session=session, campaign=campaign, post_id=post_id, viewer=viewer)
    return edit_post(
        session=session,
        campaign=campaign,
        post=post,
        editor=editor,
        body=body,
        now=now,
        mail=mail,
    )


def remove_post(
    *, session: Session, campaign: Campaign, post_id: int, actor: User, now: datetime
) -> Post:
    """The author (or the GM) deletes a post they may read: `delete_post`'s checks."""
    require_forum(campaign)
    viewer = viewer_for(session=session, campaign=campaign, user=actor)
    post = get_post(session=session, campaign=campaign, post_id=post_id, viewer=viewer)
    return delete_post(session=session, campaign=campaign, post=post, actor=actor, now=now)
