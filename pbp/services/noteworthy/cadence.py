"""Scheduled turns: deadlines from the campaign's cadence, and the scheduler's advance.

Cadence (campaign.settings["cadence"]): {"kind": "manual"} (the default),
{"kind": "daily", "at": "20:00"} in the campaign's time zone, or {"kind": "hours", "hours": N}.
At a deadline the scheduler closes the turn; if the tally needs nothing from the referee
it resolves the turn and opens the next one with the referee's queued event; otherwise it
stops and tells the referee why. Every step is idempotent, so two workers running this
at once advance a campaign once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from sqlmodel import Session, col, select

from pbp.errors import UserError
from pbp.models import AuditLog, Campaign, Turn
from pbp.services import audit_actions as lines
from pbp.services.mail.notifications import queue_turn_waiting
from pbp.services.noteworthy import tally as tally_service
from pbp.services.noteworthy import turns

KINDS = ("manual", "daily", "hours")


@functools.cache
def time_zones() -> tuple[str, ...]:
    """Every IANA zone name this system knows, for the referee's picker; read once per
    process (listing them walks the zone files), and a tuple, so no caller can change it."""
    return tuple(sorted(available_timezones()))


def validate(cadence: dict, time_zone: str) -> dict:
    """The cadence as stored, or a UserError saying what is wrong."""
    kind = cadence.get("kind", "manual")
    if kind not in KINDS:
        raise UserError(f"the turn cadence is one of {', '.join(KINDS)}")
    try:
        ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UserError(f"unknown time zone {time_zone!r}") from exc
    remind = _remind_hours(cadence.get("remind_hours"))
    reminder = {"remind_hours": remind} if remind else {}
    if kind == "daily":
        try:
            time.fromisoformat(cadence.get("at", ""))
        except ValueError as exc:
            raise UserError("a daily cadence needs a time of day like 20:00") from exc
        return {"kind": kind, "at": cadence["at"], **reminder}
    if kind == "hours":
        hours = int(cadence.get("hours") or 0)
        if not 1 <= hours <= 24 * 14:
            raise UserError("turns last between 1 hour and 14 days")
        return {"kind": kind, "hours": hours, **reminder}
    return {"kind": "manual", **reminder}


def _remind_hours(raw) -> int:
    """How long before a turn's deadline players with no entry are reminded (0: never)."""
    if isinstance(raw, str):
        raw = raw.strip()
        if raw and not raw.isdigit():
            raise UserError("the hours before the deadline for a reminder must be a whole number")
    hours = int(raw or 0)
    if not 0 <= hours <= 24 * 14:
        raise UserError("a reminder goes out between 1 hour and 14 days before the deadline")
    return hours


def deadline_after(opened: datetime, cadence: dict, time_zone: str) -> datetime | None:
    """When a turn opened at `opened` closes under this cadence (None: manual)."""
    kind = cadence.get("kind", "manual")
    if kind == "hours":
        return opened + timedelta(hours=int(cadence["hours"]))
    if kind == "daily":
        zone = ZoneInfo(time_zone)
        at = time.fromisoformat(cadence["at"])
        local = opened.astimezone(zone)
        candidate = datetime.combine(local.date(), at, tzinfo=zone)
        # A turn opened shortly before the daily time runs to the next day's.
        if candidate <= local + timedelta(hours=1):
            candidate = datetime.combine(local.date() + timedelta(days=1), at, tzinfo=zone)
        return candidate.astimezone(opened.tzinfo)
    return None


@dataclass
class Advance:
    campaign_id: int
    turn_number: int
    # "advanced" | "closed, waiting" | "resolved, no event queued" | "resolved, the game is won"
    outcome: str
    reason: str = ""


def due_campaigns(*, session: Session, now: datetime) -> list[int]:
    return list(
        session.exec(
            select(Turn.campaign_id).where(
                Turn.status == "open", col(Turn.deadline).is_not(None), col(Turn.deadline) <= now
            )
        )
    )


def advance(*, session: Session, campaign: Campaign, now: datetime, mail=None) -> Advance:
    """Close the overdue turn, and carry on as far as the rules allow without a referee.

    Under the campaign's lock the turn is read again: another worker may have advanced it
    since the due list was made (then this is a no-op)."""
    turns.lock_campaign(session, campaign)
    session.refresh(campaign)
    current = turns.latest_turn(session=session, campaign=campaign)
    if (
        current is None
        or current.status != "open"
        or not current.deadline
        or current.deadline > now
    ):
        return Advance(campaign.id, current.number if current else 0, "not due")
    turn = turns.close_turn(session=session, campaign=campaign, actor=None, now=now, mail=mail)
    result = tally_service.tally(session=session, campaign=campaign, turn=turn)
    if result.flags or result.needs_ruling:
        reason = f"{len(result.flags)} flag(s) need a ruling before turn {turn.number} resolves"
        return _wait(session, campaign, turn, reason, now, mail)
    turns.resolve_turn(session=session, campaign=campaign, actor=None, now=now, mail=mail)
    if campaign.status == "ended":  # the turn had a winner: no next turn, queued or not
        return Advance(campaign.id, turn.number, "resolved, the game is won")
    queued = (campaign.settings or {}).get("queued_event")
    if not queued:
        return _wait(
            session,
            campaign,
            turn,
            "no event is queued for the next turn",
            now,
            mail,
            outcome="resolved, no event queued",
        )
    cadence = (campaign.settings or {}).get("cadence", {})
    turns.post_event(
        session=session,
        campaign=campaign,
        text=queued.get("text", ""),
        actor=None,
        now=now,
        tailored=[turns.Tailored(**t) for t in queued.get("tailored", [])],
        deadline=deadline_after(now, cadence, campaign.time_zone),
        expected_number=turn.number + 1,
        mail=mail,
    )
    return Advance(campaign.id, turn.number + 1, "advanced")  # post_event used the queued one


