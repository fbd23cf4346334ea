"""Poll players' external blogs: claim due feeds, fetch, parse, ingest, schedule the next.

Several worker processes can share the polling on PostgreSQL: due blogs are claimed with
`SELECT ... FOR UPDATE SKIP LOCKED` and a lease (`PBP_POLL_LEASE_SECONDS`), so no feed is
fetched twice at once and a dead worker's claim expires. A pass that runs long renews the
leases it still holds, so a slow pass never loses a feed to another worker mid-fetch. No
database transaction is held open during network I/O.

A pass waits on slow blogs (200-1,000 ms an answer), so its fetches run on one event loop,
hundreds in flight (adapters.fetch_async, PBP_POLL_CONCURRENCY); a changed feed is parsed
and stored in a few worker threads. PBP_POLL_CONCURRENCY=0 keeps the threaded pass (a
blocking request per thread; the benchmark compares the two). `poll_blog` (one feed, from a
web request) fetches with the synchronous Fetcher.

Most polls find nothing new (304 or identical bytes), so that path is kept cheap: a pass
reads what it needs for the whole batch in two queries, nothing is parsed, stored entries are
only read when a feed changed, connections are kept alive per host, and the poll records of
unchanged feeds are written a hundred to a transaction (one executemany).
tests/bench/test_bench_poll.py measures a pass.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from operator import itemgetter
from urllib.parse import urlsplit

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from adapters import FeedError, FeedState, Fetcher, FetchResult, FetchStatus, deadline, parse_feed
from adapters.base import ParsedFeed, comment_feed_due, normalize_identifier
from adapters.fetch_async import event_loop
from adapters.schedule import apply_ttl
from pbp import content_version
from pbp.db import writing
from pbp.models import AuditLog, Blog, Character, Entry, Turn, utcnow
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import play_mail, websub
from pbp.services.noteworthy.ingest import IngestReport, ingest_parsed
from pbp.services.noteworthy.push_limits import DayBudget

DEFAULT_INTERVAL = timedelta(minutes=15)
DEADLINE_INTERVAL = timedelta(minutes=5)  # in the last hour before a turn's deadline
# The default lease; PBP_POLL_LEASE_SECONDS sets it per app. Read when a pass starts, not
# bound at import: tests/deploy's driver sets it per process.
LEASE = timedelta(minutes=10)
RENEWALS_PER_LEASE = 3  # a held lease is pushed back once a third of it has passed
MAX_PAGES = 5  # Blogger paging on a blog's first poll
MAX_COMMENT_FEEDS = 50  # per blog per poll
# Requests in flight in a pass (PBP_POLL_CONCURRENCY); 0 polls with `threads` threads instead,
# one blocking request each (the pre-asyncio pass, kept for comparison in tests/bench).
DEFAULT_CONCURRENCY = 256
# Feeds one async pass claims: the scheduler runs a pass a minute, and one pass of 500 left a
# worker polling 500 feeds a minute; a bigger batch also mixes more hosts, so fewer feeds
# wait on their host's per-host limit.
ASYNC_CLAIM = 2000
# Worker threads of an async pass (at most PBP_POLL_THREADS): parsing is CPU work under the
# GIL, and more threads only took turns with the event loop (measured: 16 no faster than 4).
ASYNC_WORKERS = 4
RECORD_BATCH = 100  # poll records of feeds with nothing new, written together

log = logging.getLogger("pbp.polling")


@dataclass
class PollOutcome:
    blog_id: int
    status: str
    report: IngestReport = field(default_factory=IngestReport)
    error: str | None = None
    fetched_documents: int = 0
    parsed_documents: int = 0


@dataclass(frozen=True)
class _Job:
    """What polling one blog needs to know before the fetch."""

    blog_id: int
    campaign_id: int
    feed_url: str
    state: FeedState
    first_poll: bool
    kind: str | None
    deadline: datetime | None  # the campaign's open turn's
    pushed_until: datetime | None = None  # a WebSub hub pushes this feed until then
    hubs: frozenset[tuple[str, str]] = frozenset()  # its WebSub (hub, topic) pairs


_sqlite_writers: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()
_sqlite_writers_guard = threading.Lock()


@contextmanager
def _writing(engine: Engine) -> Iterator[None]:
    """A write transaction. On SQLite the pass's threads also queue on a lock of their own:
    SQLite's busy handler polls with sleeps and is unfair, so 16 threads contending for the
    write lock wasted most of a pass sleeping and some gave up ("database is locked") after
    the busy timeout. Other processes still wait through the busy timeout as before."""
    if engine.dialect.name != "sqlite":
        with writing():
            yield
        return
    with _sqlite_writers_guard:
        lock = _sqlite_writers.setdefault(engine, threading.Lock())
    with lock, writing():
        yield


def fetcher_from_config(config) -> Fetcher:
    return Fetcher(
        instance_url=config.get("PBP_BASE_URL", ""),
        allow_private=bool(config.get("PBP_ALLOW_PRIVATE_FEEDS")),
        connect_timeout=float(config.get("PBP_FETCH_CONNECT_TIMEOUT", 5)),
        read_timeout=float(config.get("PBP_FETCH_READ_TIMEOUT", 15)),
        total_timeout=float(config.get("PBP_FETCH_TOTAL_SECONDS", 30)),
        interval=DEFAULT_INTERVAL,
        max_per_host=int(config.get("PBP_POLL_PER_HOST", 2)),
    )


def claim_due(
    *,
    engine: Engine,
    now: datetime,
    owner: str,
    limit: int = 500,
    campaign_id: int | None = None,
    lease: timedelta | None = None,
) -> list[int]:
    """Lease up to `limit` due external blogs to `owner` for `lease` (default LEASE); returns
    their ids."""
    due = (
        select(Blog.id)
        .where(
            Blog.kind == "external",
            sa.or_(col(Blog.next_poll_at).is_(None), col(Blog.next_poll_at) <= now),
            sa.or_(col(Blog.lease_until).is_(None), col(Blog.lease_until) < now),
        )
        .order_by(col(Blog.next_poll_at).is_(None).desc(), col(Blog.next_poll_at), col(Blog.id))
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    if campaign_id is not None:
        due = due.join(Character, col(Character.id) == Blog.character_id).where(
            Character.campaign_id == campaign_id
        )
    with _writing(engine), Session(engine) as session:
        ids = list(session.exec(due))
        if ids:
            session.execute(
                sa.update(Blog)
                .where(col(Blog.id).in_(ids))
                .values(lease_owner=owner, lease_until=now + (lease or LEASE))
            )
        session.commit()
    return ids


def renew_leases(
    *,
    engine: Engine,
    blog_ids: Collection[int],
    owner: str,
    now: datetime,
    lease: timedelta | None = None,
) -> int:
    """Extend `owner`'s lease on those of `blog_ids` it still holds; returns how many.

    Released rows are left alone, and so is a row whose lease ran out and that another worker
    has claimed since: it is theirs now. Rows are locked in id order, the order batched poll
    records are written in too, so a renewal and a batch never deadlock on PostgreSQL."""
    if not blog_ids:
        return 0
    still_held = (
        select(Blog.id)
        .where(col(Blog.id).in_(sorted(blog_ids)), Blog.lease_owner == owner)
        .order_by(col(Blog.id))
        .with_for_update()
    )
    with _writing(engine), Session(engine) as session:
        ids = list(session.exec(still_held))
        if ids:
            session.execute(
                sa.update(Blog)
                .where(col(Blog.id).in_(ids))
                .values(lease_until=now + (lease or LEASE))
            )
        session.commit()
    return len(ids)


class _Renewal:
    """Called before every fetch of a pass: once a third of the lease has passed since the
    last renewal, renews the lease on every feed the pass claimed and has not released yet
    (a feed being fetched, waiting in a lane, or whose poll record is still queued), so
    another worker never claims one of them while this pass is alive. A worker that dies
    renews nothing, and its leases run out as before. The lease must therefore outlast a
    third of itself plus the longest single request (about a minute at default timeouts)."""

    def __init__(self, engine, owner, blog_ids, lease, clock, claimed_at) -> None:
        self.engine, self.owner, self.blog_ids = engine, owner, list(blog_ids)
        self.lease, self.clock = lease, clock
        self.renewed_at = claimed_at
        self.lock = threading.Lock()

    def __call__(self) -> None:
        now = self.clock()
        with self.lock:  # one renewal per third of a lease, whichever lane gets there first
            if now - self.renewed_at < self.lease / RENEWALS_PER_LEASE:
                return
            self.renewed_at = now
        try:
            renew_leases(
                engine=self.engine,
                blog_ids=self.blog_ids,
                owner=self.owner,
                now=now,
                lease=self.lease,
            )
        except sa.exc.SQLAlchemyError:  # the fetch can still go ahead; retried a third later
            log.warning("could not renew the polling leases of %s", self.owner, exc_info=True)


def _no_renewal() -> None:
    """`poll_blog` polls one feed outside a pass: nothing to renew."""


def _interval(deadline: datetime | None, now: datetime, pushed_until=None) -> timedelta:
    """Poll more often in the last hour before the open turn's deadline; a feed a WebSub
    hub pushes only every few hours, in case deliveries are lost."""
    if pushed_until and pushed_until > now:
        return websub.PUSHED_INTERVAL
    if deadline and now <= deadline <= now + timedelta(hours=1):
        return DEADLINE_INTERVAL
    return DEFAULT_INTERVAL


def _load_jobs(engine: Engine, blog_ids: list[int]) -> list[_Job]:
    """Everything the fetches of these blogs need, in three queries for the whole batch."""
    with Session(engine) as session:
        # Columns, not Blog objects: building thousands of ORM instances was the costliest
        # part of loading a pass's feeds.
        rows = (
            session.connection()
            .execute(
                sa.select(
                    col(Blog.id),
                    col(Blog.feed_url),
                    col(Blog.etag),
                    col(Blog.last_modified),
                    col(Blog.content_hash),
                    col(Blog.last_unconditional_at),
                    col(Blog.failure_count),
                    col(Blog.last_success_at),
                    col(Blog.adapter_kind),
                    col(Character.campaign_id),
                )
                .join(Character, col(Character.id) == Blog.character_id)
                .where(col(Blog.id).in_(blog_ids))
            )
            .all()
        )
        deadlines: dict[int, datetime | None] = {}
        open_turns = select(Turn.campaign_id, Turn.deadline).where(
            col(Turn.campaign_id).in_({row.campaign_id for row in rows}),
            Turn.status == "open",
        )
        for campaign_id, deadline in session.exec(open_turns):
            deadlines.setdefault(campaign_id, deadline)
        pushed, hubs = websub.for_polling(session=session, blog_ids=blog_ids)
    return [
        _Job(
            blog_id=row.id,
            campaign_id=row.campaign_id,
            feed_url=row.feed_url,
            state=FeedState(
                url=row.feed_url,
                etag=row.etag,
                last_modified=row.last_modified,
                content_hash=row.content_hash,
                last_unconditional_at=row.last_unconditional_at,
                failure_count=row.failure_count,
            ),
            first_poll=row.last_success_at is None,
            kind=row.adapter_kind,
            deadline=deadlines.get(row.campaign_id),
            pushed_until=pushed.get(row.id),
            hubs=hubs.get(row.id, frozenset()),
        )
        for row in rows
    ]


def _comment_counts(engine: Engine, blog_id: int) -> dict[str, int | None]:
    """The stored comment count per entry key (read only when a changed feed lists
    comment counts)."""
    with Session(engine) as session:
        rows = session.exec(
            select(Entry.url, Entry.source_id, Entry.comment_count).where(Entry.blog_id == blog_id)
        )
        return {_stored_key(url, source_id): count for url, source_id, count in rows}


def _fetch_extra(fetcher: Fetcher, url: str, now: datetime) -> FetchResult:
    """Comment feeds and further pages: plain GETs, no stored validators."""
    return fetcher.fetch(FeedState(url=url), now)


def entry_key(url: str | None, source_id: str | None) -> str:
    """How an entry is matched between a parsed feed and the database."""
    return normalize_identifier(url) or "guid:" + (normalize_identifier(source_id) or "")


def _stored_key(url: str | None, source_id: str) -> str:
    return normalize_identifier(url) or source_id


def _comment_feeds(
    parsed: ParsedFeed, known_counts: dict[str, int | None]
) -> list[tuple[str | None, str, int | None]]:
    """(entry url, comment feed url, count) for the comment feeds worth fetching."""
    wanted = []
    for source in parsed.comment_sources:
        key = entry_key(source.entry_url, source.entry_source_id)
        if comment_feed_due(source, known_counts.get(key)):
            wanted.append((key, source.feed_url, source.count))
    if (
        not wanted
        and parsed.site_comments_url
        and any(
            known_counts.get(entry_key(s.entry_url, s.entry_source_id)) != s.count
            for s in parsed.comment_sources
        )
    ):
        wanted.append((None, parsed.site_comments_url, None))
    return wanted[:MAX_COMMENT_FEEDS]


def _parse(result: FetchResult, kind: str | None) -> ParsedFeed:
    return parse_feed(result.body, result.headers, kind)


def poll_blog(
    *,
    engine: Engine,
    blog_id: int,
    fetcher: Fetcher,
    now: datetime | None = None,
    mail: MailSettings | None = None,
) -> PollOutcome:
    """Fetch one blog and store everything it teaches in one transaction."""
    (job,) = _load_jobs(engine, [blog_id])
    return _poll(engine, job, fetcher, now or utcnow(), mail=mail)


def _poll(
    engine: Engine,
    job: _Job,
    fetcher: Fetcher,
    now: datetime,
    records: _Records | None = None,
    renew: Callable[[], None] = _no_renewal,
    mail: MailSettings | None = None,
    bumps: content_version.Batch | None = None,
) -> PollOutcome:
    renew()
    # One deadline for the feed, its further pages and its comment feeds: a blog that drips
    # its answers holds a lane for PBP_FETCH_TOTAL_SECONDS at most, not that per document.
    with fetcher.budget():
        interval = _interval(job.deadline, now, job.pushed_until)
        result = fetcher.fetch(job.state, now, interval=interval)
        outcome = PollOutcome(job.blog_id, result.status.value, fetched_documents=1)
        if _nothing_new(job, result):
            record = _nothing_new_record(job.blog_id, result, now)
            if records:
                records.add(record, outcome)
            else:
                _write_records(engine, [record])
            return outcome
        documents, comment_counts = _read_changed(engine, job, fetcher, result, now, outcome, renew)
    _store(engine, job, result, documents, comment_counts, now, outcome, mail, bumps)
    return outcome


def _read_changed(engine, job, fetcher, result, now, outcome, renew):
    """A feed with something new (or a failure): parse it, fetch its further pages and
    comment feeds. Returns (documents, comment counts) for `_store`."""
    documents: list[ParsedFeed] = []
    comment_counts: dict[str, int | None] = {}
    if result.status is FetchStatus.OK:
        counts = functools.cache(functools.partial(_comment_counts, engine, job.blog_id))
        try:
            documents, comment_counts = _read_documents(
                fetcher, result, job.kind, counts, job.first_poll, now, outcome, renew
            )
        except FeedError as exc:
            outcome.status, outcome.error = "not_a_feed", exc.message
    elif result.failed:
        outcome.error = result.reason
    return documents, comment_counts


def _nothing_new(job: _Job, result: FetchResult) -> bool:
    """A 304 or identical bytes from the stored address: nothing to parse or audit."""
    unchanged = result.status in (FetchStatus.NOT_MODIFIED, FetchStatus.UNCHANGED)
    return unchanged and result.moved_to in (None, job.feed_url)


# SQLModel sets __table__ on table models; its types do not declare it.
_BLOG = Blog.__table__  # type: ignore[attr-defined]
# Built once: the parameters name the columns to set, so SQLAlchemy compiles it once too.
_UPDATE_BLOG = sa.update(_BLOG).where(_BLOG.c.id == sa.bindparam("blog_id"))


def _nothing_new_record(blog_id: int, result: FetchResult, now: datetime) -> dict:
    """What `_record_poll` writes for a success, and the lease released."""
    return {
        "blog_id": blog_id,
        "last_polled_at": now,
        "next_poll_at": result.next_poll_at,
        "failure_count": result.failure_count,
        "etag": result.etag,
        "last_modified": result.last_modified,
        "content_hash": result.content_hash,
        "last_unconditional_at": result.last_unconditional_at,
        "last_success_at": now,
        "last_error": None,
        "gone": False,
        "lease_owner": None,
        "lease_until": None,
    }


def _write_records(engine: Engine, records: list[dict]) -> None:
    # In id order: the rows are locked in the order lease renewals lock them (no deadlock).
    with _writing(engine), engine.begin() as conn:
        conn.execute(_UPDATE_BLOG, sorted(records, key=itemgetter("blog_id")))


class _Records:
    """A pass's poll records for feeds with nothing new, written RECORD_BATCH at a time:
    most polls are 304s, and a transaction for each was most of a pass's database work.
    Records lost in a crash only leave their leases to expire: those feeds are polled again."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.pending: list[tuple[dict, PollOutcome]] = []
        self.lock = threading.Lock()

    def add(self, record: dict, outcome: PollOutcome) -> None:
        batch = self.take(record, outcome)
        if batch:
            self.write(batch)

    def take(self, record: dict, outcome: PollOutcome) -> list[tuple[dict, PollOutcome]]:
        """Queue a record; returns a full batch to `write` (the async pass writes it in a
        worker thread, not on its event loop)."""
        with self.lock:
            self.pending.append((record, outcome))
            if len(self.pending) < RECORD_BATCH:
                return []
            batch, self.pending = self.pending, []
        return batch

    def flush(self) -> None:
        with self.lock:
            batch, self.pending = self.pending, []
        if batch:
            self.write(batch)

    def write(self, batch: list[tuple[dict, PollOutcome]]) -> None:
        """One transaction for the batch. If the database refuses it, one per record, so a
        record it refuses costs only its own feed, not the batch's other feeds: that feed is
        reported as an error and keeps its lease, which runs out, and it is polled again."""
        try:
            _write_records(self.engine, [record for record, _ in batch])
            return
        except sa.exc.SQLAlchemyError:
            log.warning("a batch of %d poll records failed; writing them one by one", len(batch))
        for record, outcome in batch:
            try:
                _write_records(self.engine, [record])
            except sa.exc.SQLAlchemyError as exc:
                outcome.status, outcome.error = "error", f"poll record not saved: {_reason(exc)}"
                log.warning("blog %s: %s", record["blog_id"], outcome.error)


