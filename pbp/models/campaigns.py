"""Campaigns, their members, invitations and characters, and the audit log."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import (
    CAMPAIGN_STATUSES,
    CHARACTER_STATUSES,
    ROLES,
    RowId,
    _choices,
    _created,
    _fk,
    _json,
    _time,
)


class Campaign(SQLModel, table=True):
    __table_args__ = (
        _choices("status", CAMPAIGN_STATUSES),
        sa.CheckConstraint("slug <> ''", name="slug_not_empty"),
    )

    id: RowId = Field(default=None, primary_key=True)
    slug: str = Field(max_length=80, unique=True)
    name: str = Field(max_length=200)
    ruleset: str = Field(max_length=40)
    status: str = Field(default="setup", max_length=16)
    # Ruleset settings, e.g. Noteworthy: opening_turns, fair_interval_hours, custom_moods.
    settings: dict = _json()
    time_zone: str = Field(default="UTC", max_length=64)
    created_at: datetime = _created()
    # Bumped after every commit that changed what the campaign's pages show (see
    # pbp.content_version); cached pages are keyed by it.
    content_version: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class Membership(SQLModel, table=True):
    __table_args__ = (
        sa.UniqueConstraint("campaign_id", "user_id"),
        _choices("role", ROLES),
    )

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    user_id: int = _fk("user.id")
    role: str = Field(max_length=16)
    # Email preferences by kind ("events", "digest", "notes_on_mine", "challenges");
    # a missing key means the kind's default (see pbp.services.mail.preferences).
    notify: dict = _json()
    created_at: datetime = _created()


class Invite(SQLModel, table=True):
    """A referee's single-use invitation; the link carries a signed form of `id`."""

    __table_args__ = (_choices("role", ROLES),)

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    # The character the invited player will play, if the referee made it already.
    character_id: int | None = _fk("character.id", nullable=True)
    email: str | None = Field(default=None, max_length=320)
    role: str = Field(default="player", max_length=16)
    created_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()
    expires_at: datetime = _time(nullable=False)
    used_at: datetime | None = _time()
    used_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")


class Character(SQLModel, table=True):
    __table_args__ = (
        sa.UniqueConstraint("campaign_id", "slug"),
        sa.UniqueConstraint("campaign_id", "name"),
        _choices("status", CHARACTER_STATUSES),
    )

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    # NULL until the invited player signs up: the referee builds the roster first.
    user_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    name: str = Field(max_length=120)
    slug: str = Field(max_length=80)
    # Other names the character goes by in entries ("Vance" for "Lady Vance"), used by
    # target detection.
    aliases: list = _json(list)
    status: str = Field(default="active", max_length=16)
    profile: str = Field(default="", max_length=4000)
    created_at: datetime = _created()


class AuditLog(SQLModel, table=True):
    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int | None = _fk("campaign.id", nullable=True)
    actor_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    action: str = Field(max_length=80)
    detail: dict = _json()
    created_at: datetime = _created()
