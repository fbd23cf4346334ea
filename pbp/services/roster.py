"""The referee's changes to a character already on the roster: its name, its aliases,
its feed, dropping it out of the game, and handing it to another player.

Each is one function the referee's page and the API both call. Every change is written
to the audit log in the caller's transaction. A character keeps its slug when renamed:
its page address (and every mail that links to it) keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from pbp.errors import Conflict, NotFound, UserError
from pbp.models import Blog, Campaign, Character, Membership, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import blog_settings, turns

MAX_ALIASES = 20
MAX_NAME = 120


@dataclass(frozen=True)
class HandOver:
    character: Character
    invite: accounts.IssuedInvite | None  # None when an existing member took it


def character_in(*, session: Session, campaign: Campaign, character_id: int) -> Character:
    character = session.get(Character, character_id)
    if character is None or character.campaign_id != campaign.id:
        raise NotFound(f"there is no such character in {campaign.name}")
    return character


def add_character(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    name: str,
    feed_url: str | None,
    aliases: list[str],
    allow_private: bool,
) -> Character:
    """Add a character to the roster, blogging on pbp or, with `feed_url`, on a blog of its
    own. The feed address is checked as every fetch is (http(s) only, no private network),
    with no transaction open while its host resolves."""
    _require_referee(session, campaign, actor)
    checked = blog_settings.checked_feed_address(
        session=session, url=feed_url, allow_private=allow_private
    )
    character = campaigns.add_character(
        session=session,
        campaign=campaign,
        name=name,
        feed_url=checked,
        aliases=[a.strip() for a in aliases if a and a.strip()],
    )
    turns.audit(session, campaign, actor, lines.CharacterAdded(name=character.name))
    session.flush()
    return character


def rename_character(
    *,
    session: Session,
    campaign: Campaign,
    character_id: int,
    name: str,
    actor: User,
    now: datetime,
) -> Character:
    _require_referee(session, campaign, actor)
    character = character_in(session=session, campaign=campaign, character_id=character_id)
    name = " ".join((name or "").split())
    if not name:
        raise UserError("a character needs a name")
    if len(name) > MAX_NAME:
        raise UserError(f"a character's name can have at most {MAX_NAME} characters")
    if name == character.name:
        return character
    taken = session.exec(
        select(Character).where(
            Character.campaign_id == campaign.id,
            Character.id != character.id,
        )
    ).all()
    if any(c.name.casefold() == name.casefold() for c in taken):
        raise Conflict(f"{name!r} is already a character in {campaign.name}")
    before = character.name
    character.name = name
    session.add(character)
    _audit(session, campaign, actor, now, lines.CharacterRenamed(character.id, before=before))
    return character


def set_aliases(
    *,
    session: Session,
    campaign: Campaign,
    character_id: int,
    aliases: list[str],
    actor: User,
    now: datetime,
) -> Character:
    """Replace the other names the character goes by (target detection reads them)."""
    _require_referee(session, campaign, actor)
    character = character_in(session=session, campaign=campaign, character_id=character_id)
    cleaned: list[str] = []
    for alias in aliases:
        alias = " ".join((alias or "").split())
        if not alias or alias.casefold() in (a.casefold() for a in cleaned):
            continue
        if len(alias) > MAX_NAME:
            raise UserError(f"an alias can have at most {MAX_NAME} characters: {alias[:40]}…")
        cleaned.append(alias)
    if len(cleaned) > MAX_ALIASES:
        raise UserError(f"a character can have at most {MAX_ALIASES} aliases")
    before = list(character.aliases or [])
    character.aliases = cleaned
    session.add(character)
    _audit(session, campaign, actor, now, lines.AliasesChanged(character.id, before=before))
    return character


def set_feed_url(
    *,
    session: Session,
    campaign: Campaign,
    character_id: int,
    feed_url: str | None,
    allow_private: bool,
    actor: User,
    now: datetime,
) -> Blog:
    """Point the character's blog at another feed (checked as when adding a character:
    http(s) only, never a private network), or back to pbp's built-in blog when empty."""
    _require_referee(session, campaign, actor)
    character = character_in(session=session, campaign=campaign, character_id=character_id)
    # Checked as when adding a character, its host resolved with no transaction open.
    feed_url = blog_settings.checked_feed_address(
        session=session, url=feed_url, allow_private=allow_private
    )
    if feed_url is None:
        return blog_settings.set_builtin_blog(
            session=session, character=character, now=now, actor=actor
        )
    blog = blog_settings.blog_of(session=session, character=character)
    if blog.kind == "external" and blog.feed_url == feed_url:
        return blog
    return blog_settings.point_at_feed(
        session=session, character=character, feed_url=feed_url, home_url=None,
        now=now, actor=actor,
    )  # fmt: skip


