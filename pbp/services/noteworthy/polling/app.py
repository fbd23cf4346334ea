"""What the app runs: a pass for the scheduler or `pbp poll --once` (`poll_once`), its
fetcher and lease from the app's config, and the summary table `pbp poll` prints."""

from __future__ import annotations

import os
import socket
from collections import defaultdict
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from sqlmodel import Session

from adapters import Fetcher
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy.polling.claims import LEASE
from pbp.services.noteworthy.polling.decide import DEFAULT_INTERVAL
from pbp.services.noteworthy.polling.passes import DEFAULT_CONCURRENCY, poll_due
from pbp.services.noteworthy.polling.store import PollOutcome

# Services import no web framework (an import contract): these take the app the scheduler
# or the CLI has, and read only its `config` and `extensions`.
App = Any


def fetcher_from_config(
    config: Mapping[str, Any], *, total_seconds: float | None = None
) -> Fetcher:
    """The configured fetcher; `total_seconds` shortens its deadline (never lengthens it)."""
    total = float(config.get("PBP_FETCH_TOTAL_SECONDS", 30))
    if total_seconds is not None:
        total = min(total, total_seconds)
    return Fetcher(
        instance_url=config.get("PBP_BASE_URL", ""),
        allow_private=bool(config.get("PBP_ALLOW_PRIVATE_FEEDS")),
        connect_timeout=float(config.get("PBP_FETCH_CONNECT_TIMEOUT", 5)),
        read_timeout=min(float(config.get("PBP_FETCH_READ_TIMEOUT", 15)), total),
        total_timeout=total,
        interval=DEFAULT_INTERVAL,
        max_per_host=int(config.get("PBP_POLL_PER_HOST", 2)),
    )


def discovery_fetcher_from_config(config: Mapping[str, Any]) -> Fetcher:
    """The fetcher of the blog form's feed discovery: the poller's, with a deadline of
    PBP_DISCOVERY_SECONDS (10 s) for the whole discovery, never longer than a poll's. Issue
    #28 item 5: a blog dripping its answer held the form's web thread for the poll's 30 s."""
    return fetcher_from_config(config, total_seconds=float(config.get("PBP_DISCOVERY_SECONDS", 10)))


def app_fetcher(app: App) -> Fetcher:
    """One fetcher per process (its sessions keep connections alive between passes)."""
    fetcher = app.extensions.get("pbp_fetcher")
    if fetcher is None:
        fetcher = app.extensions["pbp_fetcher"] = fetcher_from_config(app.config)
    return fetcher


def lease_from_config(config: Mapping[str, Any]) -> timedelta:
    return timedelta(seconds=float(config.get("PBP_POLL_LEASE_SECONDS", LEASE.total_seconds())))


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def poll_once(
    app: App,
    *,
    slug: str | None = None,
    progress: Callable[[int, int, PollOutcome], None] | None = None,
) -> list[PollOutcome]:
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
