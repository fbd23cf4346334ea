"""Mentions (issue #29 item 4): ``@Name`` -- a character's name or one of its aliases -- in
an entry, a note, a forum post or an event becomes a link to the character, and its player
is mailed once per item, under the "mentions" preference.

The link is made where the text is rendered (`render_with_mentions`: Markdown, nh3, then
pbp.markup.link_mentions on the clean HTML), so text inside code or a link mentions no one
and nothing typed can add markup. Who is mailed is decided by the caller's `may_read`: a
whisper or a GM-only post mentions only those who may read it
(pbp.services.forum.visibility.can_see_post), a tailored event only its character.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from html import escape as html_escape

from markupsafe import Markup
from sqlmodel import Session, col, select

from pbp import links
from pbp.markup import link_mentions, mention_key, plain_text
from pbp.models import Campaign, Character, Membership, OutboxMessage, User
from pbp.services.mail.preferences import wants
from pbp.services.mail.queue import Letter, queue
from pbp.services.mail.settings import MailSettings
from pbp.services.rendering import rendered

EXCERPT = 300  # characters of the item quoted in the mail
MIN_NAME = 2  # an alias of one letter would make every "@a" a mention


@dataclass(frozen=True)
class Mentionable:
    """A character as a mention finds it: plain values, read before the render (which
    ends the transaction)."""

    character_id: int
    user_id: int | None
    name: str
    path: str  # the character's page


@dataclass(frozen=True)
class MentionBook:
    """A campaign's characters by every name they may be mentioned by."""

    by_key: dict[str, Mentionable]

    @property
    def paths(self) -> dict[str, str]:
        return {key: who.path for key, who in self.by_key.items()}


def book_for(*, session: Session, campaign: Campaign) -> MentionBook:
    """Every character of `campaign`, by name and alias. A name shared by two characters
    (one's alias, the other's name) goes to the one whose name it is."""
    characters = session.exec(
        select(Character).where(Character.campaign_id == campaign.id).order_by(col(Character.id))
    ).all()
    page = links.character if campaign.ruleset == "noteworthy" else links.sheet
    people = {
        c.id: Mentionable(_stored_id(c), c.user_id, c.name, page(campaign.slug, c.slug))
        for c in characters
    }
    by_key: dict[str, Mentionable] = {}
    for character in characters:
        for alias in character.aliases or []:
            key = mention_key(str(alias))
            if len(key) >= MIN_NAME:
                by_key.setdefault(key, people[character.id])
    for character in characters:  # names last: a name beats another's alias
        by_key[mention_key(character.name)] = people[character.id]
    return MentionBook(by_key)


def _stored_id(character: Character) -> int:
    assert character.id is not None  # read from the database
    return character.id


@dataclass(frozen=True)
class Rendered:
    html: str
    mentioned: tuple[Mentionable, ...]  # once each, in the order first named


def link(html: str, book: MentionBook) -> Rendered:
    """Clean HTML with its mentions linked (pbp.markup.link_mentions)."""
    linked, keys = link_mentions(html, book.paths)
    seen: dict[int, Mentionable] = {}
    for key in keys:
        who = book.by_key[key]
        seen.setdefault(who.character_id, who)
    return Rendered(linked, tuple(seen.values()))


def plain_text_markup(text: str, book: MentionBook | None) -> Markup:
    """Plain text (a referee's event) as safe markup with its mentions linked: escaped as
    the templates escape it, line breaks kept for the page's CSS to show. `book` None: no
    "@" in any text to show, and no query made for one."""
    escaped = html_escape(text, quote=False)
    if book is None or "@" not in text:
        return Markup(escaped)
    return Markup(link(escaped, book).html)


def book_if_needed(
    *, session: Session, campaign: Campaign, texts: Iterable[str | None]
) -> MentionBook | None:
    """The campaign's mention book when some text has an "@", else None (no query)."""
    if any(t and "@" in t for t in texts):
        return book_for(session=session, campaign=campaign)
    return None


def render_with_mentions(*, session: Session, text: str, book: MentionBook) -> Rendered:
    """*text* rendered (pbp.services.rendering: no transaction open) with its mentions
    linked."""
    return link(rendered(session=session, text=text), book)


@dataclass(frozen=True)
class Item:
    """What a mention is in, for its mail: `key` names the item once ("entry:12"), so its
    players are mailed once per item however often it is edited."""

    key: str
    what: str  # "an entry", "a note", "a forum post", "the event"
    title: str
    path: str
    html: str
    by: str  # who wrote it, as shown


def queue_mentions(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    item: Item,
    mentioned: Iterable[Mentionable],
    author_user_id: int | None,
    may_read: Callable[[User, Membership], bool],
    now: datetime,
) -> list[OutboxMessage]:
    """Mail each mentioned character's player, once per item: not the writer, not a
    player who switched "mentions" off, and never one who may not read the item
    (`may_read`), so the mail carries nothing hidden from its reader."""
    user_ids = {m.user_id for m in mentioned if m.user_id not in (None, author_user_id)}
    if not user_ids:
        return []
    rows = session.exec(
        select(Membership, User)
        .join(User, col(User.id) == Membership.user_id)
        .where(Membership.campaign_id == campaign.id, col(Membership.user_id).in_(user_ids))
        .order_by(col(User.id))
    ).all()
    names = {m.user_id: m.name for m in mentioned}
    text = " ".join(plain_text(item.html).split())
    excerpt = text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"
    queued = []
    for membership, user in rows:
        if not wants(membership, "mentions") or not may_read(user, membership):
            continue
        letter = Letter(
            kind="mention",
            template="mention",
            dedupe_key=f"mention:{item.key}:{user.id}",
            to=user,
            campaign=campaign,
            membership=membership,
            subject=f"{item.by} mentioned {names[user.id]}",
            context={
                "character": names[user.id],
                "item": item,
                "excerpt": excerpt,
                "url": links.absolute(settings.base_url, item.path),
            },
        )
        queued.append(queue(session=session, settings=settings, letter=letter, now=now))
    return queued


def everyone(_user: User, _membership: Membership) -> bool:
    """`may_read` for an item every member may read (an entry, a note, a public post)."""
    return True
