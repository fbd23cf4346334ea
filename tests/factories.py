"""Test-data factories (Warehouse's habit): small functions with sensible defaults."""

from __future__ import annotations

import itertools

import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.models import Campaign, Character, Membership, OutboxMessage, User
from pbp.models.api import IdempotencyRecord
from pbp.services import campaigns

_seq = itertools.count(1)


def make_user(session: Session, name: str | None = None) -> User:
    n = next(_seq)
    name = name or f"User {n}"
    return campaigns.create_user(session=session, email=f"user{n}@example.test", display_name=name)


def make_campaign(session: Session, name: str | None = None, **kw) -> Campaign:
    referee = kw.pop("referee", None) or make_user(session, "Referee")
    return campaigns.create_campaign(
        session=session, referee=referee, name=name or f"Campaign {next(_seq)}", **kw
    )


def make_characters(
    session: Session, campaign: Campaign, names=("Ada", "Bram", "Cleo", "Dov", "Eli", "Fay")
) -> list[Character]:
    return [
        campaigns.add_character(
            session=session, campaign=campaign, name=name, user=make_user(session, name)
        )
        for name in names
    ]


def drop_committed_campaign(engine, campaign: Campaign) -> None:
    """Delete a campaign a test committed for real (for another process, thread or job to
    see), with its outbox and its members' accounts."""
    with engine.begin() as conn:
        users = select(Membership.user_id).where(Membership.campaign_id == campaign.id)
        user_ids = list(conn.execute(users).scalars())
        conn.execute(sa.delete(OutboxMessage).where(OutboxMessage.campaign_id == campaign.id))
        conn.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))
        # The pages' one-time form tokens are remembered per account (pbp.web.actions).
        conn.execute(sa.delete(IdempotencyRecord).where(IdempotencyRecord.user_id.in_(user_ids)))
        conn.execute(sa.delete(User).where(User.id.in_(user_ids)))
