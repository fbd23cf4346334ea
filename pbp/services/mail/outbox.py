"""Outgoing mail: the transactional outbox, as the referee sees it.

Every message is an `OutboxMessage` row written in the caller's transaction (a
transactional outbox): the turn change and its notifications commit together or not at
all, and `pbp.services.mail.send` delivers committed rows. A row holds the complete
message (subject, both bodies, From, Date, Message-ID, List-Unsubscribe), so a retry after
a crash sends byte-for-byte the same mail, recognisably the same by its Message-ID.

The work is split by concern: `settings` (what mail needs from the configuration),
`preferences` (who wants what, unsubscribe links), `queue` (rendering a `Letter` from
`templates/mail/` into an outbox row), `notifications` (each kind of mail: who gets it and
what its template is given), `send` (delivery). This module holds the referee's view of
the outbox: how many messages are in each state, and the newest of them.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp.models import OUTBOX_STATUSES, OutboxMessage


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
