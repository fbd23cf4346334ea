"""Carrying out the decider's Decisions: poll records, and stored feeds with their mail.

Most polls find nothing new, so their poll records are written a hundred to a transaction
(`Records`, one executemany). A feed with something to store gets one transaction of its
own (`store`): the poll record, the lease released, its audit lines, its WebSub hub, its
entries and notes, its comment counts and the mail they cause.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter, itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.sqlite import dialect as sqlite_dialect
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbp import content_version
from pbp.models import Blog, Entry
from pbp.services import audit_log
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import play_mail, websub
from pbp.services.noteworthy.ingest import IngestReport, ingest_parsed
from pbp.services.noteworthy.polling.decide import (
    DEFAULT_INTERVAL,
    ERROR_CHARS,
    Decision,
    Job,
    PollRecord,
    stored_key,
)
from pbp.services.noteworthy.polling.writing import writing
from pbp.services.noteworthy.push_limits import DayBudget

RECORD_BATCH = 100  # poll records of feeds with nothing new, written together

log = logging.getLogger("pbp.polling")


@dataclass
class PollOutcome:
    """One feed's poll, as a pass reports it (the CLI's summary table, the scheduler)."""

    blog_id: int
    status: str
    report: IngestReport = field(default_factory=IngestReport)
    error: str | None = None
    fetched_documents: int = 0
    parsed_documents: int = 0


def record_values(record: PollRecord) -> dict[str, Any]:
    """The blog's columns a poll record sets, its lease released with them."""
    values: dict[str, Any] = {
        "last_polled_at": record.polled_at,
        "next_poll_at": record.next_poll_at,
        "failure_count": record.failure_count,
    }
    if record.moved_to:
        values["feed_url"] = record.moved_to
    if record.validators is None:
        values["last_error"], values["gone"] = record.error, record.gone
    else:
        found = record.validators
        values.update(
            etag=found.etag,
            last_modified=found.last_modified,
            content_hash=found.content_hash,
            last_unconditional_at=found.last_unconditional_at,
            last_success_at=record.polled_at,
            last_error=None,
            gone=False,
        )
    values["lease_owner"] = values["lease_until"] = None
    return values


# SQLModel sets __table__ on table models; its types do not declare it.
_BLOG = Blog.__table__  # type: ignore[attr-defined]
# Built once: the parameters name the columns to set, so SQLAlchemy compiles it once too.
_UPDATE_BLOG = sa.update(_BLOG).where(_BLOG.c.id == sa.bindparam("blog_id"))


# A successful poll that moved nothing (every record of a pass's `Records`): the columns
# `record_values` sets to the same value for every such feed are constants of the statement,
# and the poll's time is bound once for both columns that take it. Each bound value costs a
# type conversion per row (most of a 304's database work, issue #34).
_P = sa.bindparam
_UPDATE_POLLED = (
    sa.update(_BLOG)
    .where(_BLOG.c.id == _P("blog_id"))
    .values(
        last_polled_at=_P("p_polled_at", type_=_BLOG.c.last_polled_at.type),
        next_poll_at=_P("p_next_poll_at", type_=_BLOG.c.next_poll_at.type),
        failure_count=_P("p_failure_count", type_=_BLOG.c.failure_count.type),
        etag=_P("p_etag", type_=_BLOG.c.etag.type),
        last_modified=_P("p_last_modified", type_=_BLOG.c.last_modified.type),
        content_hash=_P("p_content_hash", type_=_BLOG.c.content_hash.type),
        last_unconditional_at=_P(
            "p_last_unconditional_at", type_=_BLOG.c.last_unconditional_at.type
        ),
        last_success_at=_P("p_polled_at", type_=_BLOG.c.last_success_at.type),
        last_error=sa.null(),
        gone=sa.false(),
        lease_owner=sa.null(),
        lease_until=sa.null(),
    )
)


def _polled_row(record: PollRecord) -> dict[str, Any]:
    """`_UPDATE_POLLED`'s parameters: `record_values` of a success that moved nothing."""
    found = record.validators
    assert found is not None  # see _UPDATE_POLLED
    return {
        "blog_id": record.blog_id,
        "p_polled_at": record.polled_at,
        "p_next_poll_at": record.next_poll_at,
        "p_failure_count": record.failure_count,
        "p_etag": found.etag,
        "p_last_modified": found.last_modified,
        "p_content_hash": found.content_hash,
        "p_last_unconditional_at": found.last_unconditional_at,
    }


