"""Issue #31: a chat channel's webhook, and a device to push to, as the API and the
pages take them."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from pbp.inputs import Body, Id, Text


class ChatWebhookIn(Body):
    """A chat channel that receives the campaign's (or one scene's) public events."""

    names: ClassVar[dict[str, str]] = {"url": "the webhook's address", "label": "a label"}
    needed: ClassVar[dict[str, str]] = {"url": "give the webhook's address"}
    wrong: ClassVar[dict[str, str]] = {"platform": "a chat channel is on Discord, Slack or Matrix"}

    platform: Literal["discord", "slack", "matrix"] = Field(
        description="Discord, Slack, or Matrix (a hookshot generic webhook)."
    )
    url: Text = Field(min_length=1, max_length=2000, description="The webhook's address.")
    label: Text = Field(default="", max_length=100, description="What the channel is.")
    thread_id: Id | None = Field(
        default=None, description="A forum scene: only its posts go there. None: the campaign."
    )


class PushDeviceIn(Body):
    """What the browser's `PushManager.subscribe()` gave (its `toJSON()`), and a name."""

    names: ClassVar[dict[str, str]] = {"endpoint": "the push endpoint"}

    endpoint: Text = Field(min_length=1, max_length=2000, description="The push endpoint.")
    p256dh: Text = Field(min_length=1, max_length=200, description="keys.p256dh (base64url).")
    auth: Text = Field(min_length=1, max_length=100, description="keys.auth (base64url).")
    label: Text = Field(default="", max_length=200, description="Which device this is.")


class PushPreferences(Body):
    """Which kinds of notification are pushed to the member's devices (each apart from
    its mail). Left out: unchanged."""

    events: bool | None = None
    digest: bool | None = None
    notes_on_mine: bool | None = None
    notes_as_mine: bool | None = None
    challenges: bool | None = None
    forum: bool | None = None
