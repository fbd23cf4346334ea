"""How much one blog's WebSub hub may push (issue #28 item 4).

pbp hands each subscription's secret to the hub the blog's feed names, and a player may
name a hub of their own: their deliveries are then validly signed, at any rate and size.
So every blog is bounded, whoever its hub is:
- deliveries per subscription per minute (`PBP_WEBSUB_DELIVERIES_PER_MINUTE`), and the
  bytes a blog's deliveries bring in a UTC day (`PBP_WEBSUB_BYTES_PER_DAY`): `admit`, before
  a delivery is parsed; a refused one gets 429 and a Retry-After, and is read by the next
  poll if it was real;
- new entries per delivery and per day (`PBP_WEBSUB_ENTRIES_PER_DELIVERY`,
  `PBP_WEBSUB_ENTRIES_PER_DAY`): `DayBudget`, in the transaction that stores them; the rest
  of the delivery's new entries are not stored.
Every refusal is counted on the subscription and shown on the referee's roster; the first
of a blog's day also goes into the campaign's audit log.

A poll is not bounded here: it reads a feed at most every few minutes, whoever pushes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbp.db import writing
from pbp.models import Blog, Character, WebSubSubscription
from pbp.services import audit_actions as lines
from pbp.services import audit_log

log = logging.getLogger("pbp.websub")

MiB = 1024 * 1024
MINUTE = timedelta(minutes=1)
Sub = WebSubSubscription


@dataclass(frozen=True)
class PushLimits:
    """The bounds, from pbp.config (documented in docs/operating.md, Configuration)."""

    deliveries_per_minute: int = 6
    entries_per_delivery: int = 50
    entries_per_day: int = 200
    bytes_per_day: int = 10 * MiB

    @classmethod
    def from_config(cls, config: Mapping) -> PushLimits:
        default = cls()
        return cls(
            deliveries_per_minute=int(
                config.get("PBP_WEBSUB_DELIVERIES_PER_MINUTE", default.deliveries_per_minute)
            ),
            entries_per_delivery=int(
                config.get("PBP_WEBSUB_ENTRIES_PER_DELIVERY", default.entries_per_delivery)
            ),
            entries_per_day=int(config.get("PBP_WEBSUB_ENTRIES_PER_DAY", default.entries_per_day)),
            bytes_per_day=int(config.get("PBP_WEBSUB_BYTES_PER_DAY", default.bytes_per_day)),
        )


@dataclass(frozen=True)
class Refusal:
    """Why a delivery is refused, and in how many seconds the hub may try again (None: the
    subscription is not pushed any more, nothing to retry)."""

    reason: str
    retry_after: int | None = None


def day_of(now: datetime) -> date:
    return now.astimezone(UTC).date()


def _locked(session: Session, blog_id: int) -> list[WebSubSubscription]:
    """The blog's subscriptions, locked until the commit (PostgreSQL; SQLite's writer
    transaction holds the whole database): deliveries to one blog are counted one at a
    time."""
    return list(
        session.exec(
            select(Sub).where(Sub.blog_id == blog_id).order_by(col(Sub.id)).with_for_update()
        )
    )


def _roll(row: WebSubSubscription, today: date) -> None:
    """A new UTC day starts the day's counters again."""
    if row.usage_day != today:
        row.usage_day, row.day_bytes, row.day_new_entries, row.day_refused = today, 0, 0, 0


def _day_total(rows: list[WebSubSubscription], today: date, counter: str) -> int:
    # Summed over the blog's subscriptions: a player who names another hub gets a new
    # subscription, not a new day.
    return sum(getattr(r, counter) for r in rows if r.usage_day == today)


