"""The passes over every due feed: claim them (polling.claims), load their jobs
(polling.jobs), split them into lanes per host, and poll each (polling.poll) on the
fetcher's event loop (polling.on_loop) or, with PBP_POLL_CONCURRENCY=0, on threads.

A pass waits on slow blogs (200-1,000 ms an answer), so its fetches run on one event loop,
hundreds in flight (adapters.fetch_async, PBP_POLL_CONCURRENCY); a changed feed is parsed
and stored in a few worker threads. The threaded pass (a blocking request per thread) is
kept for comparison: the benchmark runs both.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from sqlalchemy.engine import Engine

from adapters import FeedFetcher, Fetcher
from adapters.fetch_async import event_loop
from pbp import content_version
from pbp.models import utcnow
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy.polling.claims import LEASE, Renewal, claim_due
from pbp.services.noteworthy.polling.decide import Job
from pbp.services.noteworthy.polling.jobs import load_jobs
from pbp.services.noteworthy.polling.on_loop import ASYNC_WORKERS, async_pass
from pbp.services.noteworthy.polling.poll import Pass, describe, poll_feed
from pbp.services.noteworthy.polling.store import PollOutcome, Records, release_after_error

# Requests in flight in a pass (PBP_POLL_CONCURRENCY); 0 polls with `threads` threads instead,
# one blocking request each (the pre-asyncio pass, kept for comparison in tests/bench).
DEFAULT_CONCURRENCY = 256
# Feeds one async pass claims: the scheduler runs a pass a minute, and one pass of 500 left a
# worker polling 500 feeds a minute; a bigger batch also mixes more hosts, so fewer feeds
# wait on their host's per-host limit.
ASYNC_CLAIM = 2000
THREADED_CLAIM = 500


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
        error = describe(exc)
        release_after_error(run.engine, blog_id=job.blog_id, error=error, now=run.clock())
        return PollOutcome(job.blog_id, "error", error=error)