def _reason(exc: sa.exc.SQLAlchemyError) -> str:
    """The driver's message, first line only: SQLAlchemy's own adds the statement."""
    cause = getattr(exc, "orig", None) or exc
    return f"{type(cause).__name__}: {str(cause).strip().splitlines()[0]}"


def _read_documents(fetcher, result, kind, counts, first_poll, now, outcome, renew):
    main = _parse(result, kind)
    outcome.parsed_documents += 1
    documents = [main]
    page = main
    while first_poll and page.next_page_url and len(documents) < MAX_PAGES:
        renew()
        extra = _fetch_extra(fetcher, page.next_page_url, now)
        outcome.fetched_documents += 1
        if extra.status is not FetchStatus.OK:
            break
        page = _parse(extra, kind)
        outcome.parsed_documents += 1
        documents.append(page)
    comment_counts: dict[str, int | None] = {}
    for doc in list(documents):
        if not doc.comment_sources:  # nothing to compare: skip reading the stored counts
            continue
        for entry_key, url, count in _comment_feeds(doc, counts()):
            renew()
            fetched = _fetch_extra(fetcher, url, now)
            outcome.fetched_documents += 1
            if fetched.status is not FetchStatus.OK:
                continue
            try:
                documents.append(_parse(fetched, kind))
            except FeedError:
                continue
            outcome.parsed_documents += 1
            if entry_key:
                comment_counts[entry_key] = count
    return documents, comment_counts


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
    (job,) = _load_jobs(engine, [blog_id])
    outcome = PollOutcome(blog_id, "pushed")
    try:
        documents = [parse_feed(body, headers, job.kind)]
        outcome.parsed_documents = 1
    except FeedError as exc:
        outcome.status, outcome.error = "not_a_feed", exc.message
        return outcome
    _store(engine, job, None, documents, {}, now, outcome, mail, budget=budget)
    return outcome


