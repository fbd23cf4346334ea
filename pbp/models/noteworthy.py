"""Noteworthy on blogs: each character's blog, turns and events, entries and notes, commenter
aliases, recorded challenges and the referee's rulings."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import (
    BLOG_KINDS,
    EVENT_MODES,
    STANCES,
    TURN_STATUSES,
    RowId,
    _choices,
    _created,
    _fk,
    _json,
    _time,
)


class Blog(SQLModel, table=True):
    __table_args__ = (
        _choices("kind", BLOG_KINDS),
        sa.CheckConstraint(
            "kind = 'builtin' OR feed_url IS NOT NULL", name="external_blog_has_feed_url"
        ),
    )

    id: RowId = Field(default=None, primary_key=True)
    character_id: int = _fk("character.id", unique=True)
    kind: str = Field(max_length=16)
    feed_url: str | None = Field(default=None, max_length=2000)
    home_url: str | None = Field(default=None, max_length=2000)
    # NULL = detect the dialect automatically; the referee may pin one.
    adapter_kind: str | None = Field(default=None, max_length=40)
    etag: str | None = Field(default=None, max_length=400)
    last_modified: str | None = Field(default=None, max_length=100)
    content_hash: str | None = Field(default=None, max_length=64)
    last_unconditional_at: datetime | None = _time()
    next_poll_at: datetime | None = _time(index=True)
    last_polled_at: datetime | None = _time()
    last_success_at: datetime | None = _time()
    failure_count: int = Field(default=0)
    last_error: str | None = Field(default=None, max_length=2000)
    gone: bool = Field(default=False)
    # A worker's claim on this blog while it polls it; expires if the worker dies.
    lease_owner: str | None = Field(default=None, max_length=100)
    lease_until: datetime | None = _time()
    created_at: datetime = _created()


class Turn(SQLModel, table=True):
    __table_args__ = (
        sa.UniqueConstraint("campaign_id", "number"),
        _choices("status", TURN_STATUSES),
        sa.CheckConstraint("number >= 1", name="number_positive"),
    )

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    number: int
    status: str = Field(default="open", max_length=16)
    opened_at: datetime = _created()
    deadline: datetime | None = _time()
    # How often the deadline moved: the calendar feed's SEQUENCE for the turn's deadline
    # (RFC 5545: a change of an event's time raises it). Counted by `_deadline_moved`.
    deadline_sequence: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    closed_at: datetime | None = _time()
    resolved_at: datetime | None = _time()
    # Character id -> status when the turn opened: Noteworthy resolves all of a turn's
    # challenges "against the standings at the turn's start", even after they change.
    start_standings: dict = _json()
    # The resolved tally's summary (outcomes, explanations), kept for history and export.
    result: dict = _json()


@sa.event.listens_for(Turn.deadline, "set", active_history=True)
def _deadline_moved(turn: Turn, value, old, _initiator) -> None:
    """Count every change of a stored turn's deadline (issue #30 item 4), whichever service
    makes it: the calendar feed gives the deadline's event a higher SEQUENCE, so calendar
    clients replace the old time instead of keeping both. The first value, set when the
    turn is made, is no move (`old` is then one of SQLAlchemy's "no value" markers).
    `active_history` loads the stored value first when it is not loaded, so a change is
    never missed. A bulk UPDATE of deadlines would bypass this: pbp writes none."""
    if old is not None and not isinstance(old, datetime):
        return
    if old != value:
        turn.deadline_sequence = (turn.deadline_sequence or 0) + 1


class Event(SQLModel, table=True):
    """A referee's event. character_id NULL: the text for everyone; otherwise an
    addition to it or a replacement of it for that one character (Noteworthy: "may
    tailor different events to specific PCs")."""

    __table_args__ = (
        _choices("mode", EVENT_MODES),
        sa.UniqueConstraint("turn_id", "character_id"),
        sa.CheckConstraint(
            "(character_id IS NULL) = (mode = 'all')", name="mode_matches_recipient"
        ),
    )

    id: RowId = Field(default=None, primary_key=True)
    turn_id: int = _fk("turn.id")
    character_id: int | None = _fk("character.id", nullable=True)
    mode: str = Field(default="all", max_length=16)
    text: str = Field(sa_type=sa.Text)
    created_at: datetime = _created()


class Entry(SQLModel, table=True):
    __table_args__ = (
        sa.UniqueConstraint("blog_id", "source_id"),
        # The planet's and the blogs' newest-first pages.
        sa.Index("ix_entry_character_published", "character_id", "published_at"),
        # The planet's pick of its newest shown entries: the index alone answers it, where
        # the one above read every entry's row (bodies and all) for `hidden_at`.
        sa.Index(
            "ix_entry_character_hidden_published", "character_id", "hidden_at", "published_at"
        ),
    )

    id: RowId = Field(default=None, primary_key=True)
    blog_id: int = _fk("blog.id")
    character_id: int = _fk("character.id")
    turn_id: int | None = _fk("turn.id", nullable=True, ondelete="SET NULL")
    source_id: str = Field(max_length=1000)
    url: str | None = Field(default=None, max_length=2000)
    title: str = Field(default="", max_length=1000)
    body_html: str = Field(default="", sa_type=sa.Text)
    # The Markdown its writer typed on pbp's own blog, which the edit page shows again
    # (issue #27 item 6). NULL for feed entries, whose source is their blog's HTML, and
    # for entries written before it was kept.
    body_source: str | None = Field(default=None, sa_type=sa.Text)
    mood_raw: str | None = Field(default=None, max_length=200)
    mood: str | None = Field(default=None, max_length=200, index=True)
    published_at: datetime | None = _time(index=True)
    updated_at: datetime | None = _time()
    first_seen_at: datetime = _created()
    content_hash: str = Field(max_length=64)
    comments_url: str | None = Field(default=None, max_length=2000)
    comment_count: int | None = Field(default=None)
    # Reasons the referee should look at this entry (e.g. "backdated", "no mood line").
    flags: list = _json(list)
    # When its author hid it (issue #27 item 2): from then on only they and the referee see
    # it, and the tally reads the turn as if it had never been posted
    # (pbp.services.noteworthy.hidden_entries).
    hidden_at: datetime | None = _time()
    # The icon its writer picked (issue #33 item 1); NULL: the character's default.
    icon_id: int | None = _fk("character_icon.id", nullable=True, ondelete="SET NULL")


class EntryRevision(SQLModel, table=True):
    """Every version of an entry as pbp saw it, the first included: the history the
    referee reads, and the mood timeline the rules need (withdrawals)."""

    id: RowId = Field(default=None, primary_key=True)
    entry_id: int = _fk("entry.id")
    seen_at: datetime = _created()
    title: str = Field(default="", max_length=1000)
    body_html: str = Field(default="", sa_type=sa.Text)
    body_source: str | None = Field(default=None, sa_type=sa.Text)  # as on Entry
    mood_raw: str | None = Field(default=None, max_length=200)
    mood: str | None = Field(default=None, max_length=200)
    content_hash: str = Field(max_length=64)


class Note(SQLModel, table=True):
    """A comment on an entry. The stance is read once, when the note arrives."""

    __table_args__ = (
        sa.UniqueConstraint("entry_id", "source_id"),
        _choices("stance", STANCES),
        # Notes waiting for their commenter's mapping, found per entry of one campaign
        # (dashboard, ingest): other campaigns' waiting notes cost nothing. The author
        # index leaves NULL out: as one key holding every waiting note of every campaign
        # it tempted SQLite's planner into reading them all. The author's columns make
        # the index answer the dashboard's count alone, and the NULL column beside
        # entry_id is what makes SQLite's planner (without statistics) pick it over
        # ix_note_entry_id, which read every note of the campaign (6 ms -> 1.4 ms at 24 x 60).
        sa.Index(
            "ix_note_unmapped",
            "entry_id",
            "author_character_id",
            "author_name",
            "author_uri",
            sqlite_where=sa.text("author_character_id IS NULL"),
            postgresql_where=sa.text("author_character_id IS NULL"),
        ),
        sa.Index(
            "ix_note_mapped_author",
            "author_character_id",
            sqlite_where=sa.text("author_character_id IS NOT NULL"),
            postgresql_where=sa.text("author_character_id IS NOT NULL"),
        ),
    )

    id: RowId = Field(default=None, primary_key=True)
    entry_id: int = _fk("entry.id")
    source_id: str = Field(max_length=1000)
    # NULL while the commenter is not mapped to a character.
    author_character_id: int | None = Field(
        default=None, foreign_key="character.id", nullable=True, ondelete="SET NULL"
    )
    # The note this one answers, on the same entry (issue #29 item 3: threaded notes);
    # NULL for a note on the entry itself, or a reply whose parent pbp has not read.
    parent_note_id: int | None = Field(
        default=None, foreign_key="note.id", nullable=True, ondelete="SET NULL", index=True
    )
    author_name: str = Field(default="", max_length=200)
    author_uri: str | None = Field(default=None, max_length=2000)
    author_email_hash: str | None = Field(default=None, max_length=64)
    body_html: str = Field(default="", sa_type=sa.Text)
    published_at: datetime | None = _time(index=True)
    first_seen_at: datetime = _created()
    stance: str = Field(default="none", max_length=16)
    fate_text: str | None = Field(default=None, sa_type=sa.Text)
    # The "your note counts as theirs" mail that lists this note, for a note read from a
    # feed as another blog's commenter's (pbp.services.mail.notifications.
    # queue_credited_notes, one a day per character). No foreign key: the outbox row is
    # never removed but with its campaign, and the note with it.
    credit_mail_id: int | None = Field(default=None)
    # The icon its writer picked (issue #33 item 1); NULL: the character's default.
    icon_id: int | None = _fk("character_icon.id", nullable=True, ondelete="SET NULL")
    # Reasons the referee should look at this note (e.g. dated after it was first seen).
    flags: list = Field(
        default_factory=list,
        sa_type=sa.JSON,
        nullable=False,
        sa_column_kwargs={"server_default": "[]"},
    )


class AuthorAlias(SQLModel, table=True):
    """Commenters on external blogs, by verified identity (a profile address), mapped to
    characters by the referee or declared by the character's player. Rows of kind "name"
    are from before names stopped counting (issue #16): they credit nothing."""

    __table_args__ = (
        sa.UniqueConstraint("campaign_id", "kind", "value"),
        _choices("kind", ("name", "uri", "email_hash")),
        _choices("source", ("referee", "player")),
    )

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    character_id: int = _fk("character.id")
    kind: str = Field(max_length=16)
    value: str = Field(max_length=2000)
    # Who said so: the referee (dashboard, API) or the player on their own blog page.
    source: str = Field(
        default="referee", max_length=16, sa_column_kwargs={"server_default": "referee"}
    )


class Challenge(SQLModel, table=True):
    __table_args__ = (
        _choices("outcome", ("challenger", "target", "needs_ruling", "invalid", "withdrawn")),
    )

    id: RowId = Field(default=None, primary_key=True)
    entry_id: int = _fk("entry.id", unique=True)
    turn_id: int = _fk("turn.id")
    challenger_id: int = _fk("character.id")
    # NULL while the target is ambiguous and waits for a ruling.
    target_id: int | None = _fk("character.id", nullable=True)
    made_at: datetime = _time(nullable=False)
    withdrawn_at: datetime | None = _time()
    outcome: str | None = Field(default=None, max_length=16)
    # What the referee says the outcome means in the setting (shown to players).
    consequence: str | None = Field(default=None, sa_type=sa.Text)


class Ruling(SQLModel, table=True):
    """A referee's override of an automatic reading (target, stance, author, validity,
    withdrawal, tie-break, fate). The latest ruling on a subject wins."""

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    turn_id: int | None = _fk("turn.id", nullable=True)
    kind: str = Field(max_length=40)
    subject_type: str = Field(max_length=40)
    subject_id: int
    value: dict = _json()
    reason: str = Field(default="", sa_type=sa.Text)
    referee_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()
