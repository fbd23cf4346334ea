"""The passes that run the pipeline: claim (polling.claims), fetch, decide (polling.decide),
read (polling.read), store (polling.store); and one blog's poll, and a pushed feed.

A pass waits on slow blogs (200-1,000 ms an answer), so its fetches run on one event loop,
hundreds in flight (adapters.fetch_async, PBP_POLL_CONCURRENCY); a changed feed is parsed
and stored in a few worker threads. PBP_POLL_CONCURRENCY=0 keeps the threaded pass (a
blocking request per thread; the benchmark compares the two). `poll_blog` (one feed, from a
web request) fetches with the synchronous Fetcher.

Between the stages a feed's poll travels as a `FeedPoll` (its job, what the fetch found, the
decision so far, what reading it brought); what a pass's feeds share travels as a `Pass`.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import defaultdict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TypeVar
from urllib.parse import urlsplit

from sqlalchemy.engine import Engine

from adapters import FeedFetcher, Fetcher, FetchResult, deadline
from adapters.fetch_async import AsyncFetcher, event_loop
from pbp import content_version
from pbp.models import utcnow
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy.polling.claims import LEASE, Renewal, claim_due, no_renewal
from pbp.services.noteworthy.polling.decide import (
    Action,
    Decision,
    Job,
    Reading,
    after_fetch,
    after_push,
    after_read,
    poll_interval,
)
from pbp.services.noteworthy.polling.jobs import comment_counts, load_jobs
from pbp.services.noteworthy.polling.read import read_changed, read_pushed
from pbp.services.noteworthy.polling.store import (
    PollOutcome,
    Records,
    release_after_error,
    store,
    write_records,
)
from pbp.services.noteworthy.push_limits import DayBudget

# Requests in flight in a pass (PBP_POLL_CONCURRENCY); 0 polls with `threads` threads instead,
# one blocking request each (the pre-asyncio pass, kept for comparison in tests/bench).
DEFAULT_CONCURRENCY = 256
# Feeds one async pass claims: the scheduler runs a pass a minute, and one pass of 500 left a
# worker polling 500 feeds a minute; a bigger batch also mixes more hosts, so fewer feeds
# wait on their host's per-host limit.
ASYNC_CLAIM = 2000
THREADED_CLAIM = 500
# Worker threads of an async pass (at most PBP_POLL_THREADS): parsing is CPU work under the
# GIL, and more threads only took turns with the event loop (measured: 16 no faster than 4).
ASYNC_WORKERS = 4

T = TypeVar("T")


@dataclass(frozen=True)
class Pass:
    """What the feeds of a pass share (and one blog's poll: `poll_blog`). `records`: the
    pass's batch of nothing-new poll records (None: each written at once); `bumps`: its
    content-version batch; `renew`: called before each fetch (polling.claims.Renewal)."""

    engine: Engine
    clock: Callable[[], datetime] = utcnow
    mail: MailSettings | None = None
    records: Records | None = None
    bumps: content_version.Batch | None = None
    renew: Callable[[], None] = no_renewal


@dataclass(frozen=True, slots=True)
class FeedPoll:
    """One feed's poll between stages: its job, what the fetch found and when, the decision
    so far, and what reading the feed brought (nothing until `read`)."""

    job: Job
    result: FetchResult
    now: datetime
    decision: Decision
    reading: Reading = field(default_factory=Reading)


def poll_blog(
    *,
    engine: Engine,
    blog_id: int,
    fetcher: FeedFetcher,
    now: datetime | None = None,
    mail: MailSettings | None = None,
) -> PollOutcome:
    """Fetch one blog and store everything it teaches in one transaction."""
    (job,) = load_jobs(engine, [blog_id])
    return poll_feed(Pass(engine, mail=mail), job, fetcher, now or utcnow())


def store_pushed(
    *,
    engine: Engine,
    blog_id: int,
    body: bytes,
    headers: dict[str, str],
    now: datetime,
    mail: MailSettings | None = None,
    budget: DayBudget | None = None,
) -> PollOutcome:
    """A WebSub hub's delivery of the blog's feed (pbp.services.noteworthy.websub), parsed
    and stored as a poll's feed is. The poll record (validators, schedule, lease) is left
    alone: the next poll still compares with what it last fetched. `budget`: how many new
    entries it may store (pbp.services.noteworthy.push_limits)."""
    (job,) = load_jobs(engine, [blog_id])
    reading = read_pushed(body, headers, job.kind)
    decision = after_push(reading)
    outcome = PollOutcome(blog_id, decision.status, error=decision.error)
    outcome.parsed_documents = reading.parsed
    if decision.action is Action.STORE:
        outcome.report = store(engine, job, decision, now=now, mail=mail, budget=budget)
    return outcome


def poll_feed(run: Pass, job: Job, fetcher: FeedFetcher, now: datetime) -> PollOutcome:
    """One feed, start to end, in this thread."""
    run.renew()
    # One deadline for the feed, its further pages and its comment feeds: a blog that drips
    # its answers holds a lane for PBP_FETCH_TOTAL_SECONDS at most, not that per document.
    with fetcher.budget():
        result = fetcher.fetch(job.state, now, interval=poll_interval(job, now))
        decision = after_fetch(job, result, now)
        if decision.action is Action.NOTHING_NEW:
            return _nothing_new(run, job, decision)
        poll = read(run, FeedPoll(job, result, now, decision), fetcher)
    return settle(run, poll)


def _nothing_new(run: Pass, job: Job, decision: Decision) -> PollOutcome:
    assert decision.record is not None  # NOTHING_NEW: the poll record only
    outcome = PollOutcome(job.blog_id, decision.status, fetched_documents=1)
    if run.records is not None:
        run.records.add(decision.record, outcome)
    else:
        write_records(run.engine, [decision.record])
    return outcome


def read(run: Pass, poll: FeedPoll, fetcher: FeedFetcher) -> FeedPoll:
    """A feed the decider wants READ: parsed, its further documents fetched, decided again."""
    if poll.decision.action is not Action.READ:
        return poll
    job, result = poll.job, poll.result
    reading = read_changed(
        job,
        result,
        fetcher,
        now=poll.now,
        known_counts=functools.cache(functools.partial(comment_counts, run.engine, job.blog_id)),
        renew=run.renew,
    )
    return replace(poll, decision=after_read(job, result, reading, poll.now), reading=reading)


def settle(run: Pass, poll: FeedPoll) -> PollOutcome:
    """Carry out a RECORD or STORE decision (polling.store) and report it."""
    decision, reading = poll.decision, poll.reading
    outcome = PollOutcome(poll.job.blog_id, decision.status, error=decision.error)
    outcome.fetched_documents, outcome.parsed_documents = reading.fetched, reading.parsed
    outcome.report = store(
        run.engine, poll.job, decision, now=poll.now, mail=run.mail, bumps=run.bumps
    )
    return outcome


def poll_due(
    *,
    engine: Engine,
    fetcher: Fetcher,
    owner: str,
    threads: int = 16,
    concurrency: int = DEFAULT_CONCURRENCY,
    campaign_id: int | None = None,
    now: Callable[[], datetime] = utcnow,
    on_done: Callable[[PollOutcome], None] | None = None,
    lease: timedelta | None = None,
    progress: Callable[[int, int, PollOutcome], None] | None = None,
    mail: MailSettings | None = None,
    claim: int | None = None,
) -> list[PollOutcome]:
    """One pass over every due blog: `concurrency` requests in flight on an event loop
    (`async_pass`), or with `concurrency=0` a pool of `threads` threads. The per-host limit
    is enforced on every request; the work is split into lanes per host so that limit never
    idles the pool.

    `lease` defaults to LEASE and is renewed while the pass runs (polling.claims.Renewal).
    `progress(done, total, outcome)` is called once per feed as it finishes, `done` counting
    1..`total` (the feeds this pass claimed). With `mail`, the notes and challenges a feed
    brings are mailed to the players concerned (services.noteworthy.play_mail); without it
    (tools, tests of the fetching) nothing is mailed. `claim`: how many due feeds one pass
    takes (ASYNC_CLAIM on the event loop, THREADED_CLAIM with threads); other workers share
    what it leaves."""
    lease = lease or LEASE
    claimed_at = now()
    blog_ids = claim_due(
        engine=engine,
        now=claimed_at,
        owner=owner,
        limit=claim or (ASYNC_CLAIM if concurrency else THREADED_CLAIM),
        campaign_id=campaign_id,
        lease=lease,
    )
    if not blog_ids:
        return []
    records = Records(engine)
    bumps = content_version.Batch(engine)
    renew = Renewal(
        engine=engine, owner=owner, blog_ids=blog_ids, lease=lease, clock=now,
        claimed_at=claimed_at,
    )  # fmt: skip
    run = Pass(engine, clock=now, mail=mail, records=records, bumps=bumps, renew=renew)
    report = Reports(len(blog_ids), on_done, progress)
    host_lanes = lanes(load_jobs(engine, blog_ids), fetcher.max_per_host)
    try:
        if concurrency:
            loop = event_loop(fetcher, limit=concurrency)
            workers = min(threads, ASYNC_WORKERS)
            return loop.run(
                async_pass(run, loop.client, host_lanes, records, report=report, workers=workers)
            )
        return threaded_pass(run, fetcher, host_lanes, report=report, threads=threads)
    finally:
        records.flush()
        bumps.close()


def lanes(jobs: list[Job], per_host: int | None) -> list[list[Job]]:
    """Each host's blogs split into as many lanes as the per-host limit allows; one thread
    polls a lane's blogs one after another. A lane never waits for its host's limit, so no
    thread idles, and it reuses its keep-alive connection (a TLS handshake saved per feed).
    Longest lanes first, so a big host does not finish the pass alone."""
    by_host: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        by_host[urlsplit(job.feed_url or "").hostname or ""].append(job)
    host_lanes = []
    for host_jobs in by_host.values():
        count = min(per_host or len(host_jobs), len(host_jobs))
        host_lanes += [host_jobs[i::count] for i in range(count)]
    return sorted(host_lanes, key=len, reverse=True)


class Reports:
    """Hands each finished feed to `on_done` and `progress`, one call at a time: the lanes'
    threads finish feeds concurrently, and a progress bar is not thread-safe."""

    def __init__(
        self,
        total: int,
        on_done: Callable[[PollOutcome], None] | None,
        progress: Callable[[int, int, PollOutcome], None] | None,
    ) -> None:
        self.total, self.done = total, 0
        self.on_done, self.progress = on_done, progress
        self.lock = threading.Lock()

    def __call__(self, outcome: PollOutcome) -> PollOutcome:
        with self.lock:
            self.done += 1
            if self.on_done:
                self.on_done(outcome)
            if self.progress:
                self.progress(self.done, self.total, outcome)
        return outcome


def threaded_pass(
    run: Pass, fetcher: FeedFetcher, host_lanes: list[list[Job]], *, report: Reports, threads: int
) -> list[PollOutcome]:
    """The lanes on a pool of `threads` threads, one blocking request each."""

    def work(lane: list[Job]) -> list[PollOutcome]:
        return [report(_poll_in_pass(run, job, fetcher)) for job in lane]

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="poll") as pool:
        return [outcome for done in pool.map(work, host_lanes) for outcome in done]


def _poll_in_pass(run: Pass, job: Job, fetcher: FeedFetcher) -> PollOutcome:
    try:
        return poll_feed(run, job, fetcher, run.clock())
    except Exception as exc:  # one broken feed must not stop the pass
        error = _describe(exc)
        release_after_error(run.engine, blog_id=job.blog_id, error=error, now=run.clock())
        return PollOutcome(job.blog_id, "error", error=error)


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


async def async_pass(
    run: Pass,
    client: AsyncFetcher,
    host_lanes: list[list[Job]],
    records: Records,
    *,
    report: Reports,
    workers: int,
) -> list[PollOutcome]:
    """The lanes as coroutines on the fetcher's event loop: up to `client.limit` requests in
    flight from one thread (adapters.fetch_async), on connections kept from pass to pass.
    The loop only fetches and classifies. A changed feed's parse, further fetches and
    transaction, and each batch of poll records, go to a pool of `workers` threads, and its
    lane fetches its next feed meanwhile: no parse or database work holds up the loop or a
    lane."""
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="poll") as pool:
        lanes_on_loop = _LanesOnLoop(run, client, records, report=report, pool=pool)
        await asyncio.gather(*(lanes_on_loop.lane(jobs) for jobs in host_lanes))
        await asyncio.gather(*lanes_on_loop.background)  # changed feeds still fetch on the loop
    return lanes_on_loop.outcomes


class _LanesOnLoop:
    """One async pass's lanes, created on its running loop (`async_pass`)."""

    def __init__(
        self,
        run: Pass,
        client: AsyncFetcher,
        records: Records,
        *,
        report: Reports,
        pool: ThreadPoolExecutor,
    ) -> None:
        self.run, self.client, self.records, self.report = run, client, records, report
        self.pool = pool
        self.loop = asyncio.get_running_loop()
        self.gate = asyncio.Semaphore(client.limit)
        self.in_thread = client.blocking()  # the workers' further fetches, on this loop
        self.background: list[asyncio.Future[object]] = []
        self.outcomes: list[PollOutcome] = []

    def in_pool(self, work: Callable[[], T]) -> asyncio.Future[T]:
        return self.loop.run_in_executor(self.pool, work)

    async def lane(self, jobs: list[Job]) -> None:
        for job in jobs:
            await self.settle(job, self.poll(job))

    async def settle(self, job: Job, work: Awaitable[PollOutcome | None]) -> None:
        try:
            outcome = await work
        except Exception as exc:  # one broken feed must not stop the pass
            error = _describe(exc)
            outcome = PollOutcome(job.blog_id, "error", error=error)
            release = functools.partial(
                release_after_error, self.run.engine, blog_id=job.blog_id, error=error,
                now=self.run.clock(),
            )  # fmt: skip
            await self.in_pool(release)
        if outcome is not None:  # None: handed to a worker, settled when it is done
            self.outcomes.append(self.report(outcome))

    async def poll(self, job: Job) -> PollOutcome | None:
        run = self.run
        run.renew()
        when = run.clock()
        started = self.loop.time()
        async with self.gate:
            result = await self.client.fetch(job.state, when, interval=poll_interval(job, when))
        decision = after_fetch(job, result, when)
        if decision.action is Action.NOTHING_NEW:
            assert decision.record is not None  # NOTHING_NEW: the poll record only
            outcome = PollOutcome(job.blog_id, decision.status, fetched_documents=1)
            batch = self.records.take(decision.record, outcome)
            if batch:
                self.background.append(self.in_pool(functools.partial(self.records.write, batch)))
            return outcome
        left = self.client.config.total_timeout - (self.loop.time() - started)
        poll = FeedPoll(job, result, when, decision)
        rest = self.in_pool(functools.partial(_finish, run, poll, self.in_thread, left=left))
        self.background.append(asyncio.ensure_future(self.settle(job, rest)))
        return None


def _finish(run: Pass, poll: FeedPoll, fetcher: FeedFetcher, *, left: float) -> PollOutcome:
    """In a worker thread: the rest of `poll_feed` for a feed with something to write, its
    further fetches within what is left of the blog's deadline.

    It renews the pass's leases too (at most once a third of a lease, see Renewal): once the
    lanes have fetched everything, the pass may still be parsing and storing changed feeds
    for longer than a lease (a first poll of thousands of new feeds), and only these threads
    are still working then. Without it another worker would claim the feeds whose poll is
    not committed yet and fetch them a second time."""
    run.renew()
    with deadline.deadline(max(left, 0)):
        poll = read(run, poll, fetcher)
    run.renew()
    return settle(run, poll)
