"""Issue #31 item 2: chat channels, the delivering side -- one JSON POST per outbox row
to a Discord, Slack or Matrix webhook, through pbp's SSRF-guarded fetcher (the webhook
address is typed by a referee, and must not reach pbp's own network).

What each platform is sent: Discord `{"content", "allowed_mentions": {"parse": []}}` (a
player's "@everyone" pings no one), Slack `{"text"}` with its three control characters
escaped, Matrix (a hookshot generic webhook) `{"text"}`.

Limits: Discord takes 5 requests per 2 s per webhook; the deliverer keeps to that by
waiting (`RateWindow`), and a 429 puts the webhook off for its Retry-After. A webhook that
fails backs off (1, 2, 4 ... minutes, at most 6 hours: `send.backoff`), its rows wait for
it, and its last error shows on the referee's dashboard; the outbox delivers mail before
chat (`send.send_pending`), so none of this delays a mail.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session

from adapters.errors import FeedError
from adapters.fetch import Fetcher
from pbp.models import ChatWebhook, Entry, OutboxMessage
from pbp.models.forum import Post
from pbp.services.mail.send import MAX_ATTEMPTS, SendReport, backoff, record

log = logging.getLogger("pbp.chat")

# Requests per window for each platform (Discord's documented webhook limit); Slack's
# "about one a second" is kept by the same window.
RATES = {"discord": (5, 2.0), "slack": (1, 1.0), "matrix": (5, 2.0)}
MAX_WAIT = 2.5  # seconds one delivery waits for a window; longer, and the row is deferred


def payload(platform: str, text: str) -> bytes:
    if platform == "discord":
        body: dict = {"content": text, "allowed_mentions": {"parse": []}}
    elif platform == "slack":
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        body = {"text": escaped}
    else:
        body = {"text": text}
    return json.dumps(body).encode()


class RateWindow:
    """At most `count` requests per `seconds` for each key, across this process."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.sent: dict[str, deque[float]] = {}
        self.lock = threading.Lock()

    def wait(self, key: str, count: int, seconds: float) -> float:
        """Seconds to wait before the next request to `key` may go (0: now)."""
        with self.lock:
            times = self.sent.setdefault(key, deque())
            now = self.clock()
            while times and times[0] <= now - seconds:
                times.popleft()
            return 0.0 if len(times) < count else times[0] + seconds - now

    def note(self, key: str) -> None:
        with self.lock:
            self.sent.setdefault(key, deque()).append(self.clock())


WINDOWS = RateWindow()  # one per process: every sender thread shares the platform's limit


def _withdrawn(session: Session, row: OutboxMessage) -> str | None:
    """Why a row must not be posted after all: its entry was hidden or its post deleted
    since it was queued (what was public then is not now)."""
    check = row.headers or {}
    if "entry_id" in check:
        entry = session.get(Entry, check["entry_id"])
        if entry is None or entry.hidden_at is not None:
            return "not posted: the entry was hidden or removed"
    if "post_id" in check:
        post = session.get(Post, check["post_id"])
        if post is None or post.deleted_at is not None or post.audience != "all":
            return "not posted: the post was deleted or is no longer public"
    return None


def _retry_after(headers: dict[str, str], body: bytes) -> float:
    try:
        return float(headers.get("retry-after") or json.loads(body or b"{}")["retry_after"])
    except (ValueError, KeyError, TypeError):
        return 2.0


@dataclass
class ChatChannel:
    """The outbox's "chat" channel (`send.Channel`)."""

    fetcher: Fetcher
    windows: RateWindow = WINDOWS
    sleep: Callable[[float], None] = time.sleep

    def deliver(
        self, session: Session, rows: list[OutboxMessage], now: datetime, report: SendReport
    ) -> None:
        broken: set[int] = set()  # webhooks that failed in this delivery: not tried again
        for row in rows:
            hook = session.get(ChatWebhook, row.chat_webhook_id) if row.chat_webhook_id else None
            if hook is None:
                record(session, row.id, status="failed", last_error="the webhook was removed")
                report.failed.append(row.id)
                continue
            reason = _withdrawn(session, row)
            if reason is not None:
                record(session, row.id, status="failed", last_error=reason)
                report.failed.append(row.id)
                continue
            if hook.id in broken or (hook.retry_at is not None and hook.retry_at > now):
                # The webhook is backing off: its rows wait for it, untried.
                later = max(hook.retry_at or now, now)
                record(session, row.id, status="queued", next_attempt_at=later)
                report.deferred.append(row.id)
                continue
            if not self._post(session, hook, row, now, report):
                broken.add(hook.id)

    def _post(
        self,
        session: Session,
        hook: ChatWebhook,
        row: OutboxMessage,
        now: datetime,
        report: SendReport,
    ) -> bool:
        """Post one row; False if the webhook failed."""
        count, seconds = RATES[hook.platform]
        key = f"{hook.platform}:{hook.id}"
        wait = self.windows.wait(key, count, seconds)
        if wait > MAX_WAIT:
            later = now + timedelta(seconds=wait)
            record(session, row.id, status="queued", next_attempt_at=later)
            report.deferred.append(row.id)
            return True
        if wait > 0:
            self.sleep(wait)
        self.windows.note(key)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        try:
            answer = self.fetcher.post_bytes(
                hook.url, payload(hook.platform, row.body_text), headers
            )
            status, error = answer.status, ""
        except FeedError as exc:
            status, error = 0, str(exc)
        if 200 <= status < 300:
            record(session, row.id, status="sent", sent_at=now, last_error=None)
            hook.failures, hook.retry_at, hook.last_error = 0, None, None
            hook.last_sent_at = now
            session.add(hook)
            session.commit()
            report.sent.append(row.id)
            return True
        if status == 429:
            pause = timedelta(seconds=_retry_after(answer.headers, answer.body))
            error, until = "429: the platform asks pbp to slow down", now + pause
        else:
            error = error or f"the webhook answered {status}"
            until = now + backoff(hook.failures + 1)
            hook.failures += 1
        hook.retry_at, hook.last_error = until, error[:500]
        session.add(hook)
        session.commit()
        log.warning("chat: webhook %s failed: %s", hook.id, error)
        if status in (400, 413) and row.attempts >= 2:  # the platform refuses this message
            record(session, row.id, status="failed", last_error=error[:2000])
            report.failed.append(row.id)
        elif row.attempts >= MAX_ATTEMPTS:
            record(session, row.id, status="failed", last_error=f"gave up: {error}"[:2000])
            report.failed.append(row.id)
        else:  # waits for its webhook's backoff
            record(session, row.id, status="queued", next_attempt_at=until, last_error=error)
            report.deferred.append(row.id)
        return False