def sqlite_time(value: datetime | None) -> str | None:
    """A time as `UTCDateTime` binds it on SQLite: naive UTC in SQLAlchemy's SQLite DATETIME
    text ("2026-12-02 12:00:00.000000"), made by one `isoformat` call instead of the type's
    two conversions and its %-format of seven fields (most of a 304's cost on SQLite)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.isoformat(" ", "microseconds")
    # Aware: in UTC its isoformat ends in "+00:00", which the naive text has not.
    return value.astimezone(UTC).isoformat(" ", "microseconds")[:26]


_POLLED_TIMES = ("p_polled_at", "p_next_poll_at", "p_last_unconditional_at")


@functools.cache
def _polled_on_sqlite() -> tuple[str, Callable[[dict[str, Any]], tuple[Any, ...]]]:
    """`_UPDATE_POLLED` compiled for SQLite once, with the getter that puts a row's values in
    its parameters' order: the batch goes to the driver as it is, past SQLAlchemy's
    conversion of each bound value of each row (the times are `sqlite_time` already)."""
    compiled = _UPDATE_POLLED.compile(dialect=sqlite_dialect())
    assert compiled.positiontup is not None  # SQLite's parameters are positional
    return str(compiled), itemgetter(*compiled.positiontup)


def write_records(engine: Engine, records: list[PollRecord]) -> None:
    """Poll records of feeds with nothing new (the same columns each), in one statement."""
    # In id order: the rows are locked in the order lease renewals lock them (no deadlock).
    ordered = sorted(records, key=attrgetter("blog_id"))
    if all(record.validators is not None and not record.moved_to for record in ordered):
        statement, rows = _UPDATE_POLLED, [_polled_row(record) for record in ordered]
    else:
        statement = _UPDATE_BLOG
        rows = [{"blog_id": record.blog_id, **record_values(record)} for record in ordered]
    with writing(engine), engine.begin() as conn:
        if statement is _UPDATE_POLLED and conn.dialect.name == "sqlite":
            sql, in_order = _polled_on_sqlite()
            for row in rows:
                for name in _POLLED_TIMES:
                    row[name] = sqlite_time(row[name])
            conn.exec_driver_sql(sql, [in_order(row) for row in rows])
        else:
            conn.execute(statement, rows)


class Records:
    """A pass's poll records for feeds with nothing new, written RECORD_BATCH at a time:
    most polls are 304s, and a transaction for each was most of a pass's database work.
    Records lost in a crash only leave their leases to expire: those feeds are polled again."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.pending: list[tuple[PollRecord, PollOutcome]] = []
        self.lock = threading.Lock()

    def add(self, record: PollRecord, outcome: PollOutcome) -> None:
        batch = self.take(record, outcome)
        if batch:
            self.write(batch)

    def take(
        self, record: PollRecord, outcome: PollOutcome
    ) -> list[tuple[PollRecord, PollOutcome]]:
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

    def write(self, batch: list[tuple[PollRecord, PollOutcome]]) -> None:
        """One transaction for the batch. If the database refuses it, one per record, so a
        record it refuses costs only its own feed, not the batch's other feeds: that feed is
        reported as an error and keeps its lease, which runs out, and it is polled again."""
        try:
            write_records(self.engine, [record for record, _ in batch])
            return
        except sa.exc.SQLAlchemyError:
            log.warning("a batch of %d poll records failed; writing them one by one", len(batch))
        for record, outcome in batch:
            try:
                write_records(self.engine, [record])
            except sa.exc.SQLAlchemyError as exc:
                outcome.status, outcome.error = "error", f"poll record not saved: {_reason(exc)}"
                log.warning("blog %s: %s", record.blog_id, outcome.error)


def _reason(exc: sa.exc.SQLAlchemyError) -> str:
    """The driver's message, first line only: SQLAlchemy's own adds the statement."""
    cause = getattr(exc, "orig", None) or exc
    return f"{type(cause).__name__}: {str(cause).strip().splitlines()[0]}"


