"""A campaign's settings for keeping the game alive (issue #30): when nudges go, and the
activity rule the referee's activity check measures each character against.

Stored in campaign.settings["alive"]:
  nudge_hours   hours before a deadline a nudge goes, any number (default 48 and 24);
  overdue_hours hours after the deadline the overdue nudge goes (default 0: at the
                deadline); None: no overdue nudge;
  rule_count    Noteworthy: entries each turn (default 1, the rules' "In a turn, you post
                at least one in-character entry"); a forum game: posts each window
                (default 2);
  rule_days     a forum game's window in days (default 7: "two posts a week"). Forum games
                have no turns or deadlines: the windows, counted from the campaign's start,
                are their turns, and a window's end is its deadline.

A campaign from before this had one reminder, cadence["remind_hours"]: until the referee
saves these settings, it is its one nudge before the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session

from pbp.errors import UserError
from pbp.models import Campaign, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns

DEFAULT_NUDGE_HOURS = (48, 24)
MAX_NUDGES = 10
MAX_HOURS = 24 * 14


@dataclass(frozen=True)
class Plan:
    nudge_hours: tuple[int, ...]  # largest first
    overdue_hours: int | None
    rule_count: int
    rule_days: int | None  # None: Noteworthy (the turn is the window)

    @property
    def rule_words(self) -> str:
        if self.rule_days is None:
            return f"{_plural(self.rule_count, 'entry', 'entries')} per turn"
        return f"{_plural(self.rule_count, 'post')} every {_plural(self.rule_days, 'day')}"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def is_forum(campaign: Campaign) -> bool:
    return campaign.ruleset != "noteworthy"


def plan_of(campaign: Campaign) -> Plan:
    settings = campaign.settings or {}
    kept = settings.get("alive") or {}
    forum = is_forum(campaign)
    if "nudge_hours" in kept:
        before = tuple(kept["nudge_hours"])
    elif (settings.get("cadence") or {}).get("remind_hours"):
        before = (int(settings["cadence"]["remind_hours"]),)
    else:
        before = DEFAULT_NUDGE_HOURS
    return Plan(
        nudge_hours=tuple(sorted(set(before), reverse=True)),
        overdue_hours=kept.get("overdue_hours", 0),
        rule_count=int(kept.get("rule_count") or (2 if forum else 1)),
        rule_days=int(kept.get("rule_days") or 7) if forum else None,
    )


def checked(
    campaign: Campaign,
    *,
    nudge_hours: list[int],
    overdue_hours: int | None,
    rule_count: int,
    rule_days: int | None,
) -> dict:
    """The settings as stored, or a UserError saying what is wrong."""
    hours = sorted({int(h) for h in nudge_hours}, reverse=True)
    if len(hours) > MAX_NUDGES:
        raise UserError(f"a campaign sends at most {MAX_NUDGES} nudges before a deadline")
    if any(not 1 <= h <= MAX_HOURS for h in hours):
        raise UserError("a nudge goes between 1 hour and 14 days before the deadline")
    if overdue_hours is not None and not 0 <= overdue_hours <= MAX_HOURS:
        raise UserError("the overdue nudge goes between 0 hours and 14 days after the deadline")
    if not 1 <= rule_count <= 100:
        raise UserError("the activity rule asks for between 1 and 100 entries or posts")
    stored: dict = {"nudge_hours": hours, "overdue_hours": overdue_hours, "rule_count": rule_count}
    if is_forum(campaign):
        days = rule_days or 7
        if not 1 <= days <= 60:
            raise UserError("a forum game's posting window lasts between 1 and 60 days")
        stored["rule_days"] = days
    return stored


def save(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    nudge_hours: list[int],
    overdue_hours: int | None,
    rule_count: int,
    rule_days: int | None = None,
) -> Plan:
    """The referee's settings for nudges and the activity rule."""
    campaigns.require_referee(
        session=session, campaign=campaign, user=actor, doing="change the activity settings"
    )
    stored = checked(
        campaign,
        nudge_hours=nudge_hours,
        overdue_hours=overdue_hours,
        rule_count=rule_count,
        rule_days=rule_days,
    )
    campaign.settings = {**(campaign.settings or {}), "alive": stored}
    session.add(campaign)
    audit_log.record(
        session, line=lines.AliveSettingsChanged(settings=stored), actor=actor,
        campaign_id=campaign.id,
    )  # fmt: skip
    session.flush()
    return plan_of(campaign)


def window_start(campaign: Campaign, plan: Plan, at: datetime) -> datetime:
    """A forum game's posting window holding `at`: windows of `rule_days` from the
    campaign's creation."""
    assert plan.rule_days is not None
    length = timedelta(days=plan.rule_days)
    n = max(0, (at - campaign.created_at) // length)
    return campaign.created_at + n * length
