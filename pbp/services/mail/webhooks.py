"""Issue #31 item 2: the referee's (or GM's) chat channels -- add a Discord, Slack or
Matrix webhook for the campaign or one scene, list them with their health, remove one.

The address is checked like every address pbp will fetch (http or https, not on a
private network: `adapters.ssrf.check_url`), and again by the fetcher at each post. It is
a credential -- whoever has it can post in the channel -- so pages and the API show only
its host, and the audit log does not keep it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlmodel import Session, col, select

from adapters.errors import FeedError
from adapters.ssrf import check_url
from pbp.db import release
from pbp.errors import NotFound, UserError
from pbp.models import CHAT_PLATFORMS, Campaign, ChatWebhook, User
from pbp.models.forum import Thread
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns

MAX_WEBHOOKS = 10  # per campaign, scenes included
PLATFORM_NAMES = {"discord": "Discord", "slack": "Slack", "matrix": "Matrix"}


@dataclass(frozen=True)
class WebhookView:
    """A webhook as pages and the API show it: never its address, only its host."""

    id: int
    platform: str
    host: str
    label: str
    thread_id: int | None
    failing: bool
    last_error: str | None
    retry_at: datetime | None
    last_sent_at: datetime | None


def host_of(url: str) -> str:
    return urlsplit(url).hostname or "?"


def view(hook: ChatWebhook) -> WebhookView:
    return WebhookView(
        id=hook.id,
        platform=hook.platform,
        host=host_of(hook.url),
        label=hook.label,
        thread_id=hook.thread_id,
        failing=hook.failures > 0,
        last_error=hook.last_error,
        retry_at=hook.retry_at,
        last_sent_at=hook.last_sent_at,
    )


def list_webhooks(*, session: Session, campaign: Campaign) -> list[WebhookView]:
    rows = session.exec(
        select(ChatWebhook)
        .where(ChatWebhook.campaign_id == campaign.id)
        .order_by(col(ChatWebhook.id))
    )
    return [view(hook) for hook in rows]


def add_webhook(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    platform: str,
    url: str,
    label: str = "",
    thread_id: int | None = None,
    allow_private: bool = False,
    now: datetime,
) -> WebhookView:
    """Post the campaign's (or the scene's) public events to a chat channel from now on."""
    campaigns.require_referee(
        session=session, campaign=campaign, user=actor, doing="add a chat channel"
    )
    if platform not in CHAT_PLATFORMS:
        raise UserError("a chat channel is on Discord, Slack or Matrix")
    url = (url or "").strip()
    if not url or len(url) > 2000:
        raise UserError("give the webhook's address (at most 2,000 characters)")
    if urlsplit(url).scheme not in ("http", "https"):
        raise UserError("a webhook's address starts with https://")
    release(session)  # resolving the host is network I/O: no transaction held open
    try:
        check_url(url, allow_private=allow_private)
    except FeedError as exc:  # blocked, malformed, or a host that does not resolve
        raise UserError(exc.message) from exc
    # The checks that guard the write, after the release (they cannot go stale).
    campaigns.require_referee(
        session=session, campaign=campaign, user=actor, doing="add a chat channel"
    )
    if thread_id is not None:
        thread = session.get(Thread, thread_id)
        if thread is None or thread.campaign_id != campaign.id:
            raise NotFound(f"{campaign.name} has no such scene")
    count = len(list_webhooks(session=session, campaign=campaign))
    if count >= MAX_WEBHOOKS:
        raise UserError(f"a campaign has at most {MAX_WEBHOOKS} chat channels; remove one first")
    hook = ChatWebhook(
        campaign_id=campaign.id,
        thread_id=thread_id,
        platform=platform,
        url=url,
        label=(label or "").strip()[:100],
        created_by=actor.id if actor else None,
        created_at=now,
    )
    session.add(hook)
    session.flush()
    line = lines.ChatWebhookAdded(
        webhook_id=hook.id, platform=platform, host=host_of(url), thread_id=thread_id
    )
    audit_log.record(session, line=line, actor=actor, campaign_id=campaign.id, now=now)
    return view(hook)


def remove_webhook(
    *, session: Session, campaign: Campaign, actor: User | None, webhook_id: int, now: datetime
) -> None:
    """Stop posting to a chat channel; what it had not been sent yet is dropped."""
    campaigns.require_referee(
        session=session, campaign=campaign, user=actor, doing="remove a chat channel"
    )
    hook = session.get(ChatWebhook, webhook_id)
    if hook is None or hook.campaign_id != campaign.id:
        raise NotFound(f"{campaign.name} has no such chat channel")
    line = lines.ChatWebhookRemoved(
        webhook_id=hook.id, platform=hook.platform, host=host_of(hook.url)
    )
    session.delete(hook)
    audit_log.record(session, line=line, actor=actor, campaign_id=campaign.id, now=now)
    session.flush()
