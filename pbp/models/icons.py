"""Character icons (issue #33 item 1): up to 15 small pictures per character, each with a
keyword and alt text, one of them the default. The player picks one per entry, note or
forum post (`icon_id` on those rows); a row without one shows the character's default.

`data` is the PNG pbp made itself (pbp.services.icons.images: re-encoded to 100 x 100,
metadata gone), never the uploaded bytes; `digest` (its SHA-256) is part of the icon's
address, so the address of a changed picture is a new one and browsers may keep each
for a year.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _created, _fk

MAX_ICONS = 15
MAX_KEYWORD = 40
MAX_ALT = 200


class CharacterIcon(SQLModel, table=True):
    __tablename__ = "character_icon"
    __table_args__ = (sa.UniqueConstraint("character_id", "keyword"),)

    id: RowId = Field(default=None, primary_key=True)
    character_id: int = _fk("character.id")
    keyword: str = Field(max_length=MAX_KEYWORD)
    alt: str = Field(max_length=MAX_ALT)
    data: bytes = Field(sa_type=sa.LargeBinary)
    digest: str = Field(max_length=64)
    is_default: bool = Field(default=False)
    created_at: datetime = _created()
