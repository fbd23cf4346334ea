"""WebSub (W3C) subscriptions: a hub pushes a blog's feed to pbp as soon as it changes.

One row per (hub, topic) pbp asked for. The row outlives a change of the blog's feed (and
the blog itself: `blog_id` becomes NULL), so pbp can still tell the hub to stop. The
`secret` signs every delivery (HMAC in `X-Hub-Signature`); it never leaves pbp except in
the subscription request to the hub. The `callback_token` is the unguessable last part of
the callback address (`/websub/<id>/<token>`): only the hub learns it, so only the hub can
answer for the subscription (issue #28 item 2).

The push counters bound what one blog's hub can send (issue #28 item 4): deliveries in the
current minute, and the bytes and new entries of the UTC day (`usage_day`), with the
deliveries refused that day and why the last one was, for the referee's dashboard.

States: `wanted` (to be requested), `pending` (requested, the hub has not verified it
yet), `active` (verified; pushed until `expires_at`), `unsubscribing` (to be cancelled),
`unsubscribe_pending` (cancellation requested), `ended`, `denied` (the hub refused).
"""

from __future__ import annotations

import secrets
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk, _time

WEBSUB_STATES = (
    "wanted",
    "pending",
    "active",
    "unsubscribing",
    "unsubscribe_pending",
    "ended",
    "denied",
)


def callback_token() -> str:
    """256 random bits, URL-safe (43 characters)."""
    return secrets.token_urlsafe(32)


def _count() -> Any:
    return Field(default=0, sa_type=sa.BigInteger, sa_column_kwargs={"server_default": "0"})


class WebSubSubscription(SQLModel, table=True):
    __tablename__ = "websub_subscription"
    __table_args__ = (_choices("state", WEBSUB_STATES),)

    id: RowId = Field(default=None, primary_key=True)
    blog_id: int | None = _fk("blog.id", nullable=True, ondelete="SET NULL")
    hub_url: str = Field(max_length=2000)
    topic_url: str = Field(max_length=2000)
    secret: str = Field(max_length=64)
    callback_token: str = Field(default_factory=callback_token, max_length=64)
    state: str = Field(default="wanted", max_length=24, index=True)
    # When the maintenance job next sends this row's request (subscribe, renew, cancel).
    next_attempt_at: datetime | None = _time(index=True)
    requested_at: datetime | None = _time()
    verified_at: datetime | None = _time()
    expires_at: datetime | None = _time()  # the lease the hub granted ends
    renew_at: datetime | None = _time()  # a while before expires_at
    last_delivery_at: datetime | None = _time()
    failure_count: int = Field(default=0)
    last_error: str | None = Field(default=None, max_length=2000)
    # The push counters (pbp.services.noteworthy.websub.admit and DayBudget).
    minute_started_at: datetime | None = _time()
    minute_deliveries: int = _count()
    usage_day: date | None = Field(default=None)
    day_bytes: int = _count()
    day_new_entries: int = _count()
    day_refused: int = _count()
    last_refused_at: datetime | None = _time()
    last_refusal: str | None = Field(default=None, max_length=300)
    created_at: datetime = _created()