def admit(
    *, engine: Engine, subscription_id: int, blog_id: int, size: int, now: datetime,
    limits: PushLimits,
) -> Refusal | None:  # fmt: skip
    """Count one signed delivery of `size` bytes, or say why it is refused: its
    subscription is no longer pushed, or it is over the minute's deliveries or the blog's
    day of bytes. One short writer transaction, before the body is parsed."""
    today = day_of(now)
    with writing(), Session(engine) as session:
        rows = _locked(session, blog_id)
        row = next((r for r in rows if r.id == subscription_id), None)
        if row is None or row.state != "active":
            return Refusal(f"subscription {row.state if row else 'moved'}")
        for each in rows:
            _roll(each, today)
        if row.minute_started_at is None or now - row.minute_started_at >= MINUTE:
            row.minute_started_at, row.minute_deliveries = now, 0
        refusal = None
        if row.minute_deliveries >= limits.deliveries_per_minute:
            wait = row.minute_started_at + MINUTE - now
            refusal = Refusal(
                f"more than {limits.deliveries_per_minute} deliveries in a minute",
                max(1, int(wait.total_seconds()) + 1),
            )
        elif _day_total(rows, today, "day_bytes") + size > limits.bytes_per_day:
            refusal = Refusal(
                f"more than {limits.bytes_per_day / MiB:.3g} MiB of deliveries in a day",
                _until_tomorrow(now),
            )
        if refusal is None:
            row.minute_deliveries += 1
            row.day_bytes += size
        else:
            refused(session, row, rows, refusal.reason, now)
        session.add_all(rows)
        session.commit()
        return refusal


def _until_tomorrow(now: datetime) -> int:
    tomorrow = datetime.combine(day_of(now) + timedelta(days=1), datetime.min.time(), UTC)
    return max(1, int((tomorrow - now).total_seconds()))


def refused(
    session: Session,
    row: WebSubSubscription,
    rows: list[WebSubSubscription],
    reason: str,
    now: datetime,
) -> None:
    """Count a refusal on the subscription, for the roster; the blog's first of the day is
    written to the campaign's audit log too (once a day: a flood of refusals must not
    flood the log)."""
    first_today = _day_total(rows, day_of(now), "day_refused") == 0
    row.day_refused += 1
    row.last_refused_at, row.last_refusal = now, reason[:300]
    log.warning("websub %s: delivery refused: %s", row.id, reason)
    if not first_today or row.blog_id is None:
        return
    campaign_id = session.exec(
        select(Character.campaign_id)
        .join(Blog, col(Blog.character_id) == Character.id)
        .where(Blog.id == row.blog_id)
    ).first()
    if campaign_id is not None:
        refused = lines.WebSubRefused(row.blog_id, reason=reason)
        audit_log.record(session, line=refused, actor=None, campaign_id=campaign_id)


@dataclass
class DayBudget:
    """The new entries one admitted delivery may store: at most `entries_per_delivery`,
    and what is left of the blog's day. Used by polling.store_pushed inside the transaction
    that stores the entries, so two deliveries cannot both spend the same rest."""

    subscription_id: int
    blog_id: int
    limits: PushLimits
    now: datetime
    _rows: list[WebSubSubscription] | None = None
    _reason: str = ""

    def allowance(self, session: Session) -> int:
        today = day_of(self.now)
        self._rows = _locked(session, self.blog_id)
        left = self.limits.entries_per_day - _day_total(self._rows, today, "day_new_entries")
        if left < self.limits.entries_per_delivery:
            self._reason = f"more than {self.limits.entries_per_day} new entries in a day"
        else:
            self._reason = f"more than {self.limits.entries_per_delivery} new entries at once"
        return max(0, min(left, self.limits.entries_per_delivery))

    def spend(self, session: Session, *, new_entries: int, refused_entries: int) -> None:
        rows = self._rows if self._rows is not None else _locked(session, self.blog_id)
        row = next((r for r in rows if r.id == self.subscription_id), None)
        if row is None:
            return
        _roll(row, day_of(self.now))
        row.day_new_entries += new_entries
        if refused_entries:
            entries = "entry" if refused_entries == 1 else "entries"
            why = f"{refused_entries} new {entries} not stored: {self._reason}"
            refused(session, row, rows, why, self.now)
        session.add(row)
