"""Keeping a game alive (issue #30 items 1 and 3): the nudges the schedule sent, and the
players' announced absences.

`Nudge` is the schedule's memory of what it sent: one row per turn, person and kind of
nudge, under a unique key, so two workers (or a retried pass) send each nudge once. The
outbox's dedupe key would also catch a second letter; the row also covers a nudge whose
letter a preference switched off (nothing queued, yet nothing to send again).

`Hiatus` is a player's "away until": no nudges meanwhile, the activity check counts the
turns it overlaps as excused, and the roster and the board say so. Rows stay after the
player is back, so the activity check of past turns still knows who was excused.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _created, _fk, _time


class Nudge(SQLModel, table=True):
    __table_args__ = (sa.UniqueConstraint("campaign_id", "turn_key", "user_id", "kind"),)

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    # "t" and the turn's number in a Noteworthy game; in a forum game (no turns) "w" and
    # the posting window's start: what "once per turn" is keyed by.
    turn_key: str = Field(max_length=40)
    user_id: int = _fk("user.id")
    # "before:48" (hours before the deadline), "overdue" (to the player), "overdue-list"
    # (to the referee).
    kind: str = Field(max_length=40)
    created_at: datetime = _created()


class Hiatus(SQLModel, table=True):
    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    user_id: int = _fk("user.id")
    starts_at: datetime = _time(nullable=False)
    until: datetime = _time(nullable=False)
    note: str = Field(default="", max_length=2000)
    # When the player said they were back before `until` (NULL: not early).
    ended_at: datetime | None = _time()
    # When the referee was told the player is back (by the player's button or the date).
    back_noted_at: datetime | None = _time()
    created_at: datetime = _created()