def _store(
    engine, job: _Job, result, documents, comment_counts, now, outcome, mail, bumps=None,
    budget: DayBudget | None = None,
):  # fmt: skip
    """`result` None: a pushed document, not a poll. `bumps`: the pass's content-version
    batch (pbp.content_version.Batch), else this commit bumps its campaign itself.
    `budget`: a push's bound on new entries, spent in this transaction."""
    blog_id, campaign_id = job.blog_id, job.campaign_id
    with _writing(engine), Session(engine, expire_on_commit=False) as session:
        if bumps is not None:
            bumps.join(session)
        blog = session.get(Blog, blog_id)
        # Read with the job: the flushes below need no query to find the campaign.
        content_version.known_campaign(
            session, character_id=blog.character_id, campaign_id=campaign_id
        )
        if result is not None:
            _record_poll(session, blog, result, now, outcome, campaign_id)
            # Released with the poll record, so one UPDATE writes both (the ingest's first
            # query flushes it); nobody sees the release before the commit anyway. A push
            # must not release a poll's claim.
            blog.lease_owner, blog.lease_until = None, None
            if documents and not documents[0].is_comment_feed:
                websub.note_hub(
                    session=session, blog=blog, parsed=documents[0], headers=result.headers,
                    now=now, noted=job.hubs,
                )  # fmt: skip
        allowance = budget.allowance(session) if budget is not None else None
        for doc in documents:
            report = ingest_parsed(
                session=session, blog=blog, parsed=doc, now=now, campaign_id=campaign_id,
                max_new=None if allowance is None else allowance - outcome.report.new_entries,
            )  # fmt: skip
            outcome.report.add(report)
            if doc.ttl_minutes and result is not None:
                blog.next_poll_at = apply_ttl(blog.next_poll_at, now, doc.ttl_minutes)
        if budget is not None:
            budget.spend(
                session,
                new_entries=outcome.report.new_entries,
                refused_entries=outcome.report.refused_entries,
            )
        if comment_counts:
            for entry in session.exec(select(Entry).where(Entry.blog_id == blog_id)):
                key = _stored_key(entry.url, entry.source_id)
                if key in comment_counts:
                    entry.comment_count = comment_counts[key]
                    session.add(entry)
        if mail is not None:
            # Once for the whole feed (its comment feeds included): one mail per entry.
            _queue_play_mail(session, mail, outcome.report, now)
        # The rows were only needed for the mail; a pass's outcomes must not hold them.
        outcome.report.stored_entries, outcome.report.arrived_notes = [], []
        session.add(blog)
        session.commit()


