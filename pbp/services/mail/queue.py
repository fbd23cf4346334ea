"""One message into the outbox: rendered from `templates/mail/`, headers fixed, written in
the caller's transaction.

Every kind of mail goes through `queue`: a `Letter` says what it is (kind, template, who,
the subject and what the template shows), and `queue` adds what every mail of a campaign
carries (the campaign's name in the subject, its link, List-Id, and for kinds a member
can switch off, the one-click unsubscribe link and header).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import format_datetime, make_msgid
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import links, templating
from pbp.models import Campaign, Membership, OutboxMessage
from pbp.services.mail import reply_tokens
from pbp.services.mail.preferences import (
    PREFERENCE_LABELS,
    PREFERENCE_OF,
    unsubscribe_url,
    wants,
)
from pbp.services.mail.settings import MailSettings

SUBJECT_MAX = 400  # OutboxMessage.subject


def header_text(value: str, limit: int = SUBJECT_MAX) -> str:
    """One line for a header: line breaks and control characters become spaces, so a
    character called "Ada\\r\\nBcc: x" cannot add a header."""
    line = templating.one_line(value)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def render(template: str, **context) -> tuple[str, str]:
    """The plain-text and HTML bodies of `templates/mail/<template>.{txt,html}`."""
    text = templating.render(f"mail/{template}.txt", **context)
    html = templating.render(f"mail/{template}.html", **context)
    return text, html


class Recipient(Protocol):
    # Read-only, so a frozen Guest is a Recipient as a User row is.
    @property
    def email(self) -> str: ...

    @property
    def display_name(self) -> str: ...


@dataclass(frozen=True)
class Guest:
    """Someone with an address and no account yet (an invitee)."""

    email: str
    display_name: str


@dataclass(frozen=True)
class ReplyTo:
    """Where a reply to the mail goes (issue #31 item 3): an entry's notes or a forum
    thread. The mail then carries the member's secret reply address for it."""

    entry_id: int | None = None
    thread_id: int | None = None


@dataclass(frozen=True)
class Letter:
    """One mail to one person, before it is rendered. `dedupe_key` makes queueing it
    idempotent: a retried change queues nothing twice."""

    kind: str
    template: str
    dedupe_key: str
    to: Recipient
    subject: str
    campaign: Campaign | None = None
    membership: Membership | None = None  # whose preferences govern it, if any
    context: Mapping[str, Any] = field(default_factory=dict)
    reply: ReplyTo | None = None  # with `membership`: a reply by mail posts there


def queue(
    *,
    session: Session,
    settings: MailSettings,
    letter: Letter,
    now: datetime,
    send_at: datetime | None = None,
):
    """Render `letter` and write it into the outbox (or return the row already there).
    `send_at`: not sent before then (default: at once)."""
    existing = _by_key(session, letter.dedupe_key)
    if existing is not None:  # nothing to render, and no reply address to make
        return existing
    reply_to = _reply_address(session, settings, letter, now)
    subject, text, html, headers, campaign_id = _rendered(settings, letter, reply_to)
    return queue_message(
        session=session,
        settings=settings,
        kind=letter.kind,
        dedupe_key=letter.dedupe_key,
        recipient=letter.to.email,
        subject=subject,
        text=text,
        html=html,
        campaign_id=campaign_id,
        headers=headers,
        now=now,
        send_at=send_at,
    )


def rewrite_queued(
    *, session: Session, settings: MailSettings, row: OutboxMessage, letter: Letter
) -> bool:
    """Render `letter` again into `row` if no sender has taken it yet; False if one has
    (it is being sent, or was). One conditional UPDATE: a sender's claim and this rewrite
    cannot both win. The Message-ID, Date and headers stay as queued."""
    subject, text, html, _headers, _campaign_id = _rendered(settings, letter)
    done = cast(
        "sa.CursorResult[Any]",
        session.execute(
            sa.update(OutboxMessage)
            .where(col(OutboxMessage.id) == row.id, col(OutboxMessage.status) == "queued")
            .values(subject=header_text(subject), body_text=text, body_html=html)
            .execution_options(synchronize_session=False)
        ),
    )
    session.expire(row)
    return done.rowcount == 1


def _reply_address(
    session: Session, settings: MailSettings, letter: Letter, now: datetime
) -> str | None:
    if letter.reply is None or letter.membership is None:
        return None
    return reply_tokens.reply_address(
        session=session,
        settings=settings,
        membership=letter.membership,
        entry_id=letter.reply.entry_id,
        thread_id=letter.reply.thread_id,
        now=now,
    )


def _rendered(settings: MailSettings, letter: Letter, reply_to: str | None = None):
    """(subject, text, html, headers, campaign id) of `letter`; `reply_to`, the member's
    reply address, goes into the Reply-To header and the text (which says what it does)."""
    context = {
        "user": letter.to,
        "base_url": settings.base_url,
        "reply_address": reply_to,
        **letter.context,
    }
    subject, headers, campaign_id = letter.subject, {}, None
    if letter.campaign is not None:
        campaign = letter.campaign
        preference = PREFERENCE_OF.get(letter.kind)
        unsubscribe = None
        if letter.membership is not None and preference:
            unsubscribe = unsubscribe_url(settings, letter.membership, preference)
        context |= {
            "campaign": campaign,
            "campaign_url": links.absolute(settings.base_url, links.campaign(campaign.slug)),
            "unsubscribe_url": unsubscribe,
            "unsubscribe_label": PREFERENCE_LABELS.get(preference or "", ""),
        }
        subject = f"[{campaign.name}] {subject}"
        headers = _list_headers(settings, campaign, unsubscribe)
        campaign_id = campaign.id
    if reply_to:
        headers = {**headers, "Reply-To": reply_to}
    text, html = render(letter.template, **context)
    return subject, text, html, headers, campaign_id


def queue_letter(
    *, session: Session, settings: MailSettings, letter: Letter, now: datetime
) -> OutboxMessage | None:
    """A notification on every channel its member chose for its kind (issue #31 item 1):
    the mail if they want it by mail, a push to each of their devices if they want it
    pushed, all in this transaction and under the letter's dedupe key, so in its batch.
    Returns the mail, or None when they want this kind pushed only. A letter with no
    member or kind of preference is mail only."""
    from pbp.services.mail import push  # push renders through this module

    preference = push.PUSH_PREFERENCE_OF.get(letter.kind)
    if letter.membership is None or preference is None:
        return queue(session=session, settings=settings, letter=letter, now=now)
    if wants(letter.membership, preference, channel="push"):
        push.queue_pushes(session=session, settings=settings, letter=letter, now=now)
    if not wants(letter.membership, preference):
        return None
    return queue(session=session, settings=settings, letter=letter, now=now)


def queue_all(
    *, session: Session, settings: MailSettings, letters: Iterable[Letter], now: datetime
) -> list[OutboxMessage]:
    """Each letter on its member's channels (`queue_letter`); returns the mails."""
    rows = [
        queue_letter(session=session, settings=settings, letter=letter, now=now)
        for letter in letters
    ]
    return [row for row in rows if row is not None]


def _list_headers(
    settings: MailSettings, campaign: Campaign, unsubscribe: str | None
) -> dict[str, str]:
    host = urlsplit(settings.base_url).hostname or settings.domain
    headers = {"List-Id": f"<{campaign.slug}.{host}>"}
    if unsubscribe:
        # RFC 8058: a one-click POST to this URL unsubscribes, no confirmation page.
        headers["List-Unsubscribe"] = f"<{unsubscribe}>"
        headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    return headers


def _by_key(session: Session, dedupe_key: str) -> OutboxMessage | None:
    return session.exec(select(OutboxMessage).where(OutboxMessage.dedupe_key == dedupe_key)).first()


def queue_message(
    *,
    session: Session,
    settings: MailSettings,
    kind: str,
    dedupe_key: str,
    recipient: str,
    subject: str,
    text: str,
    html: str | None = None,
    campaign_id: int | None = None,
    headers: Mapping[str, str] | None = None,
    now: datetime,
    send_at: datetime | None = None,
    channel: str = "mail",
    push_subscription_id: int | None = None,
    chat_webhook_id: int | None = None,
) -> OutboxMessage:
    """Write one message into the caller's transaction, or return the one already queued
    under `dedupe_key` (a retried change queues nothing twice). The Message-ID and Date are
    fixed here, so every delivery attempt sends the same message."""
    existing = _by_key(session, dedupe_key)
    if existing is not None:
        return existing
    fixed = {
        "From": settings.mail_from,
        "Date": format_datetime(now),
        "Auto-Submitted": "auto-generated",
    }
    fixed.update({name: header_text(value, 2000) for name, value in (headers or {}).items()})
    row = OutboxMessage(
        campaign_id=campaign_id,
        kind=kind,
        dedupe_key=dedupe_key,
        message_id=make_msgid(idstring=kind, domain=settings.domain),
        recipient=recipient,
        subject=header_text(subject),
        body_text=text,
        body_html=html,
        headers=fixed,
        status="queued",
        next_attempt_at=send_at or now,
        created_at=now,
        channel=channel,
        push_subscription_id=push_subscription_id,
        chat_webhook_id=chat_webhook_id,
    )
    try:
        with session.begin_nested():
            session.add(row)
    except sa.exc.IntegrityError:
        # Another transaction queued the same change between our check and our insert.
        existing = _by_key(session, dedupe_key)
        if existing is None:
            raise
        return existing
    return row
