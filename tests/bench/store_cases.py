"""The poller's store path as instruction cases (tests/bench/instructions.py, issue #34 item 2).

Each case gets its own SQLite file, made with `SQLModel.metadata.create_all` and the fewest
rows a poll needs (a referee, a campaign with its open turn, one character and external blog
per feed). Each is warmed once first, so a call is counted as a pass's later feeds run:
SQLAlchemy's statement cache filled, the file's pages read.

- `store_unchanged`: one unchanged feed's poll record, written through `write_records` in a
  batch of `BATCH` (as a pass's `Records` writes them); one call is one batch, and its
  count is divided by `BATCH` (`PER_CALL`).
- `store_changed`: one changed 20-entry feed's `store(...)`, its entries new to the blog
  (each call stores a fresh feed into a blog of its own).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlmodel import SQLModel

BATCH = 100
FEEDS = 8  # the warm-up and every call (instructions.CALLS) each take a fresh feed or batch
NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
_KEEP: list[tempfile.TemporaryDirectory[str]] = []  # the files live as long as the run


def _engine(name: str, urls: list[str]):
    from pbp.db import make_engine
    from tests.bench.test_bench_poll import make_campaign

    work = tempfile.TemporaryDirectory(prefix=f"pbp-{name}-")
    _KEEP.append(work)
    engine = make_engine(f"sqlite:///{Path(work.name) / 'bench.sqlite3'}")
    SQLModel.metadata.create_all(engine)
    _, _, blog_ids = make_campaign(engine, urls)
    return engine, blog_ids


def store_unchanged(scale: str) -> Callable[[], object]:
    from adapters import FeedState, FetchResult, FetchStatus
    from pbp.services.noteworthy.polling.decide import Job, after_fetch
    from pbp.services.noteworthy.polling.store import write_records

    urls = [f"http://blog-{k}.example/feed" for k in range(BATCH)]
    engine, blog_ids = _engine("store-unchanged", urls)
    batches = []  # a batch of records for the warm-up and for every call, each polled later
    for minute in range(FEEDS):
        now = NOW + timedelta(minutes=minute)
        records = []
        for blog_id, url in zip(blog_ids, urls, strict=True):
            job = Job(blog_id, 1, url, FeedState(url=url, etag='"v1"'), False, None, None)
            result = FetchResult(
                FetchStatus.NOT_MODIFIED, url, now, now + timedelta(minutes=15), 0, etag='"v1"'
            )
            records.append(after_fetch(job, result, now).record)
        batches.append(records)
    rounds = iter(batches)

    def batch() -> None:
        write_records(engine, next(rounds))

    batch()
    return batch


def store_changed(scale: str) -> Callable[[], object]:
    from adapters import FetchResult, FetchStatus
    from adapters.parse import parse_feed
    from pbp.services.noteworthy.polling.decide import Reading, after_read
    from pbp.services.noteworthy.polling.jobs import load_jobs
    from pbp.services.noteworthy.polling.store import store
    from tests.bench.test_bench_poll import rss

    urls = [f"http://blog-{k}.example/feed" for k in range(FEEDS)]
    engine, blog_ids = _engine("store-changed", urls)
    headers = {"content-type": "application/rss+xml; charset=utf-8"}
    polls = []
    for job, k in zip(load_jobs(engine, blog_ids), range(FEEDS), strict=True):
        body = rss(k, f"http://blog-{k}.example", 20)
        result = FetchResult(
            FetchStatus.OK, job.feed_url, NOW, NOW + timedelta(minutes=15), 0,
            etag=f'"v{k}"', body=body, headers=headers,
        )  # fmt: skip
        reading = Reading((parse_feed(body, headers),), parsed=1)
        polls.append((job, after_read(job, result, reading, NOW)))
    feeds = iter(polls)

    def one() -> object:
        job, decision = next(feeds)
        return store(engine, job, decision, now=NOW)

    one()
    return one
