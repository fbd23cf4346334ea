"""Hiatus (issue #30 item 3): a player marks themselves away until a date, with an optional
note to the referee. Meanwhile they get no nudges; the activity check counts the turns
their absence overlaps as excused; the roster and the board say "away until ...". The
referee is mailed when a player goes away and when they come back, by their button or
when the date arrives (the nudge job notices that, `note_returns`).

The Noteworthy rules are silent on absences (docs/rules-notes.md): the tally is unchanged,
an away character still counts as active, and the referee can still rule it dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlmodel import Session, col, select

from pbp.errors import Conflict, UserError
from pbp.models import Campaign, Hiatus, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns
from pbp.services.mail import alive_mail
from pbp.services.mail.settings import MailSettings

MAX_DAYS = 366
MAX_NOTE = 2000


def back_on(campaign: Campaign, day: date) -> datetime:
    """ "Away until 20 December": back on that day, from midnight in the campaign's zone."""
    return datetime.combine(day, time(0), tzinfo=ZoneInfo(campaign.time_zone))


def current(session: Session, campaign: Campaign, now: datetime) -> dict[int, Hiatus]:
    """Who is away now: user id -> their hiatus."""
    rows = session.exec(
        select(Hiatus).where(
            Hiatus.campaign_id == campaign.id,
            col(Hiatus.ended_at).is_(None),
            col(Hiatus.starts_at) <= now,
            col(Hiatus.until) > now,
        )
    ).all()
    return {row.user_id: row for row in rows}


def all_of(session: Session, campaign: Campaign) -> list[Hiatus]:
    return list(
        session.exec(
            select(Hiatus).where(Hiatus.campaign_id == campaign.id).order_by(col(Hiatus.id))
        )
    )


def ends(hiatus: Hiatus) -> datetime:
    return min(hiatus.until, hiatus.ended_at) if hiatus.ended_at else hiatus.until


def overlaps(hiatuses: Iterable[Hiatus], user_id: int | None, start: datetime, end: datetime):
    """Whether `user_id` was away at any time in [start, end): that turn is excused."""
    return any(h.user_id == user_id and h.starts_at < end and ends(h) > start for h in hiatuses)


def go_away(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    until: date,
    note: str,
    now: datetime,
    mail: MailSettings | None = None,
) -> Hiatus:
    """Mark the player away until `until` (a date; back on that day). A second call
    replaces the first absence (a new date, a new note)."""
    member = campaigns.require_member(
        session=session, campaign=campaign, user=actor, doing="mark yourself away"
    )
    assert actor is not None  # require_member refused otherwise
    if member.role != "player":
        raise UserError("only a player can mark themselves away; the referee runs the game")
    back = back_on(campaign, until)
    if back <= now:
        raise UserError("the date you are back must be after today")
    if back > now + timedelta(days=MAX_DAYS):
        raise UserError(f"a hiatus lasts at most {MAX_DAYS} days")
    note = (note or "").strip()
    if len(note) > MAX_NOTE:
        raise UserError(f"the note can have at most {MAX_NOTE} characters")
    for earlier in current(session, campaign, now).values():
        if earlier.user_id == actor.id:
            earlier.ended_at = earlier.back_noted_at = now  # replaced: no "back" mail
            session.add(earlier)
    hiatus = Hiatus(
        campaign_id=campaign.id, user_id=actor.id, starts_at=now, until=back, note=note,
        created_at=now,
    )  # fmt: skip
    session.add(hiatus)
    session.flush()
    audit_log.record(
        session, line=lines.WentAway(until=until.isoformat()), actor=actor,
        campaign_id=campaign.id,
    )  # fmt: skip
    if mail is not None:
        alive_mail.queue_away(
            session=session, settings=mail, campaign=campaign, player=actor, hiatus=hiatus,
            now=now,
        )  # fmt: skip
    return hiatus


def come_back(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    mail: MailSettings | None = None,
) -> Hiatus:
    """The player is back before the date they gave."""
    campaigns.require_member(session=session, campaign=campaign, user=actor, doing="come back")
    assert actor is not None
    hiatus = current(session, campaign, now).get(actor.id)
    if hiatus is None:
        raise Conflict("you are not marked away")
    hiatus.ended_at = hiatus.back_noted_at = now
    session.add(hiatus)
    audit_log.record(session, line=lines.CameBack(), actor=actor, campaign_id=campaign.id)
    if mail is not None:
        alive_mail.queue_back(
            session=session, settings=mail, campaign=campaign, player=actor, hiatus=hiatus,
            now=now,
        )  # fmt: skip
    session.flush()
    return hiatus


def note_returns(
    *, session: Session, campaign: Campaign, now: datetime, mail: MailSettings | None
) -> int:
    """Tell the referee about each player whose date came (once each: `back_noted_at`)."""
    due = session.exec(
        select(Hiatus, User)
        .join(User, col(User.id) == Hiatus.user_id)
        .where(
            Hiatus.campaign_id == campaign.id,
            col(Hiatus.back_noted_at).is_(None),
            col(Hiatus.until) <= now,
        )
    ).all()
    for hiatus, player in due:
        hiatus.back_noted_at = now
        session.add(hiatus)
        if mail is not None:
            alive_mail.queue_back(
                session=session, settings=mail, campaign=campaign, player=player,
                hiatus=hiatus, now=now,
            )  # fmt: skip
    session.flush()
    return len(due)


def mine(*, session: Session, campaign: Campaign, actor: User | None, now: datetime):
    """The player's own current hiatus, or None (the campaign page's form, the API)."""
    campaigns.require_member(session=session, campaign=campaign, user=actor, doing="see this")
    assert actor is not None
    return current(session, campaign, now).get(actor.id)


def away_until(*, session: Session, campaign: Campaign, now: datetime) -> dict[int, datetime]:
    """The roster's "away until ...": user id -> the day they are back."""
    return {user_id: row.until for user_id, row in current(session, campaign, now).items()}
