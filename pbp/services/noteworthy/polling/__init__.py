"""Poll players' external blogs: claim due feeds, fetch, decide, read, store, schedule the next.

The pipeline (issue #32 item 5), after lemon24/reader's `_update` and Miniflux's reader:

- claims: due feeds claimed with `SELECT ... FOR UPDATE SKIP LOCKED` and a lease
  (`PBP_POLL_LEASE_SECONDS`), renewed while a pass runs, so several workers share the
  polling and no feed is fetched twice at once; a dead worker's claims expire;
- jobs: what the fetches need, read for the whole batch in three queries;
- fetching: adapters.fetch (requests) and adapters.fetch_async (aiohttp, hundreds of
  requests in flight on one event loop), behind one interface (adapters.FeedFetcher);
- decide: the pure decider (no database, clock or I/O): what a fetch or a reading means,
  as a Decision: nothing new, read further, record the poll only, store these documents
  and mail what they bring;
- read: a changed feed parsed, its further pages and comment feeds fetched;
- store: nothing-new poll records a hundred to a transaction (one executemany); a feed
  with something to store in a transaction of its own;
- poll: one feed through the stages (a `FeedPoll` travels between them, a `Pass` holds
  what a pass's feeds share); `poll_blog`, `store_pushed`;
- passes: `poll_due`, lanes per host on threads, or on_loop: on the fetcher's event loop;
- app: `poll_once` for the scheduler and `pbp poll`, config, the summary table.

No database transaction is held open during network I/O. Most polls find nothing new (304
or identical bytes), so that path is kept cheap: nothing is parsed, stored entries are only
read when a feed changed, connections are kept alive per host.
tests/bench/test_bench_poll.py measures a pass.
"""

from __future__ import annotations

from pbp.services.noteworthy.polling.app import (
    app_fetcher,
    discovery_fetcher_from_config,
    fetcher_from_config,
    lease_from_config,
    poll_once,
    summary_table,
)
from pbp.services.noteworthy.polling.claims import (
    LEASE,
    RENEWALS_PER_LEASE,
    claim_due,
    renew_leases,
)
from pbp.services.noteworthy.polling.decide import DEFAULT_INTERVAL, Job, entry_key
from pbp.services.noteworthy.polling.passes import DEFAULT_CONCURRENCY, poll_due
from pbp.services.noteworthy.polling.poll import poll_blog, store_pushed
from pbp.services.noteworthy.polling.store import PollOutcome

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_INTERVAL",
    "LEASE",
    "RENEWALS_PER_LEASE",
    "Job",
    "PollOutcome",
    "app_fetcher",
    "claim_due",
    "entry_key",
    "discovery_fetcher_from_config",
    "fetcher_from_config",
    "lease_from_config",
    "poll_blog",
    "poll_due",
    "poll_once",
    "renew_leases",
    "store_pushed",
    "summary_table",
]