def _queue_play_mail(session: Session, mail: MailSettings, report: IngestReport, now) -> None:
    play_mail.entries_stored(session=session, mail=mail, entries=report.stored_entries, now=now)
    play_mail.notes_arrived(session=session, mail=mail, notes=report.arrived_notes, now=now)
    play_mail.notes_credited(session=session, mail=mail, notes=report.arrived_notes, now=now)


def _record_poll(session, blog: Blog, result: FetchResult, now, outcome, campaign_id) -> None:
    """The poll record: validators, schedule, health; the only write for a 304."""
    blog.last_polled_at = now
    blog.next_poll_at = result.next_poll_at
    blog.failure_count = result.failure_count
    if result.moved_to and result.moved_to != blog.feed_url:
        _audit(session, campaign_id, "feed_moved", blog, old=blog.feed_url, new=result.moved_to)
        blog.feed_url = result.moved_to
    if outcome.error:
        first_alert = result.alert and blog.last_error is None
        blog.last_error = outcome.error[:2000]
        blog.gone = result.status is FetchStatus.GONE
        if outcome.status == "not_a_feed":
            blog.failure_count += 1
        if first_alert or result.status is FetchStatus.GONE:
            _audit(session, campaign_id, "feed_alert", blog, reason=outcome.error)
        return
    blog.etag, blog.last_modified = result.etag, result.last_modified
    blog.content_hash = result.content_hash
    blog.last_unconditional_at = result.last_unconditional_at
    blog.last_success_at, blog.last_error, blog.gone = now, None, False


