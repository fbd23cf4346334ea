"""The API's tables: personal access tokens and the idempotency record of write requests.

A token is stored as the SHA-256 of its text, never the text itself: a leaked database
then holds nothing that logs anyone in. The token's first characters (`prefix`) are kept
so a person can tell their tokens apart on the token page.

An `IdempotencyRecord` is written in the same transaction as the change it answers, so a
retried request with the same `Idempotency-Key` finds either the whole change and its
first answer, or nothing at all.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk, _json, _time

TOKEN_SCOPES = ("read", "write")


class ApiToken(SQLModel, table=True):
    __tablename__ = "api_token"
    __table_args__ = (_choices("scope", TOKEN_SCOPES),)

    id: RowId = Field(default=None, primary_key=True)
    user_id: int = _fk("user.id")
    name: str = Field(max_length=100)
    # hex SHA-256 of the whole token; tokens are random, so no salt or slow hash is needed
    token_hash: str = Field(max_length=64, unique=True)
    prefix: str = Field(max_length=16)
    scope: str = Field(default="read", max_length=8)
    created_at: datetime = _created()
    last_used_at: datetime | None = _time()
    revoked_at: datetime | None = _time()


class IdempotencyRecord(SQLModel, table=True):
    __tablename__ = "idempotency_record"
    __table_args__ = (sa.UniqueConstraint("user_id", "key"),)

    id: RowId = Field(default=None, primary_key=True)
    user_id: int = _fk("user.id")
    key: str = Field(max_length=200)
    method: str = Field(max_length=10)
    path: str = Field(max_length=2000)
    # hex SHA-256 of method, path and body: the same key with another request is refused
    request_hash: str = Field(max_length=64)
    status: int
    body: dict = _json()
    created_at: datetime = _created()
