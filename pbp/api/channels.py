"""Issue #31 items 1 and 2, the API twins of the pages: a campaign's chat channels (the
referee's), and the caller's own devices to push to and what is pushed to them."""

from __future__ import annotations

from datetime import datetime

from flask import current_app
from pydantic import Field

from pbp.api import schemas as s
from pbp.api.registry import Call, operation
from pbp.inputs.channels import ChatWebhookIn, PushDeviceIn, PushPreferences
from pbp.services import campaigns
from pbp.services.mail import preferences as mail_preferences
from pbp.services.mail import push, webhooks
from pbp.services.mail.push_send import application_server_key, vapid_key


class ChatWebhookOut(s.Out):
    """A chat channel as the referee sees it: its host, never its address (a credential)."""

    id: int
    platform: str
    host: str
    label: str
    thread_id: int | None
    failing: bool = Field(description="The last post failed: it backs off and retries.")
    last_error: str | None
    retry_at: datetime | None
    last_sent_at: datetime | None


class ChatWebhooksOut(s.Out):
    webhooks: list[ChatWebhookOut]


class PushDeviceOut(s.Out):
    id: int
    label: str
    created_at: datetime
    last_sent_at: datetime | None


class PushDevicesOut(s.Out):
    application_server_key: str = Field(description="The VAPID public key (base64url).")
    devices: list[PushDeviceOut]


class PushPreferencesOut(s.Out):
    events: bool
    digest: bool
    notes_on_mine: bool
    notes_as_mine: bool
    challenges: bool
    forum: bool


HOOKS = "/campaigns/<slug>/chat-webhooks"


@operation("GET", HOOKS, tag="referee", access="referee", response=ChatWebhooksOut)
def list_chat_webhooks(call: Call, slug: str) -> ChatWebhooksOut:
    """The campaign's chat channels and how their last posts went."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    found = webhooks.list_webhooks(session=call.session, campaign=campaign)
    return ChatWebhooksOut(webhooks=[ChatWebhookOut.model_validate(h) for h in found])


@operation(
    "POST",
    HOOKS,
    tag="referee",
    access="referee",
    body=ChatWebhookIn,
    response=ChatWebhookOut,
    status=201,
)
def add_chat_webhook(call: Call, slug: str) -> ChatWebhookOut:
    """Post the campaign's public events (or one scene's public posts) to a Discord, Slack
    or Matrix channel: new entries, turns opened, closed and resolved, posts for everyone."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    hook = webhooks.add_webhook(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        platform=call.body.platform,
        url=call.body.url,
        label=call.body.label,
        thread_id=call.body.thread_id,
        allow_private=bool(current_app.config.get("PBP_ALLOW_PRIVATE_FEEDS")),
        now=call.now,
    )
    return ChatWebhookOut.model_validate(hook)


@operation(
    "DELETE", HOOKS + "/<int:webhook_id>", tag="referee", access="referee", response=ChatWebhooksOut
)
def remove_chat_webhook(call: Call, slug: str, webhook_id: int) -> ChatWebhooksOut:
    """Stop posting to a chat channel."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    webhooks.remove_webhook(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        webhook_id=webhook_id,
        now=call.now,
    )
    found = webhooks.list_webhooks(session=call.session, campaign=campaign)
    return ChatWebhooksOut(webhooks=[ChatWebhookOut.model_validate(h) for h in found])


def _devices(call: Call) -> PushDevicesOut:
    key = application_server_key(vapid_key(current_app.instance_path))
    rows = push.devices(session=call.session, user_id=call.account.id)
    return PushDevicesOut(
        application_server_key=key, devices=[PushDeviceOut.model_validate(r) for r in rows]
    )


@operation("GET", "/me/push-devices", tag="account", access="user", response=PushDevicesOut)
def list_push_devices(call: Call) -> PushDevicesOut:
    """Your devices that pbp pushes notifications to, and the key a browser subscribes with."""
    return _devices(call)


@operation(
    "POST",
    "/me/push-devices",
    tag="account",
    access="user",
    body=PushDeviceIn,
    response=PushDevicesOut,
    status=201,
)
def add_push_device(call: Call) -> PushDevicesOut:
    """Notify this device: the subscription its browser's PushManager gave."""
    push.subscribe(
        session=call.session,
        user=call.account,
        endpoint=call.body.endpoint,
        p256dh=call.body.p256dh,
        auth=call.body.auth,
        label=call.body.label,
        now=call.now,
    )
    return _devices(call)


@operation(
    "DELETE",
    "/me/push-devices/<int:device_id>",
    tag="account",
    access="user",
    response=PushDevicesOut,
)
def remove_push_device(call: Call, device_id: int) -> PushDevicesOut:
    """Stop notifying one of your devices."""
    push.unsubscribe(session=call.session, user=call.account, subscription_id=device_id)
    return _devices(call)


@operation(
    "GET",
    "/campaigns/<slug>/me/push",
    tag="campaigns",
    access="member",
    response=PushPreferencesOut,
)
def get_push_preferences(call: Call, slug: str) -> PushPreferencesOut:
    """Which kinds of notification from this campaign are pushed to your devices."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    member = campaigns.require_member(session=call.session, campaign=campaign, user=call.user)
    return PushPreferencesOut(**mail_preferences.push_preferences(member))


@operation(
    "PUT",
    "/campaigns/<slug>/me/push",
    tag="campaigns",
    access="member",
    body=PushPreferences,
    response=PushPreferencesOut,
)
def put_push_preferences(call: Call, slug: str) -> PushPreferencesOut:
    """Choose which kinds are pushed (the Notifications page's "push" boxes); each apart
    from its mail. A kind left out is unchanged."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    member = campaigns.require_member(session=call.session, campaign=campaign, user=call.user)
    given = {k: v for k, v in call.body.model_dump().items() if v is not None}
    mail_preferences.save_preferences(
        session=call.session,
        membership=member,
        chosen=[f"push:{k}" for k, on in given.items() if on],
        keys=[f"push:{k}" for k in given],
    )
    return PushPreferencesOut(**mail_preferences.push_preferences(member))
