"""A worker process for tests/deploy: the scheduler's job bodies, run from the command line.

    python -m tests.deploy.driver poll    --db URL --owner NAME --campaign ID [--lease S] ...
    python -m tests.deploy.driver advance --db URL --now ISO
    python -m tests.deploy.driver mail    --db URL --smtp-port N [--limit N]
    python -m tests.deploy.driver digest  --db URL --now ISO
    python -m tests.deploy.driver alive   --db URL --now ISO,ISO,...

Each waits for --go FILE to exist (so several processes start their work together), then
runs the production service function and writes one JSON line per result to --log (line
buffered, so a SIGKILLed process leaves every finished line behind): `poll` a line per feed
polled and one per pass (feeds, seconds), until --stop FILE exists. Nothing here changes how
the services work: the claim batch is `polling.claim_due`'s own (500), and the lease is
poll_due's `lease` argument (PBP_POLL_LEASE_SECONDS in production), shortened by the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import Session

from pbp.db import make_engine, writing
from pbp.models import OutboxMessage, utcnow
from pbp.services.mail import notifications
from pbp.services.mail import send as mail_send
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import cadence, polling


def _wait_for(path: str) -> None:
    while not Path(path).exists():
        time.sleep(0.02)


def _poll(args, engine, log) -> None:
    fetcher = polling.fetcher_from_config({"PBP_ALLOW_PRIVATE_FEEDS": True})

    def done(outcome: polling.PollOutcome) -> None:
        line = {"blog": outcome.blog_id, "status": outcome.status, "at": time.time()}
        if outcome.error:  # why a fetch failed, for the test's message
            line["error"] = outcome.error
        log.write(json.dumps(line) + "\n")

    with fetcher:
        while not Path(args.stop).exists():
            started = time.monotonic()
            passed = polling.poll_due(
                engine=engine,
                fetcher=fetcher,
                owner=args.owner,
                campaign_id=args.campaign,
                on_done=done,
                lease=timedelta(seconds=args.lease),
                claim=500,  # two workers share 2,000 feeds, as the tests expect
            )
            if passed:
                line = {"pass": len(passed), "seconds": time.monotonic() - started}
                log.write(json.dumps(line) + "\n")
            else:
                time.sleep(0.1)


def _advance(args, engine, log) -> None:
    now = datetime.fromisoformat(args.now)
    for advance in cadence.advance_all_due(engine=engine, now=now):
        log.write(json.dumps(advance.__dict__) + "\n")


def _mail(args, engine, log) -> None:
    transport = mail_send.SmtpTransport(host="127.0.0.1", port=args.smtp_port, timeout=10)
    while True:
        report = mail_send.send_pending(
            engine_or_sessionmaker=engine, transport=transport, now=utcnow(), limit=args.limit
        )
        log.write(json.dumps({"claimed": report.claimed, "at": time.time()}) + "\n")
        for row_id in report.sent:
            log.write(json.dumps({"sent": row_id}) + "\n")
        if report.error:
            log.write(json.dumps({"error": report.error}) + "\n")
        if not report.claimed:
            # An empty claim is not an empty outbox: the rows this sender's snapshot saw
            # may all have been claimed by the other sender meanwhile. Stop when none is due.
            if not _queued(engine):
                return
            log.write(json.dumps({"empty_claim": True}) + "\n")
            time.sleep(0.05)


def _digest(args, engine, log) -> None:
    """The hourly digest job's body (mail.queue_daily_digests without the Flask app)."""
    secret = "deploy-test-secret-" + "x" * 32
    settings = MailSettings("http://pbp.test", secret, "pbp@pbp.test")
    with writing(), Session(engine) as session:
        queued = notifications.queue_all_digests(
            session=session, settings=settings, now=datetime.fromisoformat(args.now)
        )
        session.commit()
        log.write(json.dumps({"queued": [row.id for row in queued]}) + "\n")


def _alive(args, engine, log) -> None:
    """The scheduler's turn and reminder jobs at each time of --now in turn (a fast clock):
    step i waits for the go-file's sibling `<go>.<i>` (the test does what happens between
    steps, then lets both workers run the next one) and logs {"step": i} when done."""
    settings = MailSettings("http://pbp.test", "deploy-test-secret-" + "x" * 32, "pbp@pbp.test")
    for step, at in enumerate(args.now.split(",")):
        if step:
            _wait_for(f"{args.go}.{step}")
        now = datetime.fromisoformat(at)
        cadence.advance_all_due(engine=engine, now=now, mail=settings)
        sent = cadence.remind_all_due(engine=engine, now=now, mail=settings)
        log.write(json.dumps({"step": step, "sent": sum(sent.values())}) + "\n")


def _queued(engine) -> int:
    with engine.connect() as conn:
        query = sa.select(sa.func.count()).where(mail_send._due(utcnow()))
        return conn.execute(query.select_from(OutboxMessage)).scalar_one()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tests.deploy.driver")
    parser.add_argument("job", choices=["poll", "advance", "mail", "digest", "alive"])
    parser.add_argument("--db", required=True)
    parser.add_argument("--go", required=True, help="start once this file exists")
    parser.add_argument("--log", required=True)
    parser.add_argument("--ready", help="created once the process is ready to start")
    parser.add_argument("--owner", default="driver")
    parser.add_argument("--campaign", type=int)
    parser.add_argument("--lease", type=float, default=600.0)
    parser.add_argument("--stop", default="/nonexistent", help="poll: stop once this exists")
    parser.add_argument("--now")
    parser.add_argument("--smtp-port", type=int)
    parser.add_argument("--limit", type=int, default=mail_send.CLAIM_LIMIT)
    args = parser.parse_args(argv)
    engine = make_engine(args.db)
    with engine.connect():
        pass  # connect before saying ready: the start line is about the work, not imports
    with open(args.log, "a", buffering=1) as log:
        if args.ready:
            Path(args.ready).touch()
        _wait_for(args.go)
        log.write(json.dumps({"start": time.time()}) + "\n")
        jobs = {
            "poll": _poll, "advance": _advance, "mail": _mail, "digest": _digest,
            "alive": _alive,
        }  # fmt: skip
        jobs[args.job](args, engine, log)
    engine.dispose()


if __name__ == "__main__":
    sys.exit(main())
