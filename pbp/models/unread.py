"""What each member has read (issue #29 item 2, "Unread, across devices").

One row per member and place, a high-water mark: the id of the newest item the member has
seen there. An item is new when its id is above its place's mark (and above the campaign's
floor, which "Mark all read" raises), so a count of what is new is one aggregate query,
not a row per item read. Kept on the server, so a phone and a laptop agree.

Kinds and what `target_id` and `seen_id` are:
- "planet": the campaign; the newest entry seen.
- "notes":  the campaign; a floor for every entry's notes (raised by "Mark all read").
- "entry":  an entry; the newest of its notes seen.
- "scenes": the campaign; a floor for every scene's posts (raised by "Mark all read").
- "scene":  a forum thread; the newest of its posts seen.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk

MARKER_KINDS = ("planet", "notes", "entry", "scenes", "scene")


class ReadMarker(SQLModel, table=True):
    __tablename__ = "read_marker"
    __table_args__ = (
        _choices("kind", MARKER_KINDS),
        # The upsert's key: one mark per member, kind and place.
        sa.UniqueConstraint("user_id", "kind", "target_id"),
    )

    id: RowId = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", ondelete="CASCADE")
    campaign_id: int = _fk("campaign.id")
    kind: str = Field(max_length=8)
    # Not a foreign key: it names a campaign, an entry or a thread, by kind.
    target_id: int
    seen_id: int = Field(default=0)
    updated_at: datetime = _created()
