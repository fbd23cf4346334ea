"""Idempotency keys for the API's write requests (the IETF "Idempotency-Key" header draft).

A client that retries a write after a timeout cannot know whether the first attempt
happened. With the same key, the retry gets the first answer back and changes nothing
more: the record is stored in the transaction of the change itself, so it exists exactly
when the change does. Only successful answers are kept: a refused request changed
nothing, so running it again is safe and may succeed once the cause is fixed.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp.errors import Malformed, UserError
from pbp.models import User
from pbp.models.api import IdempotencyRecord

KEEP_FOR = timedelta(days=1)
MAX_KEY_LENGTH = 200


class KeyReused(UserError):
    """The same key came with a different request (the draft's 422)."""

    status = 422


def check_key(key: str) -> str:
    if not key or len(key) > MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
        raise Malformed(
            f"an Idempotency-Key is 1 to {MAX_KEY_LENGTH} printable ASCII characters, "
            "e.g. a random UUID"
        )
    return key


def request_hash(method: str, path: str, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (method.encode(), path.encode("utf-8", "surrogatepass"), body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def find(
    *,
    session: Session,
    user: User,
    key: str,
    method: str,
    path: str,
    fingerprint: str,
    now: datetime,
) -> IdempotencyRecord | None:
    """The first answer to this request, or None if the key is new (or expired)."""
    record = session.exec(
        select(IdempotencyRecord).where(
            IdempotencyRecord.user_id == user.id, IdempotencyRecord.key == key
        )
    ).first()
    if record is None:
        return None
    if record.created_at < now - KEEP_FOR:
        session.delete(record)
        session.flush()
        return None
    if (record.method, record.path, record.request_hash) != (method, path, fingerprint):
        raise KeyReused(
            f"the Idempotency-Key {key!r} was used for another request "
            f"({record.method} {record.path}): use a new key for a new request"
        )
    return record


def remember(
    *,
    session: Session,
    user: User,
    key: str,
    method: str,
    path: str,
    fingerprint: str,
    status: int,
    body: dict,
    now: datetime,
) -> None:
    """Store the answer in the caller's transaction (commit it with the change)."""
    session.add(
        IdempotencyRecord(
            user_id=user.id,
            key=key,
            method=method,
            path=path,
            request_hash=fingerprint,
            status=status,
            body=body,
            created_at=now,
        )
    )
    session.flush()


def purge(*, session: Session, now: datetime) -> int:
    """Forget answers older than a day (a retry comes within minutes, not days)."""
    result = cast(
        "sa.CursorResult[Any]",
        session.execute(
            sa.delete(IdempotencyRecord).where(col(IdempotencyRecord.created_at) < now - KEEP_FOR)
        ),
    )
    return result.rowcount or 0


def forget_old(app) -> int:
    """The scheduler's job: purge and commit; returns how many records went."""
    from pbp.db import database, writing
    from pbp.models import utcnow

    with writing(), database(app).session_factory() as session:
        gone = purge(session=session, now=utcnow())
        session.commit()
    return gone
