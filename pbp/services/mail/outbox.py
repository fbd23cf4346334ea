"""Outgoing mail: the transactional outbox, and the names the rest of pbp calls it by.

Every message is an `OutboxMessage` row written in the caller's transaction (a
transactional outbox): the turn change and its notifications commit together or not at
all, and `pbp.services.mail.send` delivers committed rows. A row holds the complete
message (subject, both bodies, From, Date, Message-ID, List-Unsubscribe), so a retry after
a crash sends byte-for-byte the same mail, recognisably the same by its Message-ID.

The work is split by concern: `settings` (what mail needs from the configuration),
`preferences` (who wants what, unsubscribe links), `queue` (rendering a `Letter` from
`templates/mail/` into an outbox row), `notifications` (each kind of mail: who gets it and
what its template is given), `send` (delivery). This module keeps the referee's view of
the outbox and re-exports the names callers use.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp.models import OUTBOX_STATUSES, OutboxMessage
from pbp.services.mail.notifications import (
    NOTE_EXCERPT,
    EventText,
    digest_window,
    entry_url,
    event_batch_key,
    event_text_for,
    queue_all_digests,
    queue_challenge_notification,
    queue_daily_digests,
    queue_digests,
    queue_event_notifications,
    queue_final_notice,
    queue_invite,
    queue_note_notification,
    queue_password_reset,
    queue_reminder,
    queue_signup_confirmation,
    queue_turn_results,
    turn_url,
)
from pbp.services.mail.preferences import (
    PREFERENCE_LABELS,
    PREFERENCE_OF,
    PREFERENCES,
    Subscription,
    apply_unsubscribe,
    preferences,
    read_unsubscribe,
    save_preferences,
    set_preference,
    unsubscribe_token,
    unsubscribe_url,
    wants,
)
from pbp.services.mail.queue import (
    SUBJECT_MAX,
    Guest,
    Letter,
    header_text,
    queue,
    queue_all,
    queue_message,
    render,
)
from pbp.services.mail.settings import MailSettings

__all__ = [
    "NOTE_EXCERPT",
    "PREFERENCES",
    "PREFERENCE_LABELS",
    "PREFERENCE_OF",
    "SUBJECT_MAX",
    "EventText",
    "Guest",
    "Letter",
    "MailSettings",
    "Subscription",
    "apply_unsubscribe",
    "digest_window",
    "entry_url",
    "event_batch_key",
    "event_text_for",
    "header_text",
    "outbox_counts",
    "outbox_messages",
    "preferences",
    "queue",
    "queue_all",
    "queue_all_digests",
    "queue_challenge_notification",
    "queue_daily_digests",
    "queue_digests",
    "queue_event_notifications",
    "queue_final_notice",
    "queue_invite",
    "queue_message",
    "queue_note_notification",
    "queue_password_reset",
    "queue_reminder",
    "queue_signup_confirmation",
    "queue_turn_results",
    "read_unsubscribe",
    "render",
    "save_preferences",
    "set_preference",
    "turn_url",
    "unsubscribe_token",
    "unsubscribe_url",
    "wants",
]


def outbox_counts(*, session: Session, campaign_id: int) -> dict[str, int]:
    """Messages per state for one campaign (every state present, zero when none)."""
    counts = dict.fromkeys(OUTBOX_STATUSES, 0)
    rows = session.exec(
        select(OutboxMessage.status, sa.func.count())
        .where(OutboxMessage.campaign_id == campaign_id)
        .group_by(OutboxMessage.status)
    ).all()
    counts.update({status: n for status, n in rows})
    return counts


def outbox_messages(
    *, session: Session, campaign_id: int, status: str | None = None, limit: int = 100
) -> list[OutboxMessage]:
    """The newest messages of a campaign, for the referee's outbox page."""
    query = select(OutboxMessage).where(OutboxMessage.campaign_id == campaign_id)
    if status is not None:
        query = query.where(OutboxMessage.status == status)
    return list(session.exec(query.order_by(col(OutboxMessage.id).desc()).limit(limit)))
