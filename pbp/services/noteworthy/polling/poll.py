"""One feed through the pipeline's stages: fetch, decide (polling.decide), read
(polling.read), decide again, store (polling.store). `poll_blog` polls one blog (from a web
request, with the synchronous Fetcher); `store_pushed` stores a WebSub delivery; the passes
(polling.passes, polling.on_loop) run the same stages for every due feed.

Between the stages a feed's poll travels as a `FeedPoll` (its job, what the fetch found, the
decision so far, what reading it brought); what a pass's feeds share travels as a `Pass`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from sqlalchemy.engine import Engine

from adapters import FeedFetcher, FetchResult
from pbp import content_version
from pbp.models import utcnow
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy.polling.claims import no_renewal
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
from pbp.services.noteworthy.polling.store import PollOutcome, Records, store, write_records
from pbp.services.noteworthy.push_limits import DayBudget


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


def describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"
