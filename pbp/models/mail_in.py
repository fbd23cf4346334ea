"""Reply by email (issue #31 item 3): each member's secret reply address per thread.

A notification mail about an entry (or a forum scene) carries `reply+<token>@PBP_REPLY_DOMAIN`
as its Reply-To. The token names one member and one thread, nothing else: a reply to it
becomes a note on that entry or a post in that scene, as that member, and nowhere else.

Only the token's SHA-256 is stored (`token_hash`, looked up on arrival). The token itself is
an HMAC of the instance's secret key and the row's random `salt`, so pbp can write the same
address into the next mail without keeping it, and a copy of the database alone opens no
address. Revoking sets `revoked_at`: the address stops working at once, and the next mail
about that thread gets a new one.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk, _time

REPLY_TARGETS = ("entry", "thread")


class ReplyToken(SQLModel, table=True):
    __tablename__ = "reply_token"
    __table_args__ = (
        _choices("target", REPLY_TARGETS),
        # Exactly one place to post: an entry's notes or a forum thread.
        sa.CheckConstraint(
            "(target = 'entry' AND entry_id IS NOT NULL AND thread_id IS NULL) OR "
            "(target = 'thread' AND thread_id IS NOT NULL AND entry_id IS NULL)",
            name="one_place",
        ),
    )

    id: RowId = Field(default=None, primary_key=True)
    membership_id: int = _fk("membership.id")
    target: str = Field(max_length=8)
    entry_id: int | None = _fk("entry.id", nullable=True)
    thread_id: int | None = _fk("forum_thread.id", nullable=True)
    salt: str = Field(max_length=32)
    token_hash: str = Field(max_length=64, unique=True)
    created_at: datetime = _created()
    revoked_at: datetime | None = _time()
