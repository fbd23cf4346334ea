"""Polling a Dreamwidth journal: its notes come from the journal's latest-comments feed.

A real loopback server plays baroness-wick.dreamwidth.org (the fixture files with the host
rewritten); the campaign is committed and deleted afterwards, as in test_polling.py.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.models import Blog, Campaign, Entry, Note, Turn
from pbp.services import campaigns
from pbp.services.noteworthy import polling
from tests.feedserver import FeedServer

FIXTURES = Path(__file__).parents[2] / "adapters" / "fixtures"
JOURNAL = b"https://baroness-wick.dreamwidth.org"
NOW = datetime(2024, 4, 3, 12, 0, tzinfo=UTC)
COMMENTS = "/data/rss?comments=1"


def fixture(name: str, server: FeedServer) -> bytes:
    return (FIXTURES / name).read_bytes().replace(JOURNAL, server.base_url.encode())


@pytest.fixture
def server():
    with FeedServer("127.0.0.1") as srv:
        srv.add(
            "/data/rss",
            body=fixture("dreamwidth_journal_rss.xml", srv),
            content_type="application/rss+xml; charset=UTF-8",
        )
        srv.add(
            COMMENTS,
            body=fixture("dreamwidth_latest_comments_rss.xml", srv),
            content_type="application/rss+xml; charset=UTF-8",
        )
        yield srv


@pytest.fixture
def blog_id(engine, server):
    with Session(engine, expire_on_commit=False) as session:
        tag = uuid.uuid4().hex[:8]
        referee = campaigns.create_user(
            session=session, email=f"ref-{tag}@dw.test", display_name="Ref"
        )
        campaign = campaigns.create_campaign(session=session, referee=referee, name=f"DW {tag}")
        wick = campaigns.add_character(
            session=session,
            campaign=campaign,
            name="Baroness Wick",
            feed_url=server.url("/data/rss"),
        )
        session.add(Turn(campaign_id=campaign.id, number=1, opened_at=NOW - timedelta(days=5)))
        session.commit()
        blog = session.exec(select(Blog).where(Blog.character_id == wick.id)).one()
    yield blog.id
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))
        session.commit()


def notes_by_entry(engine, blog_id: int) -> dict[str, list[str]]:
    with Session(engine) as session:
        rows = session.exec(
            select(Entry.url, Note.source_id)
            .join(Note, Note.entry_id == Entry.id)
            .where(Entry.blog_id == blog_id)
            .order_by(Note.source_id)
        )
        found: dict[str, list[str]] = {}
        for url, source_id in rows:
            found.setdefault(url.rsplit("/", 1)[-1], []).append(source_id.rsplit("/", 1)[-1])
        return found


def test_a_journal_poll_reads_its_latest_comments_feed(engine, server, fetcher, blog_id):
    outcome = polling.poll_blog(engine=engine, blog_id=blog_id, fetcher=fetcher, now=NOW)
    assert outcome.status == "ok" and outcome.error is None
    assert (outcome.report.new_entries, outcome.report.new_notes) == (2, 3)
    assert outcome.report.unmatched_notes == 0
    assert server.count(COMMENTS) == 1
    # every thread URL found its entry: ?thread=N#tN and ?thread=N#cmtN alike
    assert notes_by_entry(engine, blog_id) == {
        "1100.html": ["1100.html?thread=4410#cmt4410"],
        "1234.html": ["1234.html?thread=5678#t5678", "1234.html?thread=5934#t5934"],
    }


def test_an_unchanged_journal_does_not_fetch_the_comments_again(engine, server, fetcher, blog_id):
    polling.poll_blog(engine=engine, blog_id=blog_id, fetcher=fetcher, now=NOW)
    again = polling.poll_blog(
        engine=engine, blog_id=blog_id, fetcher=fetcher, now=NOW + timedelta(minutes=20)
    )
    assert again.status == "unchanged_bytes" and again.fetched_documents == 1
    assert server.count(COMMENTS) == 1