def _audit(session, campaign_id: int, action: str, blog: Blog, **detail) -> None:
    session.add(
        AuditLog(campaign_id=campaign_id, action=action, detail={"blog_id": blog.id, **detail})
    )


def _lanes(jobs: list[_Job], per_host: int | None) -> list[list[_Job]]:
    """Each host's blogs split into as many lanes as the per-host limit allows; one thread
    polls a lane's blogs one after another. A lane never waits for its host's limit, so no
    thread idles, and it reuses its keep-alive connection (a TLS handshake saved per feed).
    Longest lanes first, so a big host does not finish the pass alone."""
    by_host: dict[str, list[_Job]] = defaultdict(list)
    for job in jobs:
        by_host[urlsplit(job.feed_url or "").hostname or ""].append(job)
    lanes = []
    for host_jobs in by_host.values():
        count = min(per_host or len(host_jobs), len(host_jobs))
        lanes += [host_jobs[i::count] for i in range(count)]
    return sorted(lanes, key=len, reverse=True)


class _Reports:
    """Hands each finished feed to `on_done` and `progress`, one call at a time: the lanes'
    threads finish feeds concurrently, and a progress bar is not thread-safe."""

    def __init__(self, total: int, on_done, progress) -> None:
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
    (`_async_pass`), or with `concurrency=0` a pool of `threads` threads. The per-host limit is
    enforced on every request; the work is split into lanes per host so that limit never
    idles the pool.

    `lease` defaults to LEASE and is renewed while the pass runs (see `_Renewal`).
    `progress(done, total, outcome)` is called once per feed as it finishes, `done` counting
    1..`total` (the feeds this pass claimed). With `mail`, the notes and challenges a feed
    brings are mailed to the players concerned (services.noteworthy.play_mail); without it (tools,
    tests of the fetching) nothing is mailed. `claim`: how many due feeds one pass takes
    (ASYNC_CLAIM on the event loop, 500 with threads); other workers share what it leaves."""
    lease = lease or LEASE
    claimed_at = now()
    blog_ids = claim_due(
        engine=engine,
        now=claimed_at,
        owner=owner,
        limit=claim or (ASYNC_CLAIM if concurrency else 500),
        campaign_id=campaign_id,
        lease=lease,
    )
    if not blog_ids:
        return []
    records = _Records(engine)
    bumps = content_version.Batch(engine)
    renew = _Renewal(engine, owner, blog_ids, lease, now, claimed_at)
    report = _Reports(len(blog_ids), on_done, progress)

    def work(lane: list[_Job]) -> list[PollOutcome]:
        return [
            report(_poll_in_pass(engine, job, fetcher, now, records, renew, mail, bumps))
            for job in lane
        ]

    lanes = _lanes(_load_jobs(engine, blog_ids), getattr(fetcher, "max_per_host", None))
    try:
        if concurrency:
            loop = event_loop(fetcher, limit=concurrency)
            return loop.run(
                _async_pass(
                    engine, loop.client, lanes, now, records, renew, report, mail, threads, bumps
                )
            )
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="poll") as pool:
            return [outcome for done in pool.map(work, lanes) for outcome in done]
    finally:
        records.flush()
        bumps.close()


async def _async_pass(engine, client, lanes, now, records, renew, report, mail, threads, bumps):
    """The lanes as coroutines on the fetcher's event loop: up to `client.limit` requests in
    flight from one thread (adapters.fetch_async), on connections kept from pass to pass.
    The loop only fetches and classifies. A changed feed's parse, further fetches and
    transaction, and each batch of poll records, go to a pool of up to ASYNC_WORKERS
    threads, and its lane fetches its next feed meanwhile: no parse or database work holds
    up the loop or a lane."""
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(client.limit)
    background: list[asyncio.Future] = []
    outcomes: list[PollOutcome] = []
    workers = min(threads, ASYNC_WORKERS)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="poll") as pool:

        def in_pool(fn, *args) -> asyncio.Future:
            return loop.run_in_executor(pool, functools.partial(fn, *args))

        async def settle(job: _Job, work) -> None:
            try:
                outcome = await work
            except Exception as exc:  # one broken feed must not stop the pass
                outcome = PollOutcome(job.blog_id, "error", error=_describe(exc))
                await in_pool(_release_after_error, engine, job.blog_id, outcome.error, now())
            if outcome is not None:  # None: handed to a worker, settled when it is done
                outcomes.append(report(outcome))

        in_thread = client.blocking()

        async def poll(job: _Job) -> PollOutcome | None:
            renew()
            when = now()
            started = loop.time()
            async with gate:
                interval = _interval(job.deadline, when, job.pushed_until)
                result = await client.fetch(job.state, when, interval=interval)
            outcome = PollOutcome(job.blog_id, result.status.value, fetched_documents=1)
            if _nothing_new(job, result):
                batch = records.take(_nothing_new_record(job.blog_id, result, when), outcome)
                if batch:
                    background.append(in_pool(records.write, batch))
                return outcome
            left = client.config.total_timeout - (loop.time() - started)
            rest = in_pool(
                _changed, engine, job, in_thread, result, when, outcome, renew, mail, left, bumps
            )
            background.append(asyncio.ensure_future(settle(job, rest)))
            return None

        async def lane(jobs: list[_Job]) -> None:
            for job in jobs:
                await settle(job, poll(job))

        await asyncio.gather(*(lane(jobs) for jobs in lanes))
        await asyncio.gather(*background)  # changed feeds still fetch on this loop
    return outcomes


def _changed(engine, job, fetcher, result, now, outcome, renew, mail, left, bumps) -> PollOutcome:
    """In a worker thread: the rest of `_poll` for a feed with something new, its further
    fetches within what is left of the blog's deadline.

    It renews the pass's leases too (at most once a third of a lease, see `_Renewal`): once
    the lanes have fetched everything, the pass may still be parsing and storing changed
    feeds for longer than a lease (a first poll of thousands of new feeds), and only these
    threads are still working then. Without it another worker would claim the feeds whose
    poll is not committed yet and fetch them a second time."""
    renew()
    with deadline.deadline(max(left, 0)):
        documents, comment_counts = _read_changed(engine, job, fetcher, result, now, outcome, renew)
    renew()
    _store(engine, job, result, documents, comment_counts, now, outcome, mail, bumps)
    return outcome


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _poll_in_pass(engine, job, fetcher, now, records, renew, mail, bumps) -> PollOutcome:
    try:
        return _poll(engine, job, fetcher, now(), records, renew, mail, bumps)
    except Exception as exc:  # one broken feed must not stop the pass
        outcome = PollOutcome(job.blog_id, "error", error=_describe(exc))
        _release_after_error(engine, job.blog_id, outcome.error, now())
        return outcome


def _release_after_error(engine: Engine, blog_id: int, error: str, now: datetime) -> None:
    """A bug while storing a feed: keep the error visible and retry later, not every minute."""
    with _writing(engine), Session(engine) as session:
        session.execute(
            sa.update(Blog)
            .where(col(Blog.id) == blog_id)
            .values(
                lease_owner=None,
                lease_until=None,
                last_error=error[:2000],
                failure_count=Blog.failure_count + 1,
                next_poll_at=now + DEFAULT_INTERVAL,
            )
        )
        session.commit()


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def app_fetcher(app) -> Fetcher:
    """One fetcher per process (its sessions keep connections alive between passes)."""
    fetcher = app.extensions.get("pbp_fetcher")
    if fetcher is None:
        fetcher = app.extensions["pbp_fetcher"] = fetcher_from_config(app.config)
    return fetcher


def poll_once(app, *, slug=None, progress=None) -> list[PollOutcome]:
    """One pass for the scheduler or `pbp poll --once`; `progress` as in `poll_due`."""
    from pbp.db import database
    from pbp.services.campaigns import get_campaign

    engine = database(app).engine
    campaign_id = None
    if slug:
        with Session(engine) as session:
            campaign_id = get_campaign(session=session, slug=slug).id
    return poll_due(
        engine=engine,
        fetcher=app_fetcher(app),
        owner=_owner(),
        threads=app.config.get("PBP_POLL_THREADS", 16),
        concurrency=app.config.get("PBP_POLL_CONCURRENCY", DEFAULT_CONCURRENCY),
        campaign_id=campaign_id,
        lease=lease_from_config(app.config),
        progress=progress,
        mail=MailSettings.from_config(app.config),
    )


def lease_from_config(config) -> timedelta:
    return timedelta(seconds=float(config.get("PBP_POLL_LEASE_SECONDS", LEASE.total_seconds())))


def summary_table(outcomes: list[PollOutcome]) -> list[str]:
    """Fetched, not modified, changed, new entries, new notes, errors with reasons."""
    count: defaultdict[str, int] = defaultdict(int)
    for o in outcomes:
        count[o.status] += 1
    lines = [
        f"{'feeds polled':<16}{len(outcomes):>6}",
        f"{'fetched':<16}{count['ok']:>6}",
        f"{'not modified':<16}{count['not_modified'] + count['unchanged_bytes']:>6}",
        f"{'changed entries':<16}{sum(o.report.changed_entries for o in outcomes):>6}",
        f"{'new entries':<16}{sum(o.report.new_entries for o in outcomes):>6}",
        f"{'new notes':<16}{sum(o.report.new_notes for o in outcomes):>6}",
        f"{'errors':<16}{sum(1 for o in outcomes if o.error):>6}",
    ]
    lines += [f"  blog {o.blog_id}: {o.status}: {o.error}" for o in outcomes if o.error]
    return lines