def _wait(session, campaign, turn, reason, now, mail, outcome="closed, waiting") -> Advance:
    """Tell the referee once: on the dashboard (the audit log is its message board) and,
    with `mail`, by mail, since nothing happens until they act."""
    if not _noted(session, campaign, turn, "schedule_waiting"):
        turns.audit(session, campaign, None, lines.ScheduleWaiting(turn=turn.number, reason=reason))
        if mail is not None:
            queue_turn_waiting(
                session=session, settings=mail, campaign=campaign, turn=turn, reason=reason, now=now
            )
    return Advance(campaign.id, turn.number, outcome, reason)


def remind_all_due(*, engine, now: datetime, mail, sender=None) -> dict[int, int]:
    """The scheduler's reminder job: the nudges of every running campaign
    (pbp.services.alive.nudges; Noteworthy: "In a turn, you post at least one in-character
    entry"), and the referee's note that a player's hiatus is over. Each campaign in its
    own transaction, under its lock: a second worker's job waits, then finds every nudge
    claimed and sends nothing. Returns {campaign id: letters queued}."""
    from pbp.db import writing
    from pbp.errors import PbpError
    from pbp.models import Hiatus
    from pbp.services.alive import nudges

    with Session(engine) as session:
        running = session.exec(select(Campaign).where(Campaign.status == "running")).all()
        returning = set(
            session.exec(
                select(Hiatus.campaign_id).where(
                    col(Hiatus.back_noted_at).is_(None), col(Hiatus.until) <= now
                )
            )
        )
        due = [
            c.id
            for c in running
            if c.id in returning or nudges.pending(session=session, campaign=c, now=now)
        ]
        due += [cid for cid in returning if cid not in due]
    done = {}
    for campaign_id in due:
        with writing(), Session(engine, expire_on_commit=False) as session:
            campaign = session.get(Campaign, campaign_id)
            assert campaign is not None  # read just before
            try:
                turns.lock_campaign(session, campaign)
            except PbpError:  # SQLite: another writer holds the database; next minute
                continue
            session.refresh(campaign)
            done[campaign_id] = nudges.run(session=session, campaign=campaign, now=now, mail=mail)
            if sender is not None:
                sender.send_after_commit(session=session)
            session.commit()
    return done


def reminds_at(campaign: Campaign, turn: Turn) -> list[datetime]:
    """When the schedule nudges the turn's players, before and after its deadline."""
    from pbp.services.alive import nudges

    return nudges.nudge_times(campaign, turn.deadline, turn.opened_at)


def _noted(session: Session, campaign: Campaign, turn: Turn, action: str, *more) -> bool:
    """Whether the audit log has `action` for this turn (and `more` conditions): what the
    schedule does once per turn (tell the referee it waits, remind) it notes there."""
    found = session.exec(
        select(AuditLog.id).where(
            AuditLog.campaign_id == campaign.id,
            AuditLog.action == action,
            AuditLog.detail["turn"].as_integer() == turn.number,
            *more,
        )
    ).first()
    return found is not None


def advance_all_due(*, engine, now: datetime, mail=None, sender=None) -> list[Advance]:
    """The scheduler's job: each overdue campaign in its own transaction. With `sender`,
    the mail an advance queues (the results, the next event) leaves right after its commit,
    not at the outbox sweep."""
    from pbp.db import writing
    from pbp.errors import PbpError, RulesError

    with Session(engine) as session:
        ids = due_campaigns(session=session, now=now)
    done = []
    for campaign_id in ids:
        with writing(), Session(engine, expire_on_commit=False) as session:
            campaign = session.get(Campaign, campaign_id)
            assert campaign is not None  # due_campaigns read it just before
            try:
                done.append(advance(session=session, campaign=campaign, now=now, mail=mail))
                if sender is not None:
                    sender.send_after_commit(session=session)
                session.commit()
            # Another worker got there first, or a rule refused.
            except (PbpError, RulesError) as exc:
                session.rollback()
                done.append(Advance(campaign_id, 0, "skipped", str(exc)))
    return done
