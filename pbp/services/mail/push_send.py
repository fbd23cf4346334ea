"""Issue #31 item 1: Web Push, the delivering side -- VAPID (RFC 8292), the encrypted
message (RFC 8291, aes128gcm via `pywebpush`), and the POST to the browser's push
service (RFC 8030) through pbp's SSRF-guarded fetcher (the endpoint is whatever a browser,
or someone pretending to be one, sent pbp).

The VAPID key pair is made once, on first use, into the instance folder
(`vapid_private.pem`, mode 0600) and kept: every subscription is bound to its public key,
so a new pair would silence every device. The VAPID `sub` is PBP_VAPID_SUB, else
"mailto:" the address mail comes from (Safari's push service requires one of the two).

A push service answering 404 or 410 has dropped the subscription: pbp deletes it.
"""

from __future__ import annotations

import base64
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parseaddr
from pathlib import Path
from urllib.parse import urlsplit

# pywebpush's own names (its Vapid is py_vapid's RFC 8292 Vapid02): one declared dependency.
from pywebpush import Vapid, WebPusher
from sqlmodel import Session

from adapters.errors import FeedError
from adapters.fetch import Fetcher
from pbp.errors import ConfigError
from pbp.models import OutboxMessage, PushSubscription
from pbp.services.mail.send import SendReport, record, retry_later

log = logging.getLogger("pbp.push")

KEY_FILE = "vapid_private.pem"
TTL = 24 * 3600  # seconds a push service keeps a push for a device that is offline
VAPID_LIFETIME = 12 * 3600  # the signed claim's `exp` (RFC 8292: at most 24 hours)


def vapid_key(instance_path: str | Path) -> Vapid:
    """The instance's VAPID key pair, made on first use (mode 0600, never replaced)."""
    path = Path(instance_path) / KEY_FILE
    if not path.exists():
        fresh = Vapid()
        fresh.generate_keys()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: use theirs
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(fresh.private_pem())
    return Vapid.from_file(str(path))


def application_server_key(vapid: Vapid) -> str:
    """The public key as the browser's `applicationServerKey` (base64url, no padding)."""
    point = vapid.public_key.public_numbers()  # P-256: 0x04, then x and y, 32 bytes each
    raw = b"\x04" + point.x.to_bytes(32, "big") + point.y.to_bytes(32, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def vapid_sub(config: Mapping) -> str:
    sub = (config.get("PBP_VAPID_SUB") or "").strip()
    if not sub:
        address = parseaddr(config.get("MAIL_FROM") or "")[1]
        sub = f"mailto:{address}" if "@" in address else ""
    if not (sub.startswith("mailto:") or sub.startswith("https://")):
        raise ConfigError(
            "PBP_VAPID_SUB must be a mailto: or https:// address (push services require it)"
        )
    return sub


@dataclass
class PushChannel:
    """The outbox's "push" channel (`send.Channel`)."""

    fetcher: Fetcher
    vapid: Vapid
    sub: str

    def headers(self, endpoint: str) -> dict[str, str]:
        parts = urlsplit(endpoint)
        claims = {
            "aud": f"{parts.scheme}://{parts.netloc}",
            "sub": self.sub,
            "exp": int(time.time()) + VAPID_LIFETIME,
        }
        return {
            **self.vapid.sign(claims),
            "TTL": str(TTL),
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "Urgency": "normal",
        }

    def deliver(
        self, session: Session, rows: list[OutboxMessage], now: datetime, report: SendReport
    ) -> None:
        for row in rows:
            device = (
                session.get(PushSubscription, row.push_subscription_id)
                if row.push_subscription_id
                else None
            )
            if device is None:
                record(session, row.id, status="failed", last_error="the device was removed")
                report.failed.append(row.id)
                continue
            info = {
                "endpoint": device.endpoint,
                "keys": {"p256dh": device.p256dh, "auth": device.auth},
            }
            try:
                body = WebPusher(info).encode(row.body_text.encode(), "aes128gcm")["body"]
            except Exception as exc:  # pywebpush raises bare errors for damaged keys
                record(session, row.id, status="failed", last_error=f"cannot encrypt: {exc}"[:2000])
                report.failed.append(row.id)
                continue
            try:
                answer = self.fetcher.post_bytes(
                    device.endpoint, body, self.headers(device.endpoint)
                )
                status, error = answer.status, f"the push service answered {answer.status}"
            except FeedError as exc:
                status, error = 0, str(exc)
            if 200 <= status < 300:
                record(session, row.id, status="sent", sent_at=now, last_error=None)
                device.last_sent_at = now
                session.add(device)
                session.commit()
                report.sent.append(row.id)
            elif status in (404, 410):
                # RFC 8030 section 7.3: the subscription is gone for good.
                record(session, row.id, status="failed", last_error=f"{error}: device removed")
                session.delete(device)
                session.commit()
                report.failed.append(row.id)
            elif status == 0 or status == 429 or status >= 500:
                requeued = retry_later(session, row.id, row.attempts, now, error)
                (report.deferred if requeued else report.failed).append(row.id)
            else:
                record(session, row.id, status="failed", last_error=error)
                report.failed.append(row.id)
