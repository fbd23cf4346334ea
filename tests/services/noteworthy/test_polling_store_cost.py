"""The store path of a changed feed sends a fixed, small set of statements.

In a poll pass every changed feed (a tenth of them in the poll bench) costs one
transaction; what runs inside it was most of the pass's CPU. Counted here: every
statement sent while storing one feed that gained one entry, on a real loopback server.
"""

from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlmodel import Session, select

from pbp.models import Blog, Campaign, Entry, Turn
from pbp.models.base import UTCDateTime
from pbp.services import campaigns
from pbp.services.noteworthy import polling
from pbp.services.noteworthy.polling import store
from tests.bench.test_bench_poll import rss

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def blog(engine, server):
    with Session(engine, expire_on_commit=False) as session:
        referee = campaigns.create_user(
            session=session, email=f"ref-{id(server)}@cost.test", display_name="Ref"
        )
        campaign = campaigns.create_campaign(
            session=session, referee=referee, name=f"Cost {id(server)}"
        )
        hero = campaigns.add_character(
            session=session, campaign=campaign, name="Hero", feed_url=server.url("/feed.xml")
        )
        session.add(Turn(campaign_id=campaign.id, number=1, opened_at=NOW - timedelta(days=5)))
        session.commit()
        row = session.exec(select(Blog).where(Blog.character_id == hero.id)).one()
    yield row
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))
        session.commit()


@contextmanager
def statements(engine):
    seen: list[str] = []

    def listen(_conn, _cursor, statement, *_args):
        seen.append(" ".join(statement.split()))

    sa.event.listen(engine, "before_cursor_execute", listen)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", listen)


def _serve(server, entries: int, etag: str) -> None:
    body = rss(0, server.base_url, entries)
    server.add("/feed.xml", body=body, etag=etag, content_type="application/rss+xml")


def test_storing_one_changed_feed_reads_little(engine, server, blog, fetcher):
    """One new entry in an already-polled feed: no SELECT per stored row (the campaign of
    a flushed row is known), none for an unchanged hub, and the blog read once."""
    _serve(server, 3, '"v1"')
    polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=NOW)
    _serve(server, 4, '"v2"')
    later = NOW + timedelta(hours=1)
    with statements(engine) as seen:
        outcome = polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=later)
    assert outcome.status == "ok" and outcome.report.new_entries == 1
    with Session(engine) as session:
        assert len(session.exec(select(Entry).where(Entry.blog_id == blog.id)).all()) == 4
    selects = [s for s in seen if s.upper().startswith("SELECT")]
    listing = "\n".join(selects)
    # Before the fetch, for the batch: the blog with its campaign, the open turn, the
    # WebSub subscriptions. The store: the blog, its stored entries, the campaign's turns.
    assert len(selects) == 6, listing
    assert not [s for s in selects if "FROM character" in s], listing  # campaign known
    assert sum("FROM websub_subscription" in s for s in selects) == 1, listing
    assert sum("FROM blog" in s for s in selects) == 2, listing
    # The stored entries are matched by id and digest: no entry's body is read.
    assert not [s for s in selects if "body_html" in s], listing


def test_a_changed_feed_with_no_new_entry_reads_no_turns(engine, server, blog, fetcher):
    """The feed's bytes changed but not its entries: nothing is placed in a turn, so the
    campaign's turns are not read."""
    _serve(server, 3, '"v1"')
    polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=NOW)
    body = rss(0, server.base_url, 3).replace(b"The journal of", b"The diary of")
    server.add("/feed.xml", body=body, etag='"v2"', content_type="application/rss+xml")
    later = NOW + timedelta(hours=1)
    with statements(engine) as seen:
        outcome = polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=later)
    assert outcome.status == "ok" and outcome.report.new_entries == 0
    assert outcome.parsed_documents == 1  # parsed: the bytes changed
    selects = [s for s in seen if s.upper().startswith("SELECT")]
    assert not [s for s in selects if "FROM turn WHERE turn.campaign_id = " in s], selects


def test_the_poll_record_and_the_lease_release_are_one_update(engine, server, blog, fetcher):
    """A claimed feed that changed: its poll record and the release of its claim are
    written by one UPDATE of the blog row, not two."""
    _serve(server, 3, '"v1"')
    polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=NOW)
    _serve(server, 4, '"v2"')
    later = NOW + timedelta(hours=1)
    with Session(engine) as session:
        row = session.get(Blog, blog.id)
        row.lease_owner, row.lease_until = "worker-1", later + timedelta(minutes=5)
        session.add(row)
        session.commit()
    with statements(engine) as seen:
        outcome = polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=later)
    assert outcome.status == "ok" and outcome.report.new_entries == 1
    updates = [s for s in seen if s.upper().startswith("UPDATE BLOG")]
    assert len(updates) == 1, updates
    with Session(engine) as session:
        row = session.get(Blog, blog.id)
        assert (row.lease_owner, row.lease_until) == (None, None)
        assert row.etag == '"v2"'


@pytest.mark.parametrize(
    "value",
    [
        None,
        datetime(2026, 12, 2, 12, tzinfo=UTC),  # no microseconds: SQLite's text still has them
        datetime(2026, 12, 2, 12, 0, 0, 5),  # naive: taken as UTC already
        datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(hours=5))),
        datetime(2026, 1, 1, 23, 59, 59, 999_999, tzinfo=timezone(timedelta(hours=-3))),
    ],
)
def test_sqlite_time_is_the_text_the_column_type_writes(value):
    """The unchanged feeds' batch binds `sqlite_time`'s text itself: it must be what
    `UTCDateTime` and SQLAlchemy's SQLite DATETIME make of the same value."""
    dialect = sqlite.dialect()
    written = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
    assert store.sqlite_time(value) == written(value)
