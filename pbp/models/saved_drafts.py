"""A member's saved draft of a form (issue #29 item 5, "Drafts that survive").

One row per member per form: the key is the person, the campaign, the form's kind and its
target (the entry a note answers, the scene a post replies in; 0 for a form with none, the
new entry and the new scene). The write forms save it every 10 s and on "Save draft"; the
form reopens with it after a closed tab, an expired session or a refused submit, and the
posting service deletes it in the transaction that posts.

A draft is its owner's alone: no page, feed, API answer, export or mail reads this table
for anyone else (pbp.services.saved_drafts reads only the caller's own row).
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _fk, _json, _time

# entry: a new entry on the built-in blog; note: a note on an entry; post: a reply in a
# forum scene; scene: a new forum scene with its first post.
DRAFT_FORMS = ("entry", "note", "post", "scene")


class SavedDraft(SQLModel, table=True):
    __tablename__ = "saved_draft"
    __table_args__ = (
        _choices("form", DRAFT_FORMS),
        sa.UniqueConstraint("user_id", "campaign_id", "form", "target_id"),
    )

    id: RowId = Field(default=None, primary_key=True)
    user_id: int = _fk("user.id")
    campaign_id: int = _fk("campaign.id")
    form: str = Field(max_length=16)
    # 0, not NULL, for a form without a target: NULLs never collide in a unique key.
    target_id: int = Field(default=0)
    # The form's fields as typed, by name: a text, or a list for a multiple choice.
    fields: dict = _json()
    saved_at: datetime = _time(nullable=False)
