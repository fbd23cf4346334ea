"""Reply addresses (issue #31 item 3): `reply+<token>@PBP_REPLY_DOMAIN`, one per member
and thread (an entry's notes, or a forum scene), written into the notification mails about
that thread (pbp.services.mail.queue) and read back by `pbp mail-in`
(pbp.services.mail.mail_in).

The token is the whole secret: 160 bits of an HMAC of the secret key and the row's random
salt, in lower-case base32 (mail systems may change the case of an address's local part).
The row keeps only its SHA-256 (pbp.models.mail_in says why). The address says nothing else:
no user, campaign or entry id, so a leaked address tells nobody whose it is, and a guessed
one finds nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from datetime import datetime

from sqlmodel import Session, col, select

from pbp.models import Membership, ReplyToken
from pbp.services.mail.settings import MailSettings

PREFIX = "reply+"
TOKEN = re.compile(r"[a-z2-7]{32}")


def _token(settings: MailSettings, salt: str) -> str:
    digest = hmac.new(settings.secret_key.encode(), f"reply:{salt}".encode(), hashlib.sha256)
    return base64.b32encode(digest.digest()[:20]).decode().lower()


def hashed(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def reply_address(
    *,
    session: Session,
    settings: MailSettings,
    membership: Membership,
    entry_id: int | None = None,
    thread_id: int | None = None,
    now: datetime,
) -> str | None:
    """The member's reply address for one entry or one thread (made on first use, then
    the same until revoked); None when PBP_REPLY_DOMAIN is unset."""
    if not settings.reply_domain:
        return None
    if (entry_id is None) == (thread_id is None):
        raise ValueError("a reply address is for one entry or one thread")
    target = "entry" if entry_id is not None else "thread"
    row = session.exec(
        select(ReplyToken).where(
            ReplyToken.membership_id == membership.id,
            ReplyToken.target == target,
            ReplyToken.entry_id == entry_id,
            ReplyToken.thread_id == thread_id,
            col(ReplyToken.revoked_at).is_(None),
        )
    ).first()
    if row is None:
        salt = secrets.token_hex(16)
        row = ReplyToken(
            membership_id=membership.id,
            target=target,
            entry_id=entry_id,
            thread_id=thread_id,
            salt=salt,
            token_hash=hashed(_token(settings, salt)),
            created_at=now,
        )
        session.add(row)
        session.flush()
    return f"{PREFIX}{_token(settings, row.salt)}@{settings.reply_domain}"


def token_of(address: str, settings: MailSettings) -> str | None:
    """The token of `address` if it is one of ours (reply+<token>@PBP_REPLY_DOMAIN)."""
    local, _, domain = address.strip().strip("<>").lower().rpartition("@")
    if not settings.reply_domain or domain != settings.reply_domain:
        return None
    token = local.removeprefix(PREFIX) if local.startswith(PREFIX) else ""
    return token if TOKEN.fullmatch(token) else None


def find(*, session: Session, token: str) -> ReplyToken | None:
    """The row of a token, revoked or not; None for an unknown one."""
    return session.exec(select(ReplyToken).where(ReplyToken.token_hash == hashed(token))).first()


def revoke_all(*, session: Session, membership: Membership, now: datetime) -> int:
    """Stop every reply address of one member in one campaign; returns how many. The next
    notification mail carries new ones."""
    rows = session.exec(
        select(ReplyToken).where(
            ReplyToken.membership_id == membership.id, col(ReplyToken.revoked_at).is_(None)
        )
    ).all()
    for row in rows:
        row.revoked_at = now
        session.add(row)
    session.flush()
    return len(rows)
