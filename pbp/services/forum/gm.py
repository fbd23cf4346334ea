"""The GM's start and end of a forum campaign: the dice seed's commitment, then its reveal."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session

from pbp.errors import Conflict, Forbidden
from pbp.models import Campaign, User
from pbp.services import audit_actions as lines
from pbp.services.forum import rolls
from pbp.services.forum.posts import audit
from pbp.services.forum.visibility import membership_of, require_forum


def start_campaign(*, session: Session, campaign: Campaign, actor: User, now: datetime) -> str:
    """Open play. The seed's commitment is public since the campaign was made (made now
    only if the campaign somehow has none). Returns the commitment."""
    _require_gm(session, campaign, actor)
    if campaign.status == "ended":
        raise Conflict(f"{campaign.name} has ended; it cannot start again")
    secret = rolls.ensure_secret(session=session, campaign=campaign, now=now)
    if campaign.status != "running":
        campaign.status = "running"
        session.add(campaign)
        audit(session, campaign, actor, lines.ForumStarted(secret.commitment), now)
    session.flush()
    return secret.commitment


def end_campaign(*, session: Session, campaign: Campaign, actor: User, now: datetime) -> str:
    """End play and reveal the seed, so every roll can be checked; idempotent.
    Returns the revealed seed (hex)."""
    _require_gm(session, campaign, actor)
    secret = rolls.reveal(session=session, campaign=campaign, now=now)
    if campaign.status != "ended":
        campaign.status = "ended"
        session.add(campaign)
        audit(session, campaign, actor, lines.ForumEnded(secret.commitment), now)
    session.flush()
    return rolls.revealed_seed(secret) or ""


def _require_gm(session: Session, campaign: Campaign, actor: User) -> None:
    require_forum(campaign)
    member = membership_of(session, campaign, actor.id)
    if member is None or member.role != "referee":
        raise Forbidden(f"only the GM of {campaign.name} can do this")
