"""A polling pass at scale: lanes per host, batched poll records, leases and their renewal.

Real loopback feed servers and a real database (SQLite, or PostgreSQL with
PBP_TEST_DATABASE_URL); the passes commit, so each test builds its own campaign and deletes it
afterwards, and every claim is scoped to that campaign. Time is a settable clock handed to the
pass, so lease expiry and renewal are exact rather than slept for.
"""

from __future__ import annotations

import uuid
from collections import Counter
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from adapters import Fetcher
from adapters.fetch import FeedState
from pbp.config import load_config
from pbp.models import Blog, Campaign
from pbp.services import campaigns
from pbp.services.noteworthy import polling
from tests.feedserver import FeedServer

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=20)  # everything polled at T0 is due again
LEASE = timedelta(seconds=60)


class Clock:
    """The pass's `now`: stays put until a test moves it."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    def advance(self, **delta: float) -> None:
        self.at += timedelta(**delta)


def rss(name: str, base: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
        f"<title>{name}</title><link>{base}/{name}/</link><description>d</description>"
        f"<item><title>{name} writes</title><link>{base}/{name}/1.html</link>"
        f'<guid isPermaLink="false">{name}-1</guid>'
        "<pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate>"
        "<description>The lamps gutter in the east wing.</description></item>"
        "</channel></rss>"
    ).encode()


def serve(server: FeedServer, count: int, delay: float = 0.0) -> list[str]:
    """`count` feeds on `server`, each with an ETag (so a second poll is a 304)."""
    return [
        server.add(
            f"/feed-{k}.xml",
            body=rss(f"feed-{k}", server.base_url),
            etag='"v1"',
            delay=delay,
            content_type="application/rss+xml",
        )
        for k in range(count)
    ]


@pytest.fixture
def servers():
    started = [FeedServer(host).start() for host in ("127.0.0.1", "127.0.0.2")]
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def make_game(engine):
    """make_game(urls) -> (campaign id, blog ids in url order): a committed campaign with one
    character blogging at each url; deleted (with its blogs) after the test."""
    made = []

    def make(urls: list[str]) -> tuple[int, list[int]]:
        with Session(engine, expire_on_commit=False) as session:
            tag = uuid.uuid4().hex[:8]
            referee = campaigns.create_user(
                session=session, email=f"ref-{tag}@lanes.test", display_name="Ref"
            )
            campaign = campaigns.create_campaign(
                session=session, referee=referee, name=f"Lanes {tag}"
            )
            characters = [
                campaigns.add_character(
                    session=session, campaign=campaign, name=f"Hero {k}", feed_url=url
                )
                for k, url in enumerate(urls)
            ]
            session.commit()
            by_character = dict(
                session.exec(
                    select(Blog.character_id, Blog.id).where(
                        Blog.character_id.in_([c.id for c in characters])
                    )
                ).all()
            )
        made.append(campaign.id)
        return campaign.id, [by_character[c.id] for c in characters]

    yield make
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.id.in_(made)))
        session.commit()


@pytest.fixture
def fetcher():
    with Fetcher(allow_private=True, connect_timeout=1, read_timeout=5, max_per_host=2) as f:
        yield f


@pytest.fixture
def refuse_poll_record(engine):
    """refuse_poll_record(blog_id): from now on the database refuses any write of that blog's
    poll time (a trigger), as it would refuse a value it cannot store."""
    made = []
    postgres = engine.dialect.name == "postgresql"
    if postgres:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "CREATE OR REPLACE FUNCTION pbp_test_refuse() RETURNS trigger "
                    "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$"
                )
            )

    def refuse(blog_id: int) -> None:
        name = f"pbp_test_refuse_{blog_id}"
        when = f"BEFORE UPDATE OF last_polled_at ON blog FOR EACH ROW WHEN (NEW.id = {blog_id})"
        if postgres:
            ddl = f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION pbp_test_refuse()"
        else:
            refusal = "SELECT RAISE(ABORT, 'refused by the test');"
            ddl = f"CREATE TRIGGER {name} {when} BEGIN {refusal} END"
        with engine.begin() as conn:
            conn.execute(sa.text(ddl))
        made.append(name)

    yield refuse
    with engine.begin() as conn:
        for name in made:
            on_table = " ON blog" if postgres else ""
            conn.execute(sa.text(f"DROP TRIGGER IF EXISTS {name}{on_table}"))
        if postgres:
            conn.execute(sa.text("DROP FUNCTION IF EXISTS pbp_test_refuse()"))
    # SQLite: a pooled connection that saw the trigger made and dropped on another one
    # can read a stale schema (with FTS5's triggers on search_doc, "no such table" in the
    # cascade of the next delete): the next use of the engine starts on fresh connections.
    engine.dispose()


@contextmanager
def poll_record_writes(engine):
    """The UPDATE statements that write poll records during the block, as their row counts."""
    writes: list[int] = []

    def seen(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.lstrip().upper().startswith("UPDATE BLOG") and "last_polled_at" in statement:
            writes.append(len(parameters) if executemany else 1)

    sa.event.listen(engine, "before_cursor_execute", seen)
    try:
        yield writes
    finally:
        sa.event.remove(engine, "before_cursor_execute", seen)


def blogs(engine, ids: list[int]) -> dict[int, Blog]:
    with Session(engine) as session:
        return {b.id: b for b in session.exec(select(Blog).where(Blog.id.in_(ids)))}


def claim(engine, campaign_id: int, at: datetime, owner: str) -> list[int]:
    """Another worker's claim (or a first one), with the tests' lease."""
    ids = polling.claim_due(
        engine=engine, now=at, owner=owner, campaign_id=campaign_id, lease=LEASE
    )
    return sorted(ids)


# Every pass here runs on both paths: the event loop (the default) and the threaded pass
# (PBP_POLL_CONCURRENCY=0); each must keep the leases, lanes, limits and batched writes.
PASS = {"concurrency": polling.DEFAULT_CONCURRENCY}


@pytest.fixture(autouse=True, params=["async", "threads"])
def pass_path(request, monkeypatch) -> None:
    threads = request.param == "threads"
    monkeypatch.setitem(PASS, "concurrency", 0 if threads else polling.DEFAULT_CONCURRENCY)


def run_pass(engine, fetcher, campaign_id, clock, **kwargs) -> list[polling.PollOutcome]:
    kwargs.setdefault("concurrency", PASS["concurrency"])
    return polling.poll_due(
        engine=engine,
        fetcher=fetcher,
        owner=kwargs.pop("owner", "w1"),
        campaign_id=campaign_id,
        now=clock,
        **kwargs,
    )


@pytest.fixture
def polled_once(engine, make_game, fetcher):
    """polled_once(server, count) -> (campaign id, blog ids, clock): `count` feeds polled at
    T0 (200s); at T1, the clock's time, all are due again and will answer 304."""

    def poll(server: FeedServer, count: int) -> tuple[int, list[int], Clock]:
        campaign_id, ids = make_game(serve(server, count))
        clock = Clock(T0)
        first = run_pass(engine, fetcher, campaign_id, clock)
        assert sorted(o.status for o in first) == ["ok"] * count
        clock.at = T1
        return campaign_id, ids, clock

    return poll


