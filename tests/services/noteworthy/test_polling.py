"""Polling against a real loopback HTTP server and a real database.

These tests commit (the poller opens its own sessions), so each builds its own campaign
and deletes it afterwards; `claim_due` is scoped to that campaign.
"""

import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.models import AuditLog, Blog, Campaign, Entry, EntryRevision, Note, Turn
from pbp.services import campaigns
from pbp.services.noteworthy import ingest, polling
from tests.feedserver import FeedServer

FIXTURES = Path(__file__).parents[2] / "adapters" / "fixtures"
NOW = datetime(2024, 4, 3, 12, 0, tzinfo=UTC)
SITE = "https://colonelmarsh.example.com"
POST = "/2024/04/03/on-the-matter-of-the-dukes-carriage/"


def fixture(name: str, base: str) -> bytes:
    return (FIXTURES / name).read_bytes().replace(SITE.encode(), base.encode())


@pytest.fixture
def game(engine, server):
    """A committed campaign whose Colonel Marsh blogs on the loopback server."""
    # Committed rows outlive the test: a name of its own each time (id(server) can repeat
    # once an earlier server is collected).
    unique = uuid.uuid4().hex[:12]
    with Session(engine, expire_on_commit=False) as session:
        referee = campaigns.create_user(
            session=session, email=f"ref-{unique}@poll.test", display_name="Ref"
        )
        campaign = campaigns.create_campaign(
            session=session, referee=referee, name=f"Poll {unique}"
        )
        marsh = campaigns.add_character(
            session=session,
            campaign=campaign,
            name="Colonel Marsh",
            feed_url=server.url("/feed/"),
        )
        for name in ("Lord Ashby", "Baroness Wick", "Duchess of Fenn"):
            campaigns.add_character(session=session, campaign=campaign, name=name)
        session.add(Turn(campaign_id=campaign.id, number=1, opened_at=NOW - timedelta(days=5)))
        session.commit()
        blog = session.exec(select(Blog).where(Blog.character_id == marsh.id)).one()
    yield campaign, blog
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))
        session.commit()


def serve_wordpress(server: FeedServer, etag='"v1"'):
    base = server.base_url
    server.add(
        "/feed/",
        body=fixture("wordpress_rss.xml", base),
        etag=etag,
        content_type="application/rss+xml; charset=UTF-8",
    )
    server.add(
        POST + "feed/",
        body=fixture("wordpress_post_comments.xml", base),
        content_type="application/rss+xml; charset=UTF-8",
    )


def poll(engine, blog, fetcher, now=NOW):
    return polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=now)


def rows(engine, model, *where):
    with Session(engine) as session:
        return session.exec(select(model).where(*where)).all()


def test_first_poll_stores_entries_moods_and_comment_notes(engine, game, server, fetcher):
    campaign, blog = game
    serve_wordpress(server)
    outcome = poll(engine, blog, fetcher)
    entries = rows(engine, Entry, Entry.blog_id == blog.id)
    assert outcome.status == "ok" and outcome.report.new_entries == len(entries) >= 2
    challenge = next(e for e in entries if e.url.endswith(POST))
    assert challenge.mood == "challenging"
    assert "Current mood" not in challenge.body_html
    notes = rows(engine, Note, Note.entry_id == challenge.id)
    assert len(notes) == outcome.report.new_notes >= 1
    assert server.count(POST + "feed/") == 1
    (stored,) = rows(engine, Blog, Blog.id == blog.id)
    assert stored.etag == '"v1"' and stored.last_success_at == NOW
    assert stored.next_poll_at > NOW and stored.lease_owner is None


def test_not_modified_costs_no_parse_and_no_entry_writes(engine, game, server, fetcher):
    _, blog = game
    serve_wordpress(server)
    poll(engine, blog, fetcher)
    revisions_before = len(rows(engine, EntryRevision))
    later = NOW + timedelta(minutes=20)
    outcome = poll(engine, blog, fetcher, now=later)
    assert outcome.status == "not_modified" and outcome.parsed_documents == 0
    assert server.count(POST + "feed/") == 1  # the comment feed was not fetched again
    assert len(rows(engine, EntryRevision)) == revisions_before
    (stored,) = rows(engine, Blog, Blog.id == blog.id)
    assert stored.last_polled_at == later


def test_a_not_modified_record_keeps_its_time_to_the_microsecond(engine, game, server, fetcher):
    """The unchanged feed's record is written past SQLAlchemy's conversions on SQLite
    (`store.sqlite_time`): a time in another zone, with microseconds, reads back equal."""
    _, blog = game
    serve_wordpress(server)
    poll(engine, blog, fetcher)
    later = NOW + timedelta(minutes=20, microseconds=123_456)
    outcome = poll(engine, blog, fetcher, now=later.astimezone(timezone(timedelta(hours=-5))))
    assert outcome.status == "not_modified"
    (stored,) = rows(engine, Blog, Blog.id == blog.id)
    assert stored.last_polled_at == stored.last_success_at == later
    assert stored.next_poll_at > later and stored.lease_owner is None and stored.etag == '"v1"'


def test_identical_bytes_cost_no_parse(engine, game, server, fetcher):
    _, blog = game
    serve_wordpress(server, etag=None)
    poll(engine, blog, fetcher)
    outcome = poll(engine, blog, fetcher, now=NOW + timedelta(minutes=20))
    assert outcome.status == "unchanged_bytes" and outcome.parsed_documents == 0


