"""The scheduler's jobs: each a one-line call into pbp.services.

`JOBS` lists (function, trigger arguments). The scheduler runs in its own process in
production (`pbp worker`), or inside the single embedded web worker (`pbp serve`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.blocking import BlockingScheduler
from flask import Flask

from pbp.db import database
from pbp.services import idempotency
from pbp.services.mail import notifications
from pbp.services.mail import send as mail_send
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import cadence, polling, websub

log = logging.getLogger("pbp.scheduler")


def poll_feeds(app: Flask) -> None:
    polling.poll_once(app)


def advance_turns(app: Flask) -> None:
    cadence.advance_all_due(
        engine=database(app).engine,
        now=datetime.now(UTC),
        mail=MailSettings.from_config(app.config),
        sender=mail_send.sender_for_app(app),
    )


def remind_players(app: Flask) -> None:
    """The nudges before and after each deadline, to the players who still have something
    to do and to the referee (issue #30), and the referee's note that a hiatus is over."""
    cadence.remind_all_due(
        engine=database(app).engine,
        now=datetime.now(UTC),
        mail=MailSettings.from_config(app.config),
        sender=mail_send.sender_for_app(app),
    )


def websub_upkeep(app: Flask) -> None:
    """Subscribe to the hubs polls found, renew leases, unsubscribe from abandoned feeds."""
    websub.maintain(
        engine=database(app).engine,
        fetcher=polling.app_fetcher(app),
        base_url=app.config["PBP_BASE_URL"],
        now=datetime.now(UTC),
    )


# (job function, trigger kwargs)
JOBS: list[tuple] = [
    (poll_feeds, {"trigger": "interval", "minutes": 1}),
    (advance_turns, {"trigger": "interval", "minutes": 1}),
    (remind_players, {"trigger": "interval", "minutes": 1}),
    (websub_upkeep, {"trigger": "interval", "minutes": 1}),
    # The sweep: anything a request's after-commit send missed (crash, server down).
    (mail_send.send_outbox, {"trigger": "interval", "seconds": 30}),
    # Keyed by day, so an hourly run queues each player's digest once.
    (notifications.queue_daily_digests, {"trigger": "interval", "hours": 1}),
    # The API's idempotency records are needed for a day at most.
    (idempotency.forget_old, {"trigger": "interval", "hours": 1}),
]


def _add_jobs(scheduler, app: Flask) -> None:
    for func, trigger in JOBS:
        # coalesce + max_instances=1: a slow pass is never run twice at once.
        scheduler.add_job(
            func, args=[app], coalesce=True, max_instances=1, id=func.__name__, **trigger
        )


def start_background(app: Flask) -> BackgroundScheduler:
    scheduler = BackgroundScheduler(timezone="UTC")
    _add_jobs(scheduler, app)
    scheduler.start()
    log.info("scheduler started in-process with %d jobs", len(JOBS))
    return scheduler


def run_blocking(app: Flask) -> None:
    logging.basicConfig(level=logging.INFO)
    scheduler = BlockingScheduler(timezone="UTC")
    _add_jobs(scheduler, app)
    log.info("worker scheduler starting with %d jobs", len(JOBS))
    scheduler.start()
