"""Reminders to the players whose character has no entry in the turn yet.

Noteworthy: "In a turn, you post at least one in-character entry." The referee sends them
with one button; a campaign's cadence can have the scheduler send them a set time before
the turn's deadline (pbp.services.noteworthy.cadence.remind_all_due).
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from pbp.models import Blog, Campaign, Character, Entry, Turn, User
from pbp.services import audit_actions as lines
from pbp.services.alive import hiatus
from pbp.services.mail.notifications import queue_reminder
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import turns


def missing_posters(
    *, session: Session, campaign: Campaign, turn: Turn
) -> list[tuple[Character, User]]:
    """Each played character with no entry in `turn`, with its player; none once the turn
    is resolved. A winner has nothing left to write for."""
    if turn.status == "resolved":
        return []
    # A hidden entry is as if never posted (pbp.services.noteworthy.hidden_entries).
    wrote = select(Entry.character_id).where(
        Entry.turn_id == turn.id, col(Entry.hidden_at).is_(None)
    )
    rows = session.exec(
        select(Character, User)
        .join(Blog, col(Blog.character_id) == Character.id)
        .join(User, col(User.id) == Character.user_id)
        .where(
            Character.campaign_id == campaign.id,
            Character.status != "winner",
            col(Character.id).not_in(wrote),
        )
        .order_by(Character.name)
    ).all()
    return [(character, user) for character, user in rows]


def remind_missing(
    *,
    session: Session,
    campaign: Campaign,
    turn: Turn,
    mail: MailSettings,
    now: datetime,
    actor: User | None,
) -> int:
    """Queue a reminder to every player in `missing_posters` but those away (a hiatus),
    and note it in the audit log;
    returns how many. The referee's (`actor`) at most once an hour each, the schedule's
    (`actor` None) once a turn."""
    away = hiatus.current(session, campaign, now)  # away players get no nudge (issue #30)
    missing = [
        (character, player)
        for character, player in missing_posters(session=session, campaign=campaign, turn=turn)
        if player.id not in away
    ]
    for character, player in missing:
        queue_reminder(
            session=session,
            settings=mail,
            campaign=campaign,
            turn=turn,
            character=character,
            player=player,
            now=now,
            once_per_turn=actor is None,
        )
    reminded = lines.Reminded(count=len(missing), turn=turn.number, scheduled=actor is None)
    turns.audit(session, campaign, actor, reminded)
    return len(missing)