def test_unchanged_comment_count_skips_the_comment_feed(engine, game, server, fetcher):
    _, blog = game
    serve_wordpress(server, etag=None)
    poll(engine, blog, fetcher)
    # The main feed changes (a new byte), the post's slash:comments count does not.
    body = fixture("wordpress_rss.xml", server.base_url) + b"\n"
    server.add("/feed/", body=body, content_type="application/rss+xml")
    outcome = poll(engine, blog, fetcher, now=NOW + timedelta(minutes=20))
    assert outcome.status == "ok"
    assert server.count(POST + "feed/") == 1


def test_gone_marks_the_blog_and_alerts_the_referee(engine, game, server, fetcher):
    campaign, blog = game
    server.add("/feed/", status=410, body=b"gone")
    outcome = poll(engine, blog, fetcher)
    (stored,) = rows(engine, Blog, Blog.id == blog.id)
    assert outcome.status == "gone" and stored.gone and "410" in stored.last_error
    alerts = rows(
        engine, AuditLog, AuditLog.campaign_id == campaign.id, AuditLog.action == "feed_alert"
    )
    assert len(alerts) == 1
    assert stored.next_poll_at is not None  # still retried, never silently abandoned


def test_permanent_redirect_updates_the_stored_url(engine, game, server, fetcher):
    _, blog = game
    serve_wordpress(server)
    server.redirect("/old-feed", server.url("/feed/"), status=301)
    with Session(engine) as session:
        session.execute(
            sa.update(Blog).where(Blog.id == blog.id).values(feed_url=server.url("/old-feed"))
        )
        session.commit()
    poll(engine, blog, fetcher)
    (stored,) = rows(engine, Blog, Blog.id == blog.id)
    assert stored.feed_url == server.url("/feed/")


def test_server_error_backs_off_and_keeps_the_error(engine, game, server, fetcher):
    _, blog = game
    server.add("/feed/", status=500, body=b"oops", content_type="text/plain")
    first = poll(engine, blog, fetcher)
    second = poll(engine, blog, fetcher, now=NOW + timedelta(hours=1))
    (stored,) = rows(engine, Blog, Blog.id == blog.id)
    assert first.status == second.status == "failed"
    assert stored.failure_count == 2 and "500" in stored.last_error
    assert stored.next_poll_at - (NOW + timedelta(hours=1)) > timedelta(minutes=15)


def test_html_page_instead_of_feed_is_a_clear_error(engine, game, server, fetcher):
    _, blog = game
    server.add(
        "/feed/", body=b"<!doctype html><html><body>Hi</body></html>", content_type="text/html"
    )
    outcome = poll(engine, blog, fetcher)
    assert outcome.status == "not_a_feed" and "web page" in outcome.error
    assert rows(engine, Entry, Entry.blog_id == blog.id) == []


def test_claims_are_exclusive_and_leases_expire(engine, game):
    campaign, blog = game
    first = polling.claim_due(engine=engine, now=NOW, owner="w1", campaign_id=campaign.id)
    second = polling.claim_due(engine=engine, now=NOW, owner="w2", campaign_id=campaign.id)
    assert first == [blog.id] and second == []
    after_lease = NOW + polling.LEASE + timedelta(seconds=1)
    third = polling.claim_due(engine=engine, now=after_lease, owner="w2", campaign_id=campaign.id)
    assert third == [blog.id]


def test_crash_mid_poll_loses_nothing_committed_and_duplicates_nothing(
    engine, game, server, fetcher, monkeypatch
):
    _, blog = game
    serve_wordpress(server, etag=None)
    # The second entry's revision: by then entries are flushed, whether the feed's new
    # entries are stored one by one or together (ingest.store_new).
    real = ingest._revision
    calls = {"n": 0}

    def crash_on_second(*args):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("worker died")
        return real(*args)

    monkeypatch.setattr(ingest, "_revision", crash_on_second)
    with pytest.raises(RuntimeError):
        poll(engine, blog, fetcher)
    assert rows(engine, Entry, Entry.blog_id == blog.id) == []  # the feed's transaction rolled back
    monkeypatch.setattr(ingest, "_revision", real)
    poll(engine, blog, fetcher, now=NOW + timedelta(minutes=1))
    poll(engine, blog, fetcher, now=NOW + timedelta(minutes=2))
    entries = rows(engine, Entry, Entry.blog_id == blog.id)
    assert len(entries) == len({e.source_id for e in entries}) >= 2


@pytest.mark.parametrize("concurrency", [polling.DEFAULT_CONCURRENCY, 0])
def test_poll_due_pass_reports_each_blog(engine, game, server, fetcher, concurrency):
    """On the event-loop pass and the threaded one: a changed feed's comment feed is fetched
    from its worker thread (on the loop, in the async pass) and its notes stored."""
    campaign, blog = game
    serve_wordpress(server)
    seen = []
    outcomes = polling.poll_due(
        engine=engine,
        fetcher=fetcher,
        owner="test",
        concurrency=concurrency,
        campaign_id=campaign.id,
        now=lambda: NOW,
        on_done=seen.append,
    )
    assert [o.blog_id for o in outcomes] == [blog.id] == [o.blog_id for o in seen]
    (outcome,) = outcomes
    assert outcome.status == "ok" and outcome.fetched_documents >= 2
    assert server.count(POST + "feed/") == 1 and outcome.report.new_notes >= 1
    again = polling.poll_due(
        engine=engine, fetcher=fetcher, owner="test", campaign_id=campaign.id, now=lambda: NOW
    )
    assert again == []  # nothing is due right after a successful poll
