"""Several real processes sharing one PostgreSQL database, as the Procfile deploys pbp: the
web process (gunicorn, 2 workers) and `worker: pbp worker` scaled to two. What must hold:

- polling: over one cycle every due feed is fetched exactly once, though two workers claim
  from the same table at the same time (`claim_due`: FOR UPDATE SKIP LOCKED + a lease), and
  their passes outlast the lease (the lease is renewed while a pass runs);
- meanwhile the web serves the polled campaign's planet without an error, and once the
  cycle is over both web workers serve the polled entries: the workers' commits retire the
  page each web worker had cached (its content version, pbp.content_version);
- a worker SIGKILLed mid-pass loses nothing: once its lease runs out the other worker polls
  what it had claimed. Only a feed it was fetching at the moment of death, whose result it
  had not committed, can be fetched twice (once by it, once by the survivor); every feed
  whose poll it had committed is fetched exactly once;
- turn advancement (`cadence.advance_all_due`) run by two processes at once advances each
  due campaign exactly once;
- the daily digest job (`mail.queue_all_digests`) run by two processes at once queues one
  digest per member and day (the outbox's unique dedupe key);
- the mail sweep (`mail_send.send_pending`) run by two processes at once delivers each
  message exactly once (counted by a real SMTP server, by Message-ID).

What runs:
- each scheduler worker is `python -m tests.deploy.driver` (the production service function
  in a loop; see driver.py), two started together through a go-file. They poll with the
  production claim batch (500) and threads (16) and a 10 s lease instead of 10 min;
- the feeds: 2,000 external blogs of one campaign, 10 on each of 200 `tests.feedserver`
  servers on loopback addresses 127.0.1.1-127.0.1.200, in this process. Every feed is new
  (one entry, "Hero k writes", published k minutes after T0) and answers after 0.35 s
  (0.2 s in the killed-worker test). The servers count the requests per path: that is
  what "fetched exactly once" counts;
- the web: `python -m gunicorn -c python:pbp.gunicorn_conf --workers 2 --threads 4
  'pbp:create_app()'` on a free loopback port (tests/deploy/web.py), on the same database,
  with an access log naming the worker process that answered each request. Before the
  cycle both web workers answer several requests for the planet (each over a connection
  of its own) with "No entries", so each has built and cached it; during the cycle a
  reader loads it every 0.2 s (every answer must be a 200); after the cycle, and after
  PBP_PAGE_RECHECK_SECONDS (1 s, the production default, for which a web process may serve
  visitors a page on a content version it read earlier), every answer from either worker
  must list the 50 newest entries, "Hero 1950 writes" to "Hero 1999 writes", and no
  other. PBP_PAGE_CACHE_SECONDS is raised to an hour in gunicorn's environment, so only
  the content version's bump, not the cache's time limit, can retire the empty page;
- the killed-worker test: the victim is SIGKILLed after 300 polls of its first pass of 500
  (so it has renewed its leases); the survivor polls its own share and, once the victim's
  leases run out, the victim's orphans.

PostgreSQL only (SQLite has one writer and no SKIP LOCKED: multi-worker polling is a
PostgreSQL deployment); skipped without PBP_TEST_DATABASE_URL. About 90 s on two cores:
about 40 s for each polling test (CPU-bound: 2,000 first polls, each parsing a feed and
storing an entry), 10 s for the rest.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.models import Blog, Campaign, Character, Entry, Membership, OutboxMessage, Turn, User
from pbp.services import campaigns
from pbp.services.noteworthy import polling, turns
from pbp.services.noteworthy.planet import PAGE_SIZE
from tests.deploy.web import WORKERS, Response, Web
from tests.factories import make_campaign, make_characters
from tests.feedserver import FeedServer
from tests.smtpserver import SmtpServer

pytestmark = [pytest.mark.slow, pytest.mark.db]

HOSTS = 200
PER_HOST = 10  # 2,000 feeds on 127.0.1.1-127.0.1.200 (the benchmarks use 127.0.0.2-201)
# The lease (10 min in production) is renewed every third of itself while a pass runs
# (polling.claims.Renewal), so it no longer has to outlast a whole claimed batch, only a third of
# itself plus the longest request and the pass's last record write: here 1 s against
# answers of at most 0.35 s. It still bounds how long a killed worker's feeds wait.
LEASE_SECONDS = 3.0
# The drivers claim 500 feeds a pass (tests/deploy/driver.py), so two workers share the
# 2,000. On the event loop a pass of 500 over 0.35 s answers, parsing and storing every new
# entry, lasts about 4 s on two cores: longer than the lease, so every feed fetched once
# needs the renewals, while the lanes fetch and while the worker threads still store (with
# the store's renewals missing, hundreds of new feeds were fetched twice by the other worker).
CYCLE_DELAY = 0.35
# The killed-worker test: 0.2 s an answer, the victim killed once it has polled KILL_AFTER
# feeds of its first batch of 500, at least 300 x 0.2 / 16 = 3.75 s into the pass: past a
# third of the lease, so it renewed its leases before it died.
KILL_DELAY = 0.2
KILL_AFTER = 300
# Visitors may be served a planet on a content version this old (pbp.web.page_cache): the
# production default, set explicitly because the test waits it out before its final reads.
RECHECK_SECONDS = 1.0
# The cache's time limit (60 s in production), raised so that only a content version's bump
# can retire the cached empty planet: were it to age out, a rebuild would show the entries
# even with invalidation broken.
PAGE_CACHE_SECONDS = 3600
T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
TITLE = re.compile(r"Hero (\d+) writes")


def _rss(k: int, base: str) -> bytes:
    # Feed k's entry is published k minutes after T0: the planet's newest are the last ids.
    published = format_datetime(T0 + timedelta(minutes=k), usegmt=True)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
        f"<title>Hero {k}</title><link>{base}/hero-{k}/</link><description>d</description>"
        f"<item><title>Hero {k} writes</title><link>{base}/hero-{k}/1.html</link>"
        f'<guid isPermaLink="false">hero-{k}-1</guid>'
        f"<pubDate>{published}</pubDate>"
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
        # Together: each waits for its server's loop to notice (up to its poll interval).
        with ThreadPoolExecutor(32) as pool:
            list(pool.map(FeedServer.stop, self.servers))


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


@pytest.fixture
def web(pg_url, tmp_path):
    """gunicorn as the Procfile runs it, on the workers' database."""
    env = {
        "PBP_PAGE_RECHECK_SECONDS": str(RECHECK_SECONDS),
        "PBP_PAGE_CACHE_SECONDS": str(PAGE_CACHE_SECONDS),
    }
    server = Web(pg_url, tmp_path / "web", env)
    yield server
    server.stop()


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