# --- lanes ---------------------------------------------------------------------------------


def job(blog_id: int, url: str) -> polling.Job:
    return polling.Job(
        blog_id=blog_id, campaign_id=1, feed_url=url, state=FeedState(url), first_poll=False,
        kind=None, deadline=None,
    )  # fmt: skip


def test_lanes_split_each_host_by_the_per_host_limit() -> None:
    jobs = (
        [job(k, f"https://a.example/{k}") for k in range(5)]
        + [job(10 + k, f"https://b.example:8443/{k}") for k in range(3)]
        + [job(20, "https://c.example/feed")]
    )
    lanes = polling.passes.lanes(jobs, per_host=2)
    hosts = [{urlsplit(j.feed_url).hostname for j in lane} for lane in lanes]
    assert all(len(h) == 1 for h in hosts)  # a lane never mixes hosts
    lanes_per_host = Counter(host for (host,) in hosts)
    assert lanes_per_host == {"a.example": 2, "b.example": 2, "c.example": 1}
    assert sorted(j.blog_id for lane in lanes for j in lane) == sorted(j.blog_id for j in jobs)
    assert [len(lane) for lane in lanes] == [3, 2, 2, 1, 1]  # longest first


def test_without_a_per_host_limit_every_feed_is_its_own_lane() -> None:
    jobs = [job(k, f"https://a.example/{k}") for k in range(4)]
    assert [len(lane) for lane in polling.passes.lanes(jobs, per_host=None)] == [1, 1, 1, 1]


