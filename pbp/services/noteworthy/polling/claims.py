"""Claiming due feeds, and the leases that keep a claim a worker's own.

Several worker processes can share the polling on PostgreSQL: due blogs are claimed with
`SELECT ... FOR UPDATE SKIP LOCKED` and a lease (`PBP_POLL_LEASE_SECONDS`), so no feed is
fetched twice at once and a dead worker's claim expires. A pass that runs long renews the
leases it still holds (`Renewal`), so a slow pass never loses a feed to another worker
mid-fetch. Writing a feed's poll record releases its lease (polling.store).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbp.models import Blog, Character
from pbp.services.noteworthy.polling.writing import writing

# The default lease; PBP_POLL_LEASE_SECONDS sets it per app. Read when a pass starts, not
# bound at import: tests/deploy's driver sets it per process.
LEASE = timedelta(minutes=10)
RENEWALS_PER_LEASE = 3  # a held lease is pushed back once a third of it has passed

log = logging.getLogger("pbp.polling")


def claim_due(
    *,
    engine: Engine,
    now: datetime,
    owner: str,
    limit: int = 500,
    campaign_id: int | None = None,
    lease: timedelta | None = None,
) -> list[int]:
    """Lease up to `limit` due external blogs to `owner` for `lease` (default LEASE); returns
    their ids."""
    due = (
        select(Blog.id)
        .where(
            Blog.kind == "external",
            sa.or_(col(Blog.next_poll_at).is_(None), col(Blog.next_poll_at) <= now),
            sa.or_(col(Blog.lease_until).is_(None), col(Blog.lease_until) < now),
        )
        .order_by(col(Blog.next_poll_at).is_(None).desc(), col(Blog.next_poll_at), col(Blog.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    if campaign_id is not None:
        due = due.join(Character, col(Character.id) == Blog.character_id).where(
            Character.campaign_id == campaign_id
        )
    with writing(engine), Session(engine) as session:
        ids = [blog_id for blog_id in session.exec(due) if blog_id is not None]
        if ids:
            session.execute(
                sa.update(Blog)
                .where(col(Blog.id).in_(ids))
                .values(lease_owner=owner, lease_until=now + (lease or LEASE))
            )
        session.commit()
    return ids


def renew_leases(
    *,
    engine: Engine,
    blog_ids: Collection[int],
    owner: str,
    now: datetime,
    lease: timedelta | None = None,
) -> int:
    """Extend `owner`'s lease on those of `blog_ids` it still holds; returns how many.

    Released rows are left alone, and so is a row whose lease ran out and that another worker
    has claimed since: it is theirs now. Rows are locked in id order, the order batched poll
    records are written in too, so a renewal and a batch never deadlock on PostgreSQL."""
    if not blog_ids:
        return 0
    still_held = (
        select(Blog.id)
        .where(col(Blog.id).in_(sorted(blog_ids)), Blog.lease_owner == owner)
        .order_by(col(Blog.id))
        .with_for_update()
    )
    with writing(engine), Session(engine) as session:
        ids = list(session.exec(still_held))
        if ids:
            session.execute(
                sa.update(Blog)
                .where(col(Blog.id).in_(ids))
                .values(lease_until=now + (lease or LEASE))
            )
        session.commit()
    return len(ids)


class Renewal:
    """Called before every fetch of a pass: once a third of the lease has passed since the
    last renewal, renews the lease on every feed the pass claimed and has not released yet
    (a feed being fetched, waiting in a lane, or whose poll record is still queued), so
    another worker never claims one of them while this pass is alive. A worker that dies
    renews nothing, and its leases run out as before. The lease must therefore outlast a
    third of itself plus the longest single request (about a minute at default timeouts)."""

    def __init__(
        self,
        *,
        engine: Engine,
        owner: str,
        blog_ids: Collection[int],
        lease: timedelta,
        clock: Callable[[], datetime],
        claimed_at: datetime,
    ) -> None:
        self.engine, self.owner, self.blog_ids = engine, owner, list(blog_ids)
        self.lease, self.clock = lease, clock
        self.renewed_at = claimed_at
        self.lock = threading.Lock()

    def __call__(self) -> None:
        now = self.clock()
        with self.lock:  # one renewal per third of a lease, whichever lane gets there first
            if now - self.renewed_at < self.lease / RENEWALS_PER_LEASE:
                return
            self.renewed_at = now
        try:
            renew_leases(
                engine=self.engine,
                blog_ids=self.blog_ids,
                owner=self.owner,
                now=now,
                lease=self.lease,
            )
        except sa.exc.SQLAlchemyError:  # the fetch can still go ahead; retried a third later
            log.warning("could not renew the polling leases of %s", self.owner, exc_info=True)


def no_renewal() -> None:
    """One feed polled outside a pass (`poll_blog`): nothing to renew."""