def _blog_campaign(engine, urls: list[str], cleanup) -> tuple[Campaign, list[int]]:
    """A committed campaign with one external blog per url; returns (campaign, blog ids in
    url order)."""
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
    return campaign, [by_url[url] for url in urls]


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


def _log(workers, name: str) -> list[dict]:
    return [json.loads(line) for line in workers.lines(name)]


def _polled_by(workers, name: str) -> Counter[int]:
    return Counter(r["blog"] for r in _log(workers, name) if "blog" in r)


def _poll_args(owner: str, campaign_id: int) -> list[str]:
    return ["--owner", owner, "--campaign", str(campaign_id), "--lease", str(LEASE_SECONDS)]


# --- the planet on gunicorn ----------------------------------------------------------------
def _titles(page: str) -> set[int]:
    """k of every "Hero k writes" (entry titles: nothing else on the planet says "writes")."""
    return {int(k) for k in TITLE.findall(page)}


def _from_both_workers(
    web: Web, path: str, each: int = 3, timeout: float = 30
) -> list[tuple[Response, int | None]]:
    """(response, pid of the web worker that served it), 4 requests at a time, each over a
    connection of its own, until both gunicorn workers have answered `each` of them."""
    served: list[tuple[Response, int | None]] = []
    deadline = time.monotonic() + timeout
    with ThreadPoolExecutor(4) as pool:
        while True:
            responses = list(pool.map(lambda _: web.get(path), range(4)))
            pids = web.served_by([r.probe for r in responses if r.status])
            served += [(r, pids.get(r.probe)) for r in responses]
            per_worker = Counter(pid for _, pid in served if pid)
            if len(per_worker) == WORKERS and min(per_worker.values()) >= each:
                return served
            if time.monotonic() > deadline:
                pytest.fail(f"requests reached {dict(per_worker)}, not both workers")