def drop_character(
    *,
    session: Session,
    campaign: Campaign,
    character_id: int,
    reason: str,
    actor: User,
    now: datetime,
) -> Character:
    """The referee's ruling that a character has dropped out of the game: it is an
    outsider from now on (its player left, or stopped posting), and the audit log says
    who ruled it and why. Its entries and notes stay where they are."""
    _require_referee(session, campaign, actor)
    character = character_in(session=session, campaign=campaign, character_id=character_id)
    if character.status != "active":
        raise Conflict(f"{character.name} is already {_status_words(character.status)}")
    reason = (reason or "").strip()
    if len(reason) > 2000:
        raise UserError("the reason can have at most 2000 characters")
    character.status = "outsider"
    session.add(character)
    _audit(session, campaign, actor, now, lines.CharacterDropped(character.id, reason=reason))
    return character


def hand_over_character(
    *,
    session: Session,
    campaign: Campaign,
    character_id: int,
    actor: User,
    now: datetime,
    secret_key: str,
    base_url: str,
    mail_from: str | None = None,
    member_id: int | None = None,
    email: str | None = None,
) -> HandOver:
    """Give the character to a new player: to a member of the campaign already
    (`member_id`, a user id), or through a new invitation for it (optionally mailed to
    `email`). Its old player, if any, keeps their membership but not the character."""
    _require_referee(session, campaign, actor)
    character = character_in(session=session, campaign=campaign, character_id=character_id)
    before = character.user_id
    if member_id is not None:
        new_player = session.get(User, member_id)
        member = (
            campaigns.membership(session=session, campaign=campaign, user=new_player)
            if new_player
            else None
        )
        if member is None or member.role != "player":
            raise UserError(f"choose a player of {campaign.name}")
        assert new_player is not None  # member is None without one
        if new_player.id == before:
            raise Conflict(f"{new_player.display_name} already plays {character.name}")
        theirs = session.exec(
            select(Character).where(
                Character.campaign_id == campaign.id,
                Character.user_id == new_player.id,
                Character.status == "active",
            )
        ).first()
        if theirs is not None:
            raise Conflict(f"{new_player.display_name} already plays {theirs.name}")
        character.user_id = new_player.id
        session.add(character)
        handed = lines.CharacterHandedOver(character.id, before=before, to=new_player.id)
        _audit(session, campaign, actor, now, handed)
        return HandOver(character=character, invite=None)
    character.user_id = None
    session.add(character)
    session.flush()
    issued = accounts.create_invite(
        session=session,
        campaign=campaign,
        created_by=actor,
        secret_key=secret_key,
        base_url=base_url,
        now=now,
        character=character,
        email=email or None,
        mail_from=mail_from,
    )
    handed = lines.CharacterHandedOver(character.id, before=before, invite_id=issued.invite.id)
    _audit(session, campaign, actor, now, handed)
    return HandOver(character=character, invite=issued)


def players(*, session: Session, campaign: Campaign) -> list[User]:
    """The campaign's players, for the "hand to a member" choice."""
    return list(
        session.exec(
            select(User)
            .join(Membership, col(Membership.user_id) == User.id)
            .where(Membership.campaign_id == campaign.id, Membership.role == "player")
            .order_by(User.display_name)
        )
    )


def _status_words(status: str) -> str:
    return {"outsider": "an outsider", "winner": "the winner"}.get(status, status)


def _require_referee(session: Session, campaign: Campaign, user: User | None) -> None:
    campaigns.require_referee(
        session=session, campaign=campaign, user=user, doing="change its characters"
    )


def _audit(session, campaign, actor, now, line: lines.Line) -> None:
    audit_log.record(session, line=line, actor=actor, campaign_id=campaign.id, now=now)
    session.flush()
