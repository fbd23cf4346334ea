"""Webmention (W3C), issue #31 item 4: mentions received for pbp's entry pages, verified in
a job, and mentions pbp sends for the links in built-in blog entries.

A received mention (`ReceivedMention`) is stored as sent, `pending`, and verified later by
the scheduler (pbp.services.noteworthy.webmentions): the source is fetched through the
SSRF-guarded fetcher and must link to the target. A verified one is a note on the entry
(`note_id`). A mention sent again is verified again (the source changed, or is gone).

A sent mention (`SentMention`) is queued in the transaction that stores the entry, one per
link, and sent by the scheduler: the target's endpoint discovered, then the POST.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk, _time

RECEIVED_STATES = ("pending", "verified", "refused")
SENT_STATES = ("queued", "sent", "no_endpoint", "failed")
MENTION_URL = 2000


class ReceivedMention(SQLModel, table=True):
    __tablename__ = "webmention_received"
    __table_args__ = (
        _choices("status", RECEIVED_STATES),
        sa.UniqueConstraint("entry_id", "source", name="uq_webmention_received_entry_source"),
    )

    id: RowId = Field(default=None, primary_key=True)
    entry_id: int = _fk("entry.id")
    source: str = Field(max_length=MENTION_URL)
    target: str = Field(max_length=MENTION_URL)
    status: str = Field(default="pending", max_length=16, index=True)
    reason: str | None = Field(default=None, max_length=500)
    note_id: int | None = _fk("note.id", nullable=True, ondelete="SET NULL")
    received_at: datetime = _created()
    verified_at: datetime | None = _time()


class SentMention(SQLModel, table=True):
    __tablename__ = "webmention_sent"
    __table_args__ = (
        _choices("status", SENT_STATES),
        sa.UniqueConstraint("entry_id", "target", name="uq_webmention_sent_entry_target"),
    )

    id: RowId = Field(default=None, primary_key=True)
    entry_id: int = _fk("entry.id")
    target: str = Field(max_length=MENTION_URL)
    status: str = Field(default="queued", max_length=16, index=True)
    endpoint: str | None = Field(default=None, max_length=MENTION_URL)
    reason: str | None = Field(default=None, max_length=500)
    attempts: int = Field(default=0)
    created_at: datetime = _created()
    sent_at: datetime | None = _time()
