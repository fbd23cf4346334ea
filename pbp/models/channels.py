"""Issue #31 items 1 and 2: channels beside mail, fed by the same outbox.

`PushSubscription`: one browser or phone a member asked to notify (Web Push, RFC 8030);
the endpoint and keys are the browser's, the row goes when the push service answers 404
or 410. `ChatWebhook`: a chat channel (Discord, Slack or Matrix) the referee or GM posts a
campaign's, or one scene's, public events to. The webhook address is a credential (anyone
who has it may post there): pages show only its host. A failing webhook backs off
(`retry_at`), and its last error shows on the dashboard.

The outbox rows themselves are `OutboxMessage` rows with `channel` "push" or "chat".
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk, _time

OUTBOX_CHANNELS = ("mail", "push", "chat")
CHAT_PLATFORMS = ("discord", "slack", "matrix")


class PushSubscription(SQLModel, table=True):
    """One device's Web Push subscription (what `PushManager.subscribe()` returned)."""

    __tablename__ = "push_subscription"

    id: RowId = Field(default=None, primary_key=True)
    user_id: int = _fk("user.id")
    endpoint: str = Field(max_length=2000, unique=True)
    p256dh: str = Field(max_length=200)  # the browser's ECDH public key (base64url)
    auth: str = Field(max_length=100)  # the browser's auth secret (base64url)
    label: str = Field(default="", max_length=200)  # which device, as the member named it
    created_at: datetime = _created()
    last_sent_at: datetime | None = _time()


class ChatWebhook(SQLModel, table=True):
    """A chat channel that receives a campaign's (or one scene's) public events."""

    __tablename__ = "chat_webhook"
    __table_args__ = (_choices("platform", CHAT_PLATFORMS),)

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    thread_id: int | None = _fk("forum_thread.id", nullable=True)  # one scene only
    platform: str = Field(max_length=16)
    url: str = Field(max_length=2000)
    label: str = Field(default="", max_length=100)
    created_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()
    failures: int = Field(default=0)  # in a row; reset by a success
    retry_at: datetime | None = _time()  # backing off until then
    last_error: str | None = Field(default=None, max_length=500)
    last_sent_at: datetime | None = _time()
