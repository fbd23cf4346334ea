"""Chat channels and push devices (blueprint `channels`, issue #31 items 1 and 2).

    GET  /c/<slug>/referee/chat                  the campaign's chat channels; add one
    POST /c/<slug>/referee/chat                  add a webhook (Discord, Slack, Matrix)
    POST /c/<slug>/referee/chat/<id>/remove      remove one
    GET  /account/devices                        your devices notified by push
    POST /account/devices                        "notify me on this device" (push.js fills it)
    POST /account/devices/<id>/remove            stop notifying one
    GET  /sw.js                                  the service worker, scoped to the whole site

The webhook's address is a credential: no page shows it, only its host.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, current_app, render_template, url_for

from pbp.inputs.channels import ChatWebhookIn, PushDeviceIn
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.forum import threads as forum_threads
from pbp.services.forum import visibility
from pbp.services.mail import push, webhooks
from pbp.services.mail.push_send import application_server_key, vapid_key
from pbp.web.access import current_account, login_required, require_referee, signed_in_account
from pbp.web.actions import Act, action, refused
from pbp.web.forms import parsed

bp = Blueprint("channels", __name__)

NO_STORE = {"Cache-Control": "no-store"}


def push_key() -> str:
    return application_server_key(vapid_key(current_app.instance_path))


@login_required
def _chat_page(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    require_referee(campaign)
    scenes = []
    if campaign.ruleset in visibility.FORUM_RULESETS:
        gm = visibility.viewer_for(session=session, campaign=campaign, user=current_account())
        scenes = forum_threads.list_threads(session=session, campaign=campaign, viewer=gm)
    return (
        render_template(
            "referee/chat.html",
            campaign=campaign,
            hooks=webhooks.list_webhooks(session=session, campaign=campaign),
            scenes=scenes,
            refused_add=refused("channels.add_webhook"),
            platforms=webhooks.PLATFORM_NAMES,
        ),
        200,
        NO_STORE,
    )


@action(bp, "/c/<slug>/referee/chat", role="referee", creates=True, page=_chat_page, get=True)
def add_webhook(act: Act, slug: str):
    typed = {name: act.text(name) for name in ("platform", "url", "label", "thread_id")}
    hook = parsed(ChatWebhookIn, typed)
    added = webhooks.add_webhook(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        platform=hook.platform,
        url=hook.url,
        label=hook.label,
        thread_id=hook.thread_id,
        allow_private=bool(current_app.config.get("PBP_ALLOW_PRIVATE_FEEDS")),
        now=act.now,
    )
    message = f"Public events now go to the {webhooks.PLATFORM_NAMES[added.platform]} channel."
    return act.done(url_for("channels.add_webhook", slug=slug), message)


@action(bp, "/c/<slug>/referee/chat/<int:webhook_id>/remove", role="referee", page=_chat_page)
def remove_webhook(act: Act, slug: str, webhook_id: int):
    webhooks.remove_webhook(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        webhook_id=webhook_id,
        now=act.now,
    )
    return act.done(url_for("channels.add_webhook", slug=slug), "Chat channel removed.")


@login_required
def _devices_page():
    user = signed_in_account()
    return (
        render_template(
            "account/devices.html",
            devices=push.devices(session=get_session(), user_id=user.id),
            push_key=push_key(),
        ),
        200,
        NO_STORE,
    )


@action(bp, "/account/devices", role="user", creates=True, page=_devices_page, get=True)
def add_device(act: Act):
    typed = {name: act.text(name) for name in ("endpoint", "p256dh", "auth", "label")}
    device = parsed(PushDeviceIn, typed)
    push.subscribe(
        session=act.session,
        user=act.account,
        endpoint=device.endpoint,
        p256dh=device.p256dh,
        auth=device.auth,
        label=device.label,
        now=act.now,
    )
    back = _back_to(act.text("campaign"))
    return act.done(back, "This device will be notified of what you chose to have pushed.")


def _back_to(slug: str) -> str:
    """The Notifications page the button was pressed on, else the devices page."""
    if slug and slug.replace("-", "").isalnum():
        return url_for("mail.preferences", slug=slug)
    return url_for("channels.add_device")


@action(bp, "/account/devices/<int:device_id>/remove", role="user", page=_devices_page)
def remove_device(act: Act, device_id: int):
    push.unsubscribe(session=act.session, user=act.account, subscription_id=device_id)
    return act.done(url_for("channels.add_device"), "That device is no longer notified.")


@bp.get("/sw.js")
def service_worker():
    """Served from the root, so the worker's scope covers every page of the site."""
    script = (Path(current_app.static_folder or "static") / "push-sw.js").read_bytes()
    return (
        script,
        200,
        {
            "Content-Type": "text/javascript; charset=utf-8",
            "Service-Worker-Allowed": "/",
            "Cache-Control": "no-cache",  # a new worker reaches browsers soon
        },
    )