def store(
    engine: Engine,
    job: Job,
    decision: Decision,
    *,
    now: datetime,
    mail: MailSettings | None = None,
    bumps: content_version.Batch | None = None,
    budget: DayBudget | None = None,
) -> IngestReport:
    """One transaction for a RECORD or STORE decision; returns what the ingest did (without
    the rows: a pass's outcomes must not hold them). `bumps`: the pass's content-version
    batch (pbp.content_version.Batch), else this commit bumps its campaign itself.
    `budget`: a push's bound on new entries, spent in this transaction."""
    with writing(engine), Session(engine, expire_on_commit=False) as session:
        if bumps is not None:
            bumps.join(session)
        blog = session.get(Blog, job.blog_id)
        if blog is None:
            raise LookupError(f"blog {job.blog_id} was deleted during its poll")
        # Read with the job: the flushes below need no query to find the campaign.
        content_version.known_campaign(
            session, character_id=blog.character_id, campaign_id=job.campaign_id
        )
        if decision.record is not None:
            # The lease is released with the poll record, so one UPDATE writes both (the
            # ingest's first query flushes it); nobody sees the release before the commit
            # anyway. A push has no record: it must not release a poll's claim.
            for name, value in record_values(decision.record).items():
                setattr(blog, name, value)
        for audit in decision.audits:
            line = dataclasses.replace(audit, blog_id=job.blog_id)
            audit_log.record(session, line=line, actor=None, campaign_id=job.campaign_id)
        if decision.hub_document is not None:
            websub.note_hub(
                session=session, blog=blog, parsed=decision.hub_document,
                headers=decision.hub_headers, now=now, noted=job.hubs,
            )  # fmt: skip
        report = _ingest(session, blog, job, decision, now=now, budget=budget)
        if decision.comment_counts:
            _set_comment_counts(session, job.blog_id, decision.comment_counts)
        if mail is not None and decision.mail:
            # Once for the whole feed (its comment feeds included): one mail per entry.
            queue_play_mail(session, mail, report, now)
        report.stored_entries, report.arrived_notes = [], []
        session.add(blog)
        session.commit()
    return report


def _ingest(
    session: Session,
    blog: Blog,
    job: Job,
    decision: Decision,
    *,
    now: datetime,
    budget: DayBudget | None,
) -> IngestReport:
    """The decision's documents stored in order (services.noteworthy.ingest), within the
    push's budget if any."""
    report = IngestReport()
    allowance = budget.allowance(session) if budget is not None else None
    for doc in decision.documents:
        report.add(
            ingest_parsed(
                session=session, blog=blog, parsed=doc, now=now, campaign_id=job.campaign_id,
                max_new=None if allowance is None else allowance - report.new_entries,
            )
        )  # fmt: skip
    if budget is not None:
        budget.spend(
            session, new_entries=report.new_entries, refused_entries=report.refused_entries
        )
    return report


def _set_comment_counts(session: Session, blog_id: int, counts: Mapping[str, int | None]) -> None:
    for entry in session.exec(select(Entry).where(Entry.blog_id == blog_id)):
        key = stored_key(entry.url, entry.source_id)
        if key in counts:
            entry.comment_count = counts[key]
            session.add(entry)


def queue_play_mail(
    session: Session, mail: MailSettings, report: IngestReport, now: datetime
) -> None:
    """The mail a feed's new entries and notes cause (services.noteworthy.play_mail)."""
    play_mail.entries_stored(session=session, mail=mail, entries=report.stored_entries, now=now)
    play_mail.notes_arrived(session=session, mail=mail, notes=report.arrived_notes, now=now)
    play_mail.notes_credited(session=session, mail=mail, notes=report.arrived_notes, now=now)


def release_after_error(engine: Engine, *, blog_id: int, error: str, now: datetime) -> None:
    """A bug while storing a feed: keep the error visible and retry later, not every minute."""
    with writing(engine), Session(engine) as session:
        session.execute(
            sa.update(Blog)
            .where(col(Blog.id) == blog_id)
            .values(
                lease_owner=None,
                lease_until=None,
                last_error=error[:ERROR_CHARS],
                failure_count=Blog.failure_count + 1,
                next_poll_at=now + DEFAULT_INTERVAL,
            )
        )
        session.commit()
