"""Test-data factories (Warehouse's habit): small functions with sensible defaults."""

from __future__ import annotations

import itertools

from sqlmodel import Session

from pbp.models import Campaign, Character, User
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
