"""Issue #30's "Done when" with two worker processes on PostgreSQL: the fast-clock scenario
of tests/services/alive/scenario.py (three turns, Bram silent, Cleo away), each step's
turn and reminder jobs run by two `tests.deploy.driver alive` processes at once, as two
`pbp worker`s would. Every nudge is still sent once: one outbox row per nudge, and the
letters the two workers report queueing add up to exactly those rows (a second worker's
pass finds every nudge claimed, `Nudge`'s unique key, and queues nothing).
"""

from __future__ import annotations

import json
import time

from pbp.models import Campaign
from tests.factories import drop_committed_campaign
from tests.services.alive import scenario

NUDGING = ("nudge", "overdue", "overdue_list")


def _wait_for_step(workers, step: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        done = [
            any(json.loads(line).get("step") == step for line in workers.lines(name))
            for name in ("a", "b")
        ]
        if all(done):
            return
        for name, proc in workers.procs.items():
            assert proc.poll() is None or proc.returncode == 0, workers.stderr(name)
        assert time.monotonic() < deadline, f"step {step} not done: {workers.stderr('a')}"
        time.sleep(0.05)


def test_two_workers_send_every_nudge_once(pg_engine, workers):
    campaign_id = scenario.build(pg_engine)
    try:
        times = ",".join(at.isoformat() for at in scenario.STEPS)
        for name in ("a", "b"):
            workers.start(name, "alive", "--now", times)
        workers.go_when_ready()
        for step in range(len(scenario.STEPS)):
            if step:
                (workers.tmp / f"go.{step}").touch()
            _wait_for_step(workers, step)
            scenario.between(pg_engine, campaign_id, step)
        for name in ("a", "b"):
            assert workers.wait(name) == 0, workers.stderr(name)
        scenario.check(pg_engine, campaign_id)
        reported = sum(
            json.loads(line).get("sent", 0) for name in ("a", "b") for line in workers.lines(name)
        )
        sent = scenario.letters(pg_engine, campaign_id)
        assert reported == sum(n for (_, kind, _), n in sent.items() if kind in NUDGING)
    finally:
        drop_committed_campaign(pg_engine, Campaign(id=campaign_id))