@pytest.mark.parametrize("per_host", [1, 2])
def test_a_pass_never_has_more_than_per_host_requests_on_one_host(
    engine, make_game, servers, per_host
) -> None:
    urls = [url for server in servers for url in serve(server, 4, delay=0.15)]
    campaign_id, ids = make_game(urls)
    with Fetcher(allow_private=True, read_timeout=5, max_per_host=per_host) as fetcher:
        outcomes = run_pass(engine, fetcher, campaign_id, Clock(T0), threads=16)
    assert sorted(o.blog_id for o in outcomes) == sorted(ids)
    assert {o.status for o in outcomes} == {"ok"}
    for server in servers:
        assert [server.count(f"/feed-{k}.xml") for k in range(4)] == [1, 1, 1, 1]
        # 16 threads for 8 feeds, yet each host saw exactly per_host requests at once
        assert server.peak_in_flight == per_host


# --- batched poll records ------------------------------------------------------------------


def test_unchanged_feeds_are_recorded_in_one_batched_write(
    engine, polled_once, servers, fetcher
) -> None:
    campaign_id, ids, clock = polled_once(servers[0], 8)
    with poll_record_writes(engine) as writes:
        outcomes = run_pass(engine, fetcher, campaign_id, clock)
    assert sorted(o.status for o in outcomes) == ["not_modified"] * 8
    assert writes == [8]  # one statement, eight rows, one transaction
    for blog in blogs(engine, ids).values():
        assert blog.last_polled_at == T1 and blog.next_poll_at > T1
        assert (blog.lease_owner, blog.lease_until) == (None, None)


def test_unchanged_feeds_are_written_record_batch_at_a_time(
    engine, polled_once, servers, fetcher, monkeypatch
) -> None:
    campaign_id, ids, clock = polled_once(servers[0], 8)
    monkeypatch.setattr(polling.store, "RECORD_BATCH", 3)
    with poll_record_writes(engine) as writes:
        run_pass(engine, fetcher, campaign_id, clock)
    assert sorted(writes) == [2, 3, 3]
    assert {b.last_polled_at for b in blogs(engine, ids).values()} == {T1}


def test_a_feed_that_fails_to_store_loses_no_other_feeds_write(
    engine, polled_once, servers, fetcher, refuse_poll_record
) -> None:
    server = servers[0]
    campaign_id, ids, clock = polled_once(server, 6)
    # feed 0 changed since T0, and storing it fails; the five others answer 304
    server.add("/feed-0.xml", body=rss("feed-0", server.base_url) + b"\n", etag='"v2"')
    refuse_poll_record(ids[0])
    with poll_record_writes(engine) as writes:
        outcomes = {o.blog_id: o for o in run_pass(engine, fetcher, campaign_id, clock)}
    assert outcomes[ids[0]].status == "error" and "refused by the test" in outcomes[ids[0]].error
    assert [outcomes[i].status for i in ids[1:]] == ["not_modified"] * 5
    assert writes.count(5) == 1  # the five unchanged feeds, still one batch
    stored = blogs(engine, ids)
    broken = stored[ids[0]]
    assert "refused by the test" in broken.last_error and broken.failure_count == 1
    assert broken.lease_owner is None and broken.next_poll_at == T1 + polling.DEFAULT_INTERVAL
    for blog_id in ids[1:]:
        assert stored[blog_id].last_polled_at == T1 and stored[blog_id].lease_owner is None


def test_a_poll_record_the_database_refuses_costs_only_its_own_feed(
    engine, polled_once, servers, fetcher, refuse_poll_record
) -> None:
    campaign_id, ids, clock = polled_once(servers[0], 6)
    refused = ids[2]
    refuse_poll_record(refused)
    with poll_record_writes(engine) as writes:
        outcomes = {o.blog_id: o for o in run_pass(engine, fetcher, campaign_id, clock)}
    assert writes == [6, 1, 1, 1, 1, 1, 1]  # the batch failed; then one by one
    assert outcomes[refused].status == "error"
    assert "poll record not saved" in outcomes[refused].error
    assert [outcomes[i].status for i in ids if i != refused] == ["not_modified"] * 5
    stored = blogs(engine, ids)
    for blog_id in ids:
        if blog_id != refused:
            assert stored[blog_id].last_polled_at == T1 and stored[blog_id].lease_owner is None
    # the refused feed keeps its lease, which runs out; then it is claimed again, alone
    assert stored[refused].last_polled_at == T0 and stored[refused].lease_owner == "w1"
    later = T1 + polling.LEASE + timedelta(seconds=1)
    again = polling.claim_due(engine=engine, now=later, owner="w2", campaign_id=campaign_id)
    assert again == [refused]


