"""The campaign's audit log: written as typed lines (`record`, with a line of
pbp.services.audit_actions), read as sentences a referee reads: "Ada posted the event for
turn 4, tailored for 2 characters", not `post_event {"turn": 4, "tailored": 2}`.

Every action pbp records is a line type there with its own sentence; an action without one
(from a newer or older version) still reads as words, never as a raw identifier. The raw
detail stays in the database and the referee's export.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from pbp.models import AuditLog, Campaign, Character, User
from pbp.services import audit_actions

LIMIT = 500


@dataclass(frozen=True)
class AuditLine:
    at: datetime
    who: str
    sentence: str


def record(
    session: Session,
    *,
    line: audit_actions.Line,
    actor: User | None,
    campaign_id: int | None = None,
    now: datetime | None = None,
) -> AuditLog:
    """Add one typed line to the log, in the caller's transaction (`now` None: the
    model's default, the current time)."""
    row = AuditLog(
        campaign_id=campaign_id,
        actor_id=actor.id if actor else None,
        action=line.action,
        detail=line.detail(),
    )
    if now is not None:
        row.created_at = now
    session.add(row)
    return row


def audit_lines(*, session: Session, campaign: Campaign) -> list[AuditLine]:
    """The newest 500 lines of the campaign's audit log, newest first, in words."""
    rows = list(
        session.exec(
            select(AuditLog)
            .where(AuditLog.campaign_id == campaign.id)
            .order_by(col(AuditLog.created_at).desc(), col(AuditLog.id).desc())
            .limit(LIMIT)
        )
    )
    actor_ids = {r.actor_id for r in rows if r.actor_id}
    actors = {
        u.id: u.display_name
        for u in session.exec(select(User).where(col(User.id).in_(actor_ids or [-1])))
    }
    characters = {
        c.id: c.name
        for c in session.exec(select(Character).where(Character.campaign_id == campaign.id))
    }
    return [
        AuditLine(
            at=r.created_at,
            who=actors.get(r.actor_id, "someone") if r.actor_id else "pbp",
            sentence=audit_actions.sentence_of(r.action, r.detail, characters),
        )
        for r in rows
    ]
