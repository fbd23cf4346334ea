"""Nudges (issue #30 item 1): reminders a set number of hours before a turn's deadline
(default 48 and 24) and one after it, to the players who still have something to do in
the turn, and after the deadline to the referee, the list of who has not posted and for
how many turns in a row.

"Something to do" is the campaign's activity rule, read by the activity check
(`activity.measure`): in Noteworthy an entry in the turn ("In a turn, you post at least
one in-character entry"); in a forum game, which has no turns or deadlines, the posts of
the current posting window, whose end is the deadline (`plan`).

Run by the scheduler's reminder job (`cadence.remind_all_due`) under the campaign's lock.
Each nudge is claimed by a `Nudge` row under a unique key (turn, person, kind) before its
letter is queued, so two workers, or a pass run again, send it once. Away players
(`hiatus`) get none. When the job missed a time (the worker was down), only the nearest
of the nudges due goes; the earlier ones are claimed without a letter.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import links
from pbp.models import AuditLog, Campaign, Character, Nudge, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log
from pbp.services.alive import activity as activity_service
from pbp.services.alive import hiatus
from pbp.services.alive.plan import Plan, is_forum, plan_of
from pbp.services.mail import alive_mail
from pbp.services.mail.settings import MailSettings

# An overdue nudge older than this is not sent any more (a campaign that turns nudges on
# does not mail about turns long gone).
STALE = timedelta(days=7)
OVERDUE, OVERDUE_LIST = "overdue", "overdue-list"


def marks(plan: Plan, period: activity_service.Period) -> list[tuple[str, datetime]]:
    """(kind, when) of every nudge of `period`, in time order."""
    if period.end is None:
        return []
    found = [
        (f"before:{h}", period.end - timedelta(hours=h))
        for h in plan.nudge_hours
        if period.end - timedelta(hours=h) >= period.start  # not before the turn began
    ]
    if plan.overdue_hours is not None:
        found.append((OVERDUE, period.end + timedelta(hours=plan.overdue_hours)))
    return found


def due_marks(plan: Plan, period: activity_service.Period, now: datetime):
    """The marks of `period` that are due at `now`: a before-nudge until the deadline, the
    overdue one for `STALE` after its time."""
    if period.end is None:
        return []
    return [
        (kind, at)
        for kind, at in marks(plan, period)
        if at <= now and (now < period.end if kind != OVERDUE else now < at + STALE)
    ]


def nudge_times(campaign: Campaign, deadline: datetime | None, start: datetime):
    """When a turn's nudges go (the dashboard's line); none without a deadline."""
    if deadline is None:
        return []
    period = activity_service.Period("", 0, "", start, deadline, False, "")
    return [at for _, at in marks(plan_of(campaign), period)]


def noted(session: Session, campaign: Campaign, key: str, kind: str) -> bool:
    """Whether this campaign's nudges of `kind` for the turn `key` were sent already (the
    audit line is written with them): the job's cheap check before it takes the lock."""
    found = session.exec(
        select(AuditLog.id).where(
            AuditLog.campaign_id == campaign.id,
            AuditLog.action == lines.Nudged.action,
            AuditLog.detail["key"].as_string() == key,
            AuditLog.detail["kind"].as_string() == kind,
        )
    ).first()
    return found is not None


def pending(session: Session, campaign: Campaign, now: datetime) -> bool:
    """Whether anything may be due (read without the lock; `run` decides under it)."""
    plan = plan_of(campaign)
    for period in activity_service.recent_periods(session=session, campaign=campaign, now=now):
        for kind, _at in due_marks(plan, period, now):
            if not noted(session, campaign, period.key, kind):
                return True
    return False


def _claim(session: Session, campaign: Campaign, key: str, user_id: int, kind: str) -> bool:
    """Take the nudge (turn, person, kind); False if it was taken already."""
    exists = session.exec(
        select(Nudge.id).where(
            Nudge.campaign_id == campaign.id,
            Nudge.turn_key == key,
            Nudge.user_id == user_id,
            Nudge.kind == kind,
        )
    ).first()
    if exists is not None:
        return False
    try:
        with session.begin_nested():
            session.add(Nudge(campaign_id=campaign.id, turn_key=key, user_id=user_id, kind=kind))
    except sa.exc.IntegrityError:
        return False
    return True


