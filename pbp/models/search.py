"""The search index (issue #33 item 2): one row per searchable text of a campaign.

An entry, a note, a forum post or an event is copied here as plain text by
`pbp.services.search.index` whenever the ORM writes it. The row carries no visibility:
every search joins back to the row it came from and applies the pages' rules there
(`pbp.services.search.visible`), so a whisper, a hidden entry or a tailored event cannot
leak through a stale copy. The full-text indexes over it live outside the models:
SQLite's FTS5 table `search_fts` and PostgreSQL's generated column `tsv`
(`to_tsvector('english', title || ' ' || body)`) with its GIN index are made by migration
0023 (neither is a table or column SQLModel can describe on both databases), and
`pbp.migrations.env` leaves them out of the drift check.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _fk

SEARCH_KINDS = ("entry", "note", "post", "event")


class SearchDoc(SQLModel, table=True):
    __tablename__ = "search_doc"
    __table_args__ = (
        _choices("kind", SEARCH_KINDS),
        sa.UniqueConstraint("kind", "ref_id"),
    )

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    kind: str = Field(max_length=8)
    # The id of the Entry, Note, Post or Event the text is copied from.
    ref_id: int
    title: str = Field(default="", max_length=1000)
    body: str = Field(default="", sa_type=sa.Text)