class Readers:
    """Threads loading a page from gunicorn over and over (a pause between two), until stopped."""

    def __init__(self, web: Web, path: str, threads: int = 1, pause: float = 0.2) -> None:
        self.web, self.path, self.pause = web, path, pause
        self.responses: list[Response] = []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._read) for _ in range(threads)]
        for thread in self.threads:
            thread.start()

    def _read(self) -> None:
        while not self.stopping.is_set():
            self.responses.append(self.web.get(self.path))
            time.sleep(self.pause)

    def stop(self) -> list[Response]:
        self.stopping.set()
        for thread in self.threads:
            thread.join(60)
        return self.responses


def test_two_workers_fetch_every_feed_exactly_once(pg_engine, feeds_factory, cleanup, web, workers):
    feeds = feeds_factory(delay=CYCLE_DELAY)
    campaign, blog_ids = _blog_campaign(pg_engine, feeds.urls, cleanup)
    planet = f"/c/{campaign.slug}/"
    newest = set(range(len(blog_ids) - PAGE_SIZE, len(blog_ids)))

    # Before the cycle each web worker has built the empty planet and served it again from
    # its cache (its first answer builds it, the others are cache hits).
    web.wait_ready(planet)
    before = _from_both_workers(web, planet)
    assert all(r.status == 200 and "No entries" in r.body for r, _ in before)
    assert not any(_titles(r.body) for r, _ in before)

    for name in ("a", "b"):
        workers.start(name, "poll", *_poll_args(name, campaign.id))
    workers.go_when_ready()
    started = time.monotonic()
    readers = Readers(web, planet)
    try:
        _wait_until_all_polled(pg_engine, blog_ids, workers, timeout=120)
        seconds = time.monotonic() - started
        time.sleep(1.0)  # any duplicate fetch would show up here
        workers.stop_all()  # every poll committed, every content version bumped
    finally:
        during = readers.stop()
    # Past the time a web process may trust the content version it read last, every
    # visitor gets the polled planet from either worker.
    time.sleep(RECHECK_SECONDS + 0.5)
    after = _from_both_workers(web, planet)

    counts = Counter({k: feeds.count(k) for k in range(len(feeds.urls))})
    by_a, by_b = _polled_by(workers, "a"), _polled_by(workers, "b")
    passes = {n: [r["seconds"] for r in _log(workers, n) if "pass" in r] for n in "ab"}
    shown = Counter(len(_titles(r.body)) for r in during if r.status == 200)
    rounded = {n: [round(s, 1) for s in p] for n, p in passes.items()}
    print(
        f"\n{len(blog_ids)} feeds, 2 workers: {seconds:.1f} s; a={len(by_a)} b={len(by_b)};"
        f" passes (s) {rounded}"
        f"\nplanet during the cycle: {len(during)} loads, entries shown {sorted(shown.items())};"
        f" before/after: {len(before)}/{len(after)} loads by web workers"
        f" {sorted(Counter(pid for _, pid in before + after).items())}"
    )
    assert sorted(set(counts.values())) == [1], {k: c for k, c in counts.items() if c != 1}
    assert by_a.keys().isdisjoint(by_b.keys())
    assert by_a.keys() | by_b.keys() == set(blog_ids)
    assert max((by_a + by_b).values()) == 1
    # Both took part: exactly-once would be trivial if one worker did everything.
    assert by_a and by_b
    lines = [r for n in "ab" for r in _log(workers, n)]
    statuses = Counter(r["status"] for r in lines if "status" in r)
    assert statuses == {"ok": len(blog_ids)}, [r for r in lines if r.get("status") != "ok"][:5]
    # Both first passes (500 feeds each) outlasted the lease: exactly once held through
    # lease renewals.
    assert min(p[0] for p in passes.values()) > LEASE_SECONDS

    # The web: every load answered, and the cycle's commits, made in other processes,
    # retired both web workers' cached empty planet.
    failed = [(r.status, r.body[:300]) for r in during if r.status != 200]
    assert not failed, failed
    assert len(during) > 10
    for response, pid in after:
        assert response.status == 200
        assert "No entries" not in response.body, f"web worker {pid} still serves no entries"
        assert _titles(response.body) == newest, f"web worker {pid}"
    # No web worker died or was replaced meanwhile.
    assert {pid for _, pid in before + after} == set(web.booted())
    assert len(web.booted()) == WORKERS
    assert "Traceback" not in web.output()


