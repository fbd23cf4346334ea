"""Outgoing mail: the transactional outbox."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import OUTBOX_STATUSES, RowId, _choices, _created, _fk, _json, _time
from pbp.models.channels import OUTBOX_CHANNELS


class OutboxMessage(SQLModel, table=True):
    """One email to one recipient, written in the same transaction as the change it
    announces; `dedupe_key` makes a retried change queue nothing twice."""

    __table_args__ = (_choices("status", OUTBOX_STATUSES), _choices("channel", OUTBOX_CHANNELS))

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int | None = _fk("campaign.id", nullable=True)
    kind: str = Field(max_length=40)
    dedupe_key: str = Field(max_length=200, unique=True)
    message_id: str = Field(max_length=300, unique=True)
    recipient: str = Field(max_length=320)
    subject: str = Field(max_length=400)
    body_text: str = Field(sa_type=sa.Text)
    body_html: str | None = Field(default=None, sa_type=sa.Text)
    headers: dict = _json()
    status: str = Field(default="queued", max_length=16, index=True)
    attempts: int = Field(default=0)
    next_attempt_at: datetime | None = _time()
    last_error: str | None = Field(default=None, max_length=2000)
    created_at: datetime = _created()
    sent_at: datetime | None = _time()
    # Issue #31: the same outbox carries pushes and chat posts, in the same batches.
    channel: str = Field(default="mail", max_length=8, index=True)
    push_subscription_id: int | None = _fk(
        "push_subscription.id", nullable=True, ondelete="SET NULL"
    )
    chat_webhook_id: int | None = _fk("chat_webhook.id", nullable=True, ondelete="SET NULL")
