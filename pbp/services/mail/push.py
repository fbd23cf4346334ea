"""Issue #31 item 1: Web Push, the queueing side -- a member's devices, and one push per
device for each notification they chose to have pushed.

A push says what the mail says, to the same person: its subject as the title, the mail's
text without greeting or footer as the body (cut to PUSH_BODY characters), and the page
to open. It is an outbox row ("push") keyed under the mail's dedupe key, so it is in the
mail's batch and leaves with it (`send.send_pending`); `push_send` encrypts and delivers.
The mail's secrecy is the push's: both are made from the one `Letter` for one member.
"""

from __future__ import annotations

import json
from datetime import datetime
from urllib.parse import urlsplit

from sqlmodel import Session, col, select

from pbp import links
from pbp.errors import NotFound, UserError
from pbp.models import PushSubscription, User
from pbp.services.mail.preferences import PREFERENCE_OF
from pbp.services.mail.queue import Letter, _rendered, header_text, queue_message
from pbp.services.mail.settings import MailSettings

PUSH_BODY = 600  # characters of the mail's text a push carries (payloads stop at 4 KiB)
MAX_DEVICES = 20  # subscriptions per account
# Every kind of notification that can mail can push: the mail's kinds, and forum posts
# (whose mail a member switches off with "forum").
PUSH_PREFERENCE_OF = {**PREFERENCE_OF, "forum_post": "forum"}
# Where a push opens, in the order a letter's context is searched for it.
_LINKS = ("turn_url", "entry_page", "url", "board_url", "write_url", "campaign_url")


def payload(settings: MailSettings, letter: Letter) -> str:
    """The push's JSON: title, body and the page to open (what the service worker shows)."""
    subject, text, _html, _headers, _campaign_id = _rendered(settings, letter)
    lines = text.splitlines()
    if "-- " in lines:  # the mail's footer (signature separator) and what follows
        lines = lines[: lines.index("-- ")]
    if lines and lines[0].rstrip().endswith(","):  # the greeting
        lines = lines[1:]
    body = " ".join(" ".join(lines).split())
    if len(body) > PUSH_BODY:
        body = body[: PUSH_BODY - 1] + "…"
    context = {"base_url": settings.base_url, **letter.context}
    url = next((context[k] for k in _LINKS if isinstance(context.get(k), str)), None)
    if url is None and letter.campaign is not None:
        url = links.absolute(settings.base_url, links.campaign(letter.campaign.slug))
    return json.dumps({"title": header_text(subject), "body": body, "url": url or ""})


def devices(*, session: Session, user_id: int) -> list[PushSubscription]:
    return list(
        session.exec(
            select(PushSubscription)
            .where(PushSubscription.user_id == user_id)
            .order_by(col(PushSubscription.id))
        )
    )


def queue_pushes(
    *, session: Session, settings: MailSettings, letter: Letter, now: datetime
) -> list:
    """One push row per device of the letter's member, in the caller's transaction."""
    assert letter.membership is not None  # queue_letter checks
    subscriptions = devices(session=session, user_id=letter.membership.user_id)
    if not subscriptions:
        return []
    data = payload(settings, letter)
    title = json.loads(data)["title"]
    campaign_id = letter.campaign.id if letter.campaign is not None else None
    return [
        queue_message(
            session=session,
            settings=settings,
            kind=letter.kind,
            dedupe_key=f"{letter.dedupe_key}:push:{sub.id}",
            recipient=letter.to.email,  # whose it is: the secrecy tests read it as theirs
            subject=title,
            text=data,
            campaign_id=campaign_id,
            now=now,
            channel="push",
            push_subscription_id=sub.id,
        )
        for sub in subscriptions
    ]


# -- the member's devices ---------------------------------------------------------------


def subscribe(
    *,
    session: Session,
    user: User,
    endpoint: str,
    p256dh: str,
    auth: str,
    label: str = "",
    now: datetime,
) -> PushSubscription:
    """ "Notify me on this device": keep what the browser's `PushManager.subscribe()` gave.
    The same endpoint again updates its keys (a browser renews them); an endpoint is one
    device's, so one that belonged to another account moves to this one."""
    endpoint = endpoint.strip()
    parts = urlsplit(endpoint)
    # Browsers give https; the SSRF guard, not this check, keeps pushes off private hosts.
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError("a push subscription's endpoint is an https:// address")
    if not p256dh.strip() or not auth.strip():
        raise UserError("a push subscription needs the browser's keys (p256dh and auth)")
    row = session.exec(
        select(PushSubscription).where(PushSubscription.endpoint == endpoint)
    ).first()
    if row is None:
        if len(devices(session=session, user_id=user.id)) >= MAX_DEVICES:
            raise UserError(f"at most {MAX_DEVICES} devices can be notified; remove one first")
        row = PushSubscription(user_id=user.id, endpoint=endpoint, p256dh="", auth="")
        row.created_at = now
    row.user_id, row.p256dh, row.auth = user.id, p256dh.strip(), auth.strip()
    row.label = (label or "").strip()[:200]
    session.add(row)
    session.flush()
    return row


def unsubscribe(*, session: Session, user: User, subscription_id: int) -> None:
    """Stop notifying one of the member's devices (their pushes not yet sent go too)."""
    row = session.get(PushSubscription, subscription_id)
    if row is None or row.user_id != user.id:
        raise NotFound("you have no such device")
    session.delete(row)
    session.flush()
