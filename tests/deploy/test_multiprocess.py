"""Several real worker processes sharing one PostgreSQL database: the deployment the
Procfile allows (`worker: pbp worker`, scaled to more than one). What must hold:

- polling: over one cycle every due feed is fetched exactly once, though two workers claim
  from the same table at the same time (`claim_due`: FOR UPDATE SKIP LOCKED + a lease);
- a worker SIGKILLed mid-pass loses nothing: once its lease runs out the other worker polls
  what it had claimed. Only a feed it was fetching at the moment of death, whose result it
  had not committed, can be fetched twice (once by it, once by the survivor); every feed
  whose poll it had committed is fetched exactly once;
- turn advancement (`cadence.advance_all_due`) run by two processes at once advances each
  due campaign exactly once;
- the mail sweep (`mail_send.send_pending`) run by two processes at once delivers each
  message exactly once (counted by a real SMTP server, by Message-ID).

Each worker is `python -m tests.deploy.driver` (the production service function in a loop;
see driver.py), started together through a go-file. The feeds are `tests.feedserver`
servers on 60 loopback addresses (127.0.1.1-127.0.1.60) in this process; they count the
requests per path, which is what the polling assertions count. The short lease (10 s instead
of 10 min) and a claim batch of 50 (instead of 500, so two workers interleave their claims
over 600 feeds) are set in the driver process (the lease is PBP_POLL_LEASE_SECONDS in
production; the claim batch has no knob).

PostgreSQL only (SQLite has one writer and no SKIP LOCKED: multi-worker polling is a
PostgreSQL deployment); skipped without PBP_TEST_DATABASE_URL. About a minute in all.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.models import Blog, Campaign, Character, OutboxMessage, Turn, User
from pbp.services import campaigns, turns
from tests.factories import make_campaign, make_characters
from tests.feedserver import FeedServer
from tests.smtpserver import SmtpServer

pytestmark = [pytest.mark.slow, pytest.mark.db]

HOSTS = 60
PER_HOST = 10  # 600 feeds
# Well above a claimed batch's duration: a batch is polled in lanes of at most PER_HOST /
# PBP_POLL_PER_HOST feeds, ~0.3 s each on a 2-core machine running everything. A lease
# shorter than a batch lets the other worker re-claim feeds still being polled (seen with
# 4 s and 20 feeds per host: 16 of 800 fetched twice), so the same holds in production
# for LEASE (10 min) against the feeds one host contributes to a 500-feed claim.
LEASE_SECONDS = 10.0
CLAIM_LIMIT = 50


def _rss(k: int, base: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
        f"<title>Hero {k}</title><link>{base}/hero-{k}/</link><description>d</description>"
        f"<item><title>Hero {k} writes</title><link>{base}/hero-{k}/1.html</link>"
        f'<guid isPermaLink="false">hero-{k}-1</guid>'
        "<pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate>"
        "<description>The lamps gutter in the east wing.</description></item>"
        "</channel></rss>"
    ).encode()


class Feeds:
    """HOSTS servers with PER_HOST feeds each; feed k is at /feed-k.xml on server k // PER_HOST."""

    def __init__(self, delay: float) -> None:
        self.servers = [FeedServer(f"127.0.1.{1 + h}").start() for h in range(HOSTS)]
        self.urls = []
        for k in range(HOSTS * PER_HOST):
            server = self.servers[k // PER_HOST]
            self.urls.append(
                server.add(
                    f"/feed-{k}.xml",
                    body=_rss(k, server.base_url),
                    etag=f'"v1-{k}"',
                    content_type="application/rss+xml",
                    delay=delay,
                )
            )

    def count(self, k: int) -> int:
        return self.servers[k // PER_HOST].count(f"/feed-{k}.xml")

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture
def feeds_factory(monkeypatch):
    # http.server looks up each address's FQDN on bind (slow for 127.0.1.x in some
    # sandboxes); the name only fills SERVER_NAME.
    monkeypatch.setattr(socket, "getfqdn", lambda name="": name)
    made = []

    def make(delay: float) -> Feeds:
        made.append(Feeds(delay))
        return made[-1]

    yield make
    for feeds in made:
        feeds.stop()


def _referee(session: Session, tag: str) -> User:
    return campaigns.create_user(session=session, email=f"ref-{tag}@deploy.test", display_name="R")


@pytest.fixture
def cleanup(pg_engine):
    """Campaigns and users to delete after the test (the workers committed). Tests list it
    before `workers`, so the workers are stopped before their rows are deleted."""
    made: dict[str, list[int]] = {"campaigns": [], "users": []}
    yield made
    with pg_engine.begin() as conn:
        conn.execute(sa.delete(OutboxMessage).where(OutboxMessage.kind == "deploy-test"))
        conn.execute(sa.delete(Campaign).where(Campaign.id.in_(made["campaigns"])))
        conn.execute(sa.delete(User).where(User.id.in_(made["users"])))


def _blog_campaign(engine, urls: list[str], cleanup) -> tuple[int, list[int]]:
    """A committed campaign with one external blog per url; returns (campaign id, blog ids
    in url order)."""
    tag = uuid.uuid4().hex[:8]
    with Session(engine, expire_on_commit=False) as session:
        referee = _referee(session, tag)
        campaign = campaigns.create_campaign(session=session, referee=referee, name=f"Poll {tag}")
        cleanup["campaigns"].append(campaign.id)
        cleanup["users"].append(referee.id)
        characters = [
            Character(campaign_id=campaign.id, name=f"Hero {k}", slug=f"hero-{k}")
            for k in range(len(urls))
        ]
        session.add_all(characters)
        session.flush()
        session.add_all(
            Blog(character_id=c.id, kind="external", feed_url=url)
            for c, url in zip(characters, urls, strict=True)
        )
        session.commit()
        by_url = dict(
            session.exec(
                select(Blog.feed_url, Blog.id)
                .join(Character, Character.id == Blog.character_id)
                .where(Character.campaign_id == campaign.id)
            ).all()
        )
    return campaign.id, [by_url[url] for url in urls]


def _blogs(engine, blog_ids: list[int]) -> dict[int, Blog]:
    with Session(engine) as session:
        return {b.id: b for b in session.exec(select(Blog).where(Blog.id.in_(blog_ids)))}


def _leased_by(engine, owner: str) -> int:
    with engine.connect() as conn:
        query = sa.select(sa.func.count()).where(Blog.lease_owner == owner)
        return conn.execute(query.select_from(Blog)).scalar_one()


def _wait_until_all_polled(engine, blog_ids, workers, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        blogs = _blogs(engine, blog_ids).values()
        left = [b.id for b in blogs if b.last_polled_at is None or b.lease_owner is not None]
        if not left:
            return
        for name, proc in workers.procs.items():
            if proc.returncode is None and proc.poll() is not None:
                pytest.fail(f"{name} exited {proc.returncode}: {workers.stderr(name)}")
        if time.monotonic() > deadline:
            pytest.fail(f"{len(left)} feeds never polled, e.g. {left[:5]}")
        time.sleep(0.2)


def _polled_by(workers, name: str) -> Counter[int]:
    rows = [json.loads(line) for line in workers.lines(name)]
    return Counter(r["blog"] for r in rows if "blog" in r)


def _poll_args(owner: str, campaign_id: int) -> list[str]:
    return [
        "--owner",
        owner,
        "--campaign",
        str(campaign_id),
        "--lease",
        str(LEASE_SECONDS),
        "--claim-limit",
        str(CLAIM_LIMIT),
    ]


def test_two_workers_fetch_every_feed_exactly_once(pg_engine, feeds_factory, cleanup, workers):
    feeds = feeds_factory(delay=0.05)
    campaign_id, blog_ids = _blog_campaign(pg_engine, feeds.urls, cleanup)
    for name in ("a", "b"):
        workers.start(name, "poll", *_poll_args(name, campaign_id))
    workers.go_when_ready()
    started = time.monotonic()
    _wait_until_all_polled(pg_engine, blog_ids, workers, timeout=90)
    seconds = time.monotonic() - started
    time.sleep(1.0)  # any duplicate fetch would show up here
    workers.stop_all()

    counts = Counter({k: feeds.count(k) for k in range(len(feeds.urls))})
    by_a, by_b = _polled_by(workers, "a"), _polled_by(workers, "b")
    print(f"\n{len(blog_ids)} feeds, 2 workers: {seconds:.1f} s; a={len(by_a)} b={len(by_b)}")
    assert sorted(set(counts.values())) == [1], {k: c for k, c in counts.items() if c != 1}
    assert by_a.keys().isdisjoint(by_b.keys())
    assert by_a.keys() | by_b.keys() == set(blog_ids)
    assert max((by_a + by_b).values()) == 1
    # Both took part: exactly-once would be trivial if one worker did everything.
    assert by_a and by_b
    lines = [json.loads(line) for n in "ab" for line in workers.lines(n)]
    statuses = Counter(r["status"] for r in lines if "status" in r)
    assert statuses == {"ok": len(blog_ids)}


def test_killed_worker_is_covered_by_the_other_after_the_lease(
    pg_engine, feeds_factory, cleanup, workers
):
    feeds = feeds_factory(delay=0.2)
    campaign_id, blog_ids = _blog_campaign(pg_engine, feeds.urls, cleanup)
    k_of = {blog_id: k for k, blog_id in enumerate(blog_ids)}
    for name in ("victim", "survivor"):
        workers.start(name, "poll", *_poll_args(name, campaign_id))
    workers.go_when_ready()

    # Kill mid-batch: after some polls, at a moment the victim holds at least 10 leases
    # (with 0.2 s a feed, it cannot finish those in the few ms between check and kill).
    deadline = time.monotonic() + 60
    while len(workers.lines("victim")) < 60 or _leased_by(pg_engine, "victim") < 10:
        assert time.monotonic() < deadline, "never caught the victim in the middle of a batch"
        time.sleep(0.02)
    workers.kill("victim")
    killed_at = datetime.now(UTC)
    at_kill = _blogs(pg_engine, blog_ids)
    # What the victim held at death: claimed, not committed (in flight or not yet fetched).
    orphaned = {i for i, b in at_kill.items() if b.lease_owner == "victim"}
    committed_before = {i for i, b in at_kill.items() if b.last_polled_at is not None}
    assert orphaned, "the kill missed the middle of a pass: the victim held no lease"

    _wait_until_all_polled(pg_engine, blog_ids, workers, timeout=90)
    time.sleep(1.0)
    workers.stop_all()

    counts = {i: feeds.count(k_of[i]) for i in blog_ids}
    twice = {i for i, c in counts.items() if c == 2}
    final = _blogs(pg_engine, blog_ids)
    print(
        f"\nkilled with {len(orphaned)} feeds leased and {len(committed_before)} polled;"
        f" fetched twice: {len(twice)}"
    )
    assert all(c >= 1 for c in counts.values()), "a feed was never fetched"
    assert max(counts.values()) <= 2
    # Only a feed the victim was fetching when it died is fetched twice ...
    assert twice <= orphaned
    # ... so every feed whose poll was committed (by either worker) was fetched once.
    assert all(counts[i] == 1 for i in committed_before)
    # The survivor polled the orphans, and only after the victim's lease ran out.
    survivor = _polled_by(workers, "survivor")
    assert orphaned <= survivor.keys()
    lease_end = min(at_kill[i].lease_until for i in orphaned)
    assert all(final[i].last_polled_at >= lease_end for i in orphaned)
    assert lease_end <= killed_at + timedelta(seconds=LEASE_SECONDS)
    assert all(b.last_polled_at is not None and b.lease_owner is None for b in final.values())


# --- turn advancement -----------------------------------------------------------------------
NOW = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)


def test_two_processes_advance_each_due_campaign_once(pg_engine, cleanup, workers):
    count = 40
    ids = []
    with Session(pg_engine, expire_on_commit=False) as session:
        for _ in range(count):
            # As tests/services/test_cadence.py: six characters, nothing posted, so the
            # tally needs no ruling and the queued event opens turn 2.
            campaign = make_campaign(
                session,
                settings={"opening_turns": 0, "cadence": {"kind": "hours", "hours": 24}},
            )
            make_characters(session, campaign)
            turns.post_event(
                session=session,
                campaign=campaign,
                text="The Duke's carriage is late.",
                actor=None,
                now=NOW - timedelta(hours=25),
                deadline=NOW - timedelta(hours=1),
            )
            campaign.settings = {**campaign.settings, "queued_event": {"text": "The ball."}}
            session.add(campaign)
            session.commit()
            ids.append(campaign.id)
    cleanup["campaigns"].extend(ids)

    for name in ("a", "b"):
        workers.start(name, "advance", "--now", NOW.isoformat())
    workers.go_when_ready()
    for name in ("a", "b"):
        assert workers.wait(name) == 0, workers.stderr(name)

    results = [json.loads(line) for n in "ab" for line in workers.lines(n)]
    results = [r for r in results if "outcome" in r]  # skip the driver's start line
    advanced = Counter(r["campaign_id"] for r in results if r["outcome"] == "advanced")
    with Session(pg_engine) as session:
        rows = session.exec(
            select(Turn.campaign_id, Turn.number, Turn.status)
            .where(Turn.campaign_id.in_(ids))
            .order_by(Turn.campaign_id, Turn.number)
        ).all()
    per_campaign = {i: [(t.number, t.status) for t in rows if t.campaign_id == i] for i in ids}
    wrong = {i: t for i, t in per_campaign.items() if t != [(1, "resolved"), (2, "open")]}
    print(f"\n{count} due campaigns, 2 processes: {Counter(r['outcome'] for r in results)}")
    assert not wrong, f"turns after two concurrent advances: {wrong}"
    assert advanced == Counter(ids)


# --- the mail sweep -------------------------------------------------------------------------
MAIL_LIMIT = 10  # rows per claim, so two senders interleave over 300 messages


def _two_senders(pg_engine, workers, count: int) -> tuple[list[str], Counter, dict]:
    """Queue `count` messages, run two sweeps at once; (message ids, Message-IDs the SMTP
    server received with how often, each sender's log lines)."""
    tag = uuid.uuid4().hex[:8]
    message_ids = [f"<deploy-{tag}-{n}@pbp.test>" for n in range(count)]
    with Session(pg_engine) as session:
        session.add_all(
            OutboxMessage(
                kind="deploy-test",
                dedupe_key=f"deploy:{tag}:{n}",
                message_id=message_id,
                recipient=f"player{n}@pbp.test",
                subject=f"Turn 2 has begun ({n})",
                body_text="The Duke's ball begins.",
                headers={"From": "pbp <pbp@pbp.test>", "Date": "Sun, 01 Mar 2026 20:00:00 +0000"},
            )
            for n, message_id in enumerate(message_ids)
        )
        session.commit()
    with SmtpServer() as smtp:
        for name in ("a", "b"):
            workers.start(name, "mail", "--smtp-port", str(smtp.port), "--limit", str(MAIL_LIMIT))
        workers.go_when_ready()
        for name in ("a", "b"):
            assert workers.wait(name) == 0, workers.stderr(name)
        received = Counter(m.message["Message-ID"] for m in smtp.messages)
    logs = {n: [json.loads(line) for line in workers.lines(n)] for n in "ab"}
    claims = {n: [r["claimed"] for r in logs[n] if r.get("claimed")] for n in "ab"}
    print(f"\n{count} messages, 2 senders, limit {MAIL_LIMIT}: claims {claims}")
    return message_ids, received, logs


def test_two_senders_deliver_each_message_once(pg_engine, cleanup, workers):
    count = 300
    message_ids, received, logs = _two_senders(pg_engine, workers, count)
    errors = [r for rows in logs.values() for r in rows if "error" in r]
    by_a, by_b = ({r["sent"] for r in logs[n] if "sent" in r} for n in "ab")
    assert not errors
    assert received == Counter(message_ids)  # every message once, nothing else
    assert by_a.isdisjoint(by_b) and len(by_a | by_b) == count
    with Session(pg_engine) as session:
        statuses = Counter(
            session.exec(
                select(OutboxMessage.status).where(OutboxMessage.kind == "deploy-test")
            ).all()
        )
    assert statuses == {"sent": count}


def test_concurrent_mail_claims_respect_the_limit(pg_engine, cleanup, workers):
    _, received, logs = _two_senders(pg_engine, workers, 300)
    claims = [r["claimed"] for rows in logs.values() for r in rows if "claimed" in r]
    assert max(claims) <= MAIL_LIMIT
    # and so both senders share the work, as the limit is meant to allow
    assert all(any(r.get("sent") for r in rows) for rows in logs.values())