def test_killed_worker_is_covered_by_the_other_after_the_lease(
    pg_engine, feeds_factory, cleanup, workers
):
    feeds = feeds_factory(delay=KILL_DELAY)
    campaign, blog_ids = _blog_campaign(pg_engine, feeds.urls, cleanup)
    k_of = {blog_id: k for k, blog_id in enumerate(blog_ids)}
    for name in ("victim", "survivor"):
        workers.start(name, "poll", *_poll_args(name, campaign.id))
    workers.go_when_ready()

    # Kill mid-batch: after KILL_AFTER polls, at a moment the victim holds at least 10
    # leases (with 0.2 s a feed, it cannot finish those in the few ms between check and kill).
    deadline = time.monotonic() + 60
    while len(_polled_by(workers, "victim")) < KILL_AFTER or _leased_by(pg_engine, "victim") < 10:
        assert time.monotonic() < deadline, "never caught the victim in the middle of a batch"
        time.sleep(0.02)
    workers.kill("victim")
    killed_at = datetime.now(UTC)
    at_kill = _blogs(pg_engine, blog_ids)
    # What the victim held at death: claimed, not committed (in flight or not yet fetched).
    orphaned = {i for i, b in at_kill.items() if b.lease_owner == "victim"}
    committed_before = {i for i, b in at_kill.items() if b.last_polled_at is not None}
    assert orphaned, "the kill missed the middle of a pass: the victim held no lease"

    _wait_until_all_polled(pg_engine, blog_ids, workers, timeout=120)
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
    # The victim had renewed those leases, a third of a lease or more after its claim (made
    # after its start line), and still they ran out within a lease of its death.
    (started,) = [r["start"] for r in _log(workers, "victim") if "start" in r]
    renewed = LEASE_SECONDS * (1 + 1 / polling.RENEWALS_PER_LEASE) - 0.01
    assert lease_end >= datetime.fromtimestamp(started, UTC) + timedelta(seconds=renewed)
    assert all(b.last_polled_at is not None and b.lease_owner is None for b in final.values())


# --- turn advancement -----------------------------------------------------------------------
NOW = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)


def test_two_processes_advance_each_due_campaign_once(pg_engine, cleanup, workers):
    count = 40
    ids = []
    with Session(pg_engine, expire_on_commit=False) as session:
        for _ in range(count):
            # As tests/services/noteworthy/test_cadence.py: six characters, nothing posted, so the
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


# --- daily digests --------------------------------------------------------------------------


def test_two_processes_queue_each_digest_once(pg_engine, cleanup, workers):
    """Two workers' hourly digest jobs at the same moment: each member gets one digest for
    the day (the outbox's unique dedupe key; the loser of a race reads the winner's row)."""
    ids = []
    with Session(pg_engine, expire_on_commit=False) as session:
        for _ in range(20):
            campaign = make_campaign(session)
            campaign.status = "running"
            session.add(campaign)
            characters = make_characters(session, campaign)
            members = session.exec(
                select(Membership).where(Membership.campaign_id == campaign.id)
            ).all()
            for membership in members:
                membership.notify = {"digest": True}
                session.add(membership)
            author = characters[0]
            blog = session.exec(select(Blog).where(Blog.character_id == author.id)).one()
            session.add(
                Entry(
                    blog_id=blog.id,
                    character_id=author.id,
                    source_id="digest-1",
                    title="Yesterday's news",
                    first_seen_at=NOW - timedelta(days=1),
                    content_hash="h",
                )
            )
            session.commit()
            ids.append(campaign.id)
    cleanup["campaigns"].extend(ids)

    for name in ("a", "b"):
        workers.start(name, "digest", "--now", NOW.isoformat())
    workers.go_when_ready()
    for name in ("a", "b"):
        assert workers.wait(name) == 0, workers.stderr(name)

    with Session(pg_engine) as session:
        members = session.exec(
            select(sa.func.count()).select_from(Membership).where(Membership.campaign_id.in_(ids))
        ).one()
        keys = session.exec(
            select(OutboxMessage.dedupe_key).where(
                OutboxMessage.campaign_id.in_(ids), OutboxMessage.kind == "digest"
            )
        ).all()
    print(f"\n{len(ids)} campaigns, {members} members, 2 processes: {len(keys)} digests")
    assert len(keys) == members == len(set(keys))


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
