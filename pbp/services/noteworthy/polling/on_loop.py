"""A pass's lanes on the fetcher's event loop (adapters.fetch_async): the fetches of
hundreds of feeds in flight from one thread, the rest of a changed feed's poll (polling.poll)
in a few worker threads."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from adapters import FeedFetcher, deadline
from adapters.fetch_async import AsyncFetcher
from pbp.services.noteworthy.polling.decide import Action, Job, after_fetch, poll_interval
from pbp.services.noteworthy.polling.poll import FeedPoll, Pass, describe, read, settle
from pbp.services.noteworthy.polling.store import PollOutcome, Records, release_after_error

# Worker threads of an async pass (at most PBP_POLL_THREADS): parsing is CPU work under the
# GIL, and more threads only took turns with the event loop (measured: 16 no faster than 4).
ASYNC_WORKERS = 4

T = TypeVar("T")


async def async_pass(
    run: Pass,
    client: AsyncFetcher,
    host_lanes: list[list[Job]],
    records: Records,
    *,
    report: Callable[[PollOutcome], PollOutcome],
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
        report: Callable[[PollOutcome], PollOutcome],
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
            error = describe(exc)
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
