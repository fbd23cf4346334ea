"""What the pipeline reads of the database before and while fetching: the claimed blogs'
jobs (polling.decide.Job), and a changed feed's stored comment counts."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from adapters import FeedState
from pbp.models import Blog, Character, Entry, Turn
from pbp.services.noteworthy import websub
from pbp.services.noteworthy.polling.decide import Job, stored_key


def load_jobs(engine: Engine, blog_ids: list[int]) -> list[Job]:
    """Everything the fetches of these blogs need, in three queries for the whole batch."""
    with Session(engine) as session:
        # Columns, not Blog objects: building thousands of ORM instances was the costliest
        # part of loading a pass's feeds.
        rows = (
            session.connection()
            .execute(
                sa.select(
                    col(Blog.id),
                    col(Blog.feed_url),
                    col(Blog.etag),
                    col(Blog.last_modified),
                    col(Blog.content_hash),
                    col(Blog.last_unconditional_at),
                    col(Blog.failure_count),
                    col(Blog.last_success_at),
                    col(Blog.adapter_kind),
                    col(Blog.last_error).is_not(None).label("had_error"),
                    col(Character.campaign_id),
                )
                .join(Character, col(Character.id) == Blog.character_id)
                .where(col(Blog.id).in_(blog_ids))
            )
            .all()
        )
        deadlines: dict[int, datetime | None] = {}
        open_turns = select(Turn.campaign_id, Turn.deadline).where(
            col(Turn.campaign_id).in_({row.campaign_id for row in rows}),
            Turn.status == "open",
        )
        for campaign_id, deadline in session.exec(open_turns):
            deadlines.setdefault(campaign_id, deadline)
        pushed, hubs = websub.for_polling(session=session, blog_ids=blog_ids)
    return [
        Job(
            blog_id=row.id,
            campaign_id=row.campaign_id,
            feed_url=row.feed_url,
            state=FeedState(
                url=row.feed_url,
                etag=row.etag,
                last_modified=row.last_modified,
                content_hash=row.content_hash,
                last_unconditional_at=row.last_unconditional_at,
                failure_count=row.failure_count,
            ),
            first_poll=row.last_success_at is None,
            kind=row.adapter_kind,
            deadline=deadlines.get(row.campaign_id),
            pushed_until=pushed.get(row.id),
            hubs=hubs.get(row.id, frozenset()),
            had_error=bool(row.had_error),
        )
        for row in rows
    ]


def comment_counts(engine: Engine, blog_id: int) -> dict[str, int | None]:
    """The stored comment count per entry key (read only when a changed feed lists
    comment counts)."""
    with Session(engine) as session:
        rows = session.exec(
            select(Entry.url, Entry.source_id, Entry.comment_count).where(Entry.blog_id == blog_id)
        )
        return {stored_key(url, source_id): count for url, source_id, count in rows}
