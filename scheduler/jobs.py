"""The scheduler's jobs: each a one-line call into pbp.services.

`JOBS` lists (function, trigger arguments). The scheduler runs in its own process in
production (`pbp worker`), or inside the single embedded web worker (`pbp serve`).
"""

from __future__ import annotations

import logging

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.blocking import BlockingScheduler
from flask import Flask

log = logging.getLogger("pbp.scheduler")

# (job function, trigger kwargs); filled as services land.
JOBS: list[tuple] = []


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