# --- leases --------------------------------------------------------------------------------


def test_the_lease_setting_defaults_to_the_service_default(tmp_path) -> None:
    default = load_config(tmp_path, {"SECRET_KEY": "k" * 40})
    assert polling.lease_from_config(default) == polling.LEASE == timedelta(seconds=600)
    custom = load_config(tmp_path, {"SECRET_KEY": "k" * 40, "PBP_POLL_LEASE_SECONDS": "90"})
    assert polling.lease_from_config(custom) == timedelta(seconds=90)


def test_a_long_pass_renews_its_leases_so_no_feed_is_claimed_twice(
    engine, polled_once, servers
) -> None:
    server = servers[0]
    campaign_id, ids, clock = polled_once(server, 3)
    seen = []

    def second_worker_tries(outcome) -> None:
        # each feed takes 40 s of the pass's time; the lease is 60 s
        clock.advance(seconds=40)
        stolen = claim(engine, campaign_id, clock(), "w2")
        leases = {b.lease_owner: b.lease_until for b in blogs(engine, ids).values()}
        seen.append((stolen, leases))

    with Fetcher(allow_private=True, read_timeout=5, max_per_host=1) as one_lane:
        outcomes = run_pass(
            engine, one_lane, campaign_id, clock, lease=LEASE, on_done=second_worker_tries
        )
    assert [stolen for stolen, _ in seen] == [[], [], []]
    # claimed at T1 until T1+60; renewed before feed 2 (at T1+40) and feed 3 (at T1+80)
    assert [leases for _, leases in seen] == [
        {"w1": T1 + LEASE},
        {"w1": T1 + timedelta(seconds=40) + LEASE},
        {"w1": T1 + timedelta(seconds=80) + LEASE},
    ]
    assert sorted(o.status for o in outcomes) == ["not_modified"] * 3
    assert [server.count(f"/feed-{k}.xml") for k in range(3)] == [2, 2, 2]  # T0 and T1 only
    assert {(b.lease_owner, b.lease_until) for b in blogs(engine, ids).values()} == {(None, None)}


def test_an_expired_lease_is_claimed_again(engine, make_game, servers) -> None:
    campaign_id, ids = make_game(serve(servers[0], 2))
    assert claim(engine, campaign_id, T0, "w1") == sorted(ids)
    # w1 died: nothing renews its leases
    assert claim(engine, campaign_id, T0 + LEASE - timedelta(seconds=1), "w2") == []
    assert claim(engine, campaign_id, T0 + LEASE + timedelta(seconds=1), "w2") == sorted(ids)
    assert {b.lease_owner for b in blogs(engine, ids).values()} == {"w2"}


def test_a_dead_workers_leases_expire_a_lease_after_its_last_renewal(
    engine, make_game, servers
) -> None:
    campaign_id, ids = make_game(serve(servers[0], 3))
    claim(engine, campaign_id, T0, "w1")
    renewed_at = T0 + timedelta(seconds=50)
    renewed = polling.renew_leases(
        engine=engine, blog_ids=ids, owner="w1", now=renewed_at, lease=LEASE
    )
    assert renewed == 3
    # then w1 dies: its feeds are free a lease after the last renewal, not after the claim
    assert claim(engine, campaign_id, T0 + LEASE + timedelta(seconds=1), "w2") == []
    assert claim(engine, campaign_id, renewed_at + LEASE - timedelta(seconds=1), "w2") == []
    assert claim(engine, campaign_id, renewed_at + LEASE + timedelta(seconds=1), "w2") == sorted(
        ids
    )


def test_renewal_never_takes_back_a_feed_another_worker_claimed(engine, make_game, servers) -> None:
    campaign_id, ids = make_game(serve(servers[0], 2))
    claim(engine, campaign_id, T0, "w1")
    took_over = T0 + LEASE + timedelta(seconds=1)  # w1 stalled past its lease
    assert claim(engine, campaign_id, took_over, "w2") == sorted(ids)
    renewed = polling.renew_leases(
        engine=engine, blog_ids=ids, owner="w1", now=took_over + timedelta(seconds=1), lease=LEASE
    )
    assert renewed == 0
    assert {(b.lease_owner, b.lease_until) for b in blogs(engine, ids).values()} == {
        ("w2", took_over + LEASE)
    }
