"""A forum player's character: made by the player, or by the GM and handed to them.

Issue #27 item 3: a player invited "without a character" joins a forum campaign with
nothing to post as and no sheet. They make their own character and its sheet here (the
ruleset checks the sheet, as every sheet change: `sheets.validate`), or the GM makes one for
them and hands it over (the roster's `hand_over_character`, as the character page does).
A player plays one character at a time, as a hand-over already holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, select

from pbp.errors import Conflict, Forbidden
from pbp.models import Campaign, Character, User
from pbp.models.forum import Sheet
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns, roster
from pbp.services.forum import sheets
from pbp.services.forum.threads import Member, members
from pbp.services.forum.visibility import membership_of, require_forum


@dataclass(frozen=True)
class Made:
    character: Character
    sheet: Sheet | None


def character_of(*, session: Session, campaign: Campaign, user_id: int | None) -> Character | None:
    """The character a member plays here, if any (one at a time: see the module docstring)."""
    if user_id is None:
        return None
    return session.exec(
        select(Character).where(
            Character.campaign_id == campaign.id,
            Character.user_id == user_id,
            Character.status == "active",
        )
    ).first()


def needs_character(*, session: Session, campaign: Campaign, user: User | None) -> bool:
    """Whether the pages offer this person the "Make your character" form: a player of a
    campaign still in play, who plays no character yet."""
    if user is None or campaign.status == "ended":
        return False
    member = membership_of(session, campaign, user.id)
    if member is None or member.role != "player":
        return False
    return character_of(session=session, campaign=campaign, user_id=user.id) is None


def players_without_character(*, session: Session, campaign: Campaign) -> list[Member]:
    """The players the GM may make a character for (the GM's dashboard)."""
    return [
        m
        for m in members(session=session, campaign=campaign)
        if m.role == "player"
        and character_of(session=session, campaign=campaign, user_id=m.user_id) is None
    ]


def make_own_character(
    *,
    session: Session,
    campaign: Campaign,
    actor: User,
    name: str,
    sheet: Mapping[str, Any],
    now: datetime,
) -> Made:
    """A player with no character makes one, with its sheet: the ruleset's checks refuse a
    sheet as they refuse it on the sheet page (ONE: 35 stat points, stats 2 to 12, ...), and
    nothing is made then."""
    require_forum(campaign)
    member = membership_of(session, campaign, actor.id)
    if member is None or member.role != "player":
        raise Forbidden(
            f"only a player of {campaign.name} makes their own character here; "
            "the GM adds characters from the GM's page"
        )
    _require_play(campaign)
    theirs = character_of(session=session, campaign=campaign, user_id=actor.id)
    if theirs is not None:
        raise Conflict(f"you already play {theirs.name} in {campaign.name}")
    sheets.validate(campaign.ruleset, sheet, name=name)  # before anything is made
    character = campaigns.add_character(session=session, campaign=campaign, name=name, user=actor)
    made = lines.CharacterMade(character.id, name=character.name)
    audit_log.record(session, line=made, actor=actor, campaign_id=campaign.id, now=now)
    saved = sheets.save_sheet(
        session=session,
        campaign=campaign,
        character=character,
        data=sheet,
        actor=actor,
        membership=member,
        now=now,
    )
    return Made(character, saved)


def make_character_for(
    *,
    session: Session,
    campaign: Campaign,
    actor: User,
    player_id: int,
    name: str,
    sheet: Mapping[str, Any] | None,
    now: datetime,
    secret_key: str,
    base_url: str,
) -> Made:
    """The GM makes a character and hands it to a player who has none: the roster's
    `add_character` and `hand_over_character`, in one transaction (a player who already
    plays someone is refused, and nothing is made). The sheet is optional: its player or
    the GM fills it in later."""
    require_forum(campaign)
    member = membership_of(session, campaign, actor.id)
    if member is None or member.role != "referee":
        raise Forbidden(f"only the GM of {campaign.name} makes a character for a player")
    _require_play(campaign)
    if sheet is not None:
        sheets.validate(campaign.ruleset, sheet, name=name)
    character = roster.add_character(
        session=session,
        campaign=campaign,
        actor=actor,
        name=name,
        feed_url=None,
        aliases=[],
        allow_private=False,
    )
    roster.hand_over_character(
        session=session,
        campaign=campaign,
        character_id=character.id,
        actor=actor,
        now=now,
        secret_key=secret_key,
        base_url=base_url,
        member_id=player_id,
    )
    saved = None
    if sheet is not None:
        saved = sheets.save_sheet(
            session=session,
            campaign=campaign,
            character=character,
            data=sheet,
            actor=actor,
            membership=member,
            now=now,
        )
    return Made(character, saved)


def _require_play(campaign: Campaign) -> None:
    if campaign.status == "ended":
        raise Conflict(f"{campaign.name} has ended: no new characters join it")
