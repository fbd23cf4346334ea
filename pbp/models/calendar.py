"""Each person's secret calendar address (issue #30 item 4): `/calendar/<secret>.ics`.

One row per person at most: making a new address replaces the secret of the row (the old
address stops working at once), revoking deletes the row. The secret is kept as it is,
not hashed as API tokens are: the calendar page shows the address again whenever its
owner opens it (to subscribe a second device), and what it opens is only public facts of
their campaigns (campaign names, turn numbers, deadlines, links), never a login.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _created, _fk


class CalendarFeed(SQLModel, table=True):
    __tablename__ = "calendar_feed"

    id: RowId = Field(default=None, primary_key=True)
    # One address per person: a second "make" replaces the first.
    user_id: int = _fk("user.id", unique=True)
    # secrets.token_urlsafe(32): 256 random bits, 43 URL-safe characters.
    secret: str = Field(max_length=64, unique=True)
    created_at: datetime = _created()