def run(*, session: Session, campaign: Campaign, now: datetime, mail: MailSettings | None) -> int:
    """Send what is due in `campaign` (the caller holds its lock); returns letters queued."""
    hiatus.note_returns(session=session, campaign=campaign, now=now, mail=mail)
    activity = activity_service.measure(session=session, campaign=campaign, now=now)
    away = hiatus.current(session, campaign, now)
    users = {u.id: u for u in session.exec(select(User).where(col(User.id).in_(
        [r.user_id for r in activity.rows if r.user_id]
    )))}  # fmt: skip
    characters = {
        c.id: c for c in session.exec(select(Character).where(Character.campaign_id == campaign.id))
    }
    sent = 0
    for index in range(max(0, len(activity.periods) - 2), len(activity.periods)):
        period = activity.periods[index]
        due = due_marks(activity.plan, period, now)
        befores = [kind for kind, _ in due if kind != OVERDUE]
        for kind, _at in due:
            if noted(session, campaign, period.key, kind):
                continue
            overdue = kind == OVERDUE
            owing: dict[int, list[Character]] = defaultdict(list)
            for row in activity.rows:
                cell = row.cells[index]
                if row.user_id is None or row.user_id in away or not cell.asked:
                    continue
                if (cell.met is False) if overdue else (cell.met is not True and not cell.excused):
                    owing[row.user_id].append(characters[row.character_id])
            # Only the nearest of several before-nudges due at once is mailed.
            quiet = not overdue and kind != befores[-1]
            count = 0
            for user_id, chars in owing.items():
                if not _claim(session, campaign, period.key, user_id, kind) or quiet:
                    continue
                if mail is not None:
                    letter = alive_mail.queue_nudge(
                        session=session, settings=mail, campaign=campaign,
                        key=f"nudge:{campaign.id}:{period.key}:{user_id}:{kind}",
                        player=users[user_id], characters=chars, due=_due(campaign, period, mail),
                        overdue=overdue, now=now,
                    )  # fmt: skip
                    count += letter is not None
            if overdue:
                count += _overdue_list(session, campaign, activity, index, mail, now)
            sent += count
            line = lines.Nudged(turn=period.number, kind=kind, count=count, key=period.key)
            audit_log.record(session, line=line, actor=None, campaign_id=campaign.id)
    session.flush()
    return sent


def _due(campaign: Campaign, period: activity_service.Period, mail: MailSettings) -> alive_mail.Due:
    todo = "post in a scene you play in" if is_forum(campaign) else "post an entry"
    assert period.end is not None  # due_marks has none without
    url = links.absolute(mail.base_url, period.url)
    return alive_mail.Due(period.label, period.end, todo, url)


def _overdue_list(session, campaign, activity, index, mail, now) -> int:
    """To the referee: who has not posted in the period, and for how many turns in a row."""
    period = activity.periods[index]
    silent = [
        alive_mail.Silent(
            row.name,
            row.player,
            activity_service.missed_in_row(row.cells[: index + 1], activity.periods[: index + 1]),
        )
        for row in activity.rows
        if row.cells[index].met is False
    ]
    if not silent or mail is None:
        return 0
    claimed = [
        _claim(session, campaign, period.key, user.id, OVERDUE_LIST)
        for _membership, user in alive_mail.referees(session, campaign)
    ]
    if not any(claimed):
        return 0
    rows = alive_mail.queue_overdue_list(
        session=session, settings=mail, campaign=campaign,
        key=f"nudge:{campaign.id}:{period.key}:{OVERDUE_LIST}", due=_due(campaign, period, mail),
        silent=silent, now=now,
    )  # fmt: skip
    return len(rows)
