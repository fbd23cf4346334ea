"""The data model (SQLModel tables).

Constraints keep bad data out at the database: unique keys where the game has one
(a character's slug in a campaign, a turn number, an entry's source id on its blog),
foreign keys everywhere, NOT NULL by default, and CHECKs on the small vocabularies.
Times are stored as naive UTC and come back timezone-aware (`UTCDateTime`), the same on
SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

# Deterministic constraint names: Alembic needs them to alter tables later (SQLite
# rebuilds tables in batch mode and must find each constraint by name).
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator):
    """Aware datetimes in, aware UTC datetimes out, naive UTC in the database.

    SQLite keeps no time zone, PostgreSQL's `timestamptz` does; storing naive UTC on
    both means one code path and comparisons that never mix naive and aware values.
    """

    impl = sa.DateTime
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value, dialect):
        if value is not None:
            value = value.replace(tzinfo=UTC)
        return value


def utcnow() -> datetime:
    return datetime.now(UTC)


def _choices(column: str, values: tuple[str, ...]) -> sa.CheckConstraint:
    quoted = ", ".join(f"'{v}'" for v in values)
    return sa.CheckConstraint(f"{column} IN ({quoted})", name=f"{column}_valid")


def _time(nullable: bool = True, **kwargs) -> Any:
    return Field(sa_type=UTCDateTime, nullable=nullable, **kwargs)


def _created() -> Any:
    return Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


def _json(default_factory=dict) -> Any:
    return Field(default_factory=default_factory, sa_type=sa.JSON, nullable=False)


def _fk(target: str, nullable: bool = False, ondelete: str = "CASCADE", **kw) -> Any:
    return Field(foreign_key=target, nullable=nullable, ondelete=ondelete, index=True, **kw)


ROLES = ("referee", "player")
CHARACTER_STATUSES = ("active", "outsider", "winner")
BLOG_KINDS = ("builtin", "external")
TURN_STATUSES = ("open", "closed", "resolved")
EVENT_MODES = ("all", "addition", "replacement")
STANCES = ("support", "oppose", "none", "ambiguous")
OUTBOX_STATUSES = ("queued", "sending", "sent", "failed")
CAMPAIGN_STATUSES = ("setup", "running", "ended")


class User(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(max_length=320, unique=True)
    display_name: str = Field(max_length=120)
    password_hash: str | None = Field(default=None, max_length=400)
    created_at: datetime = _created()
    # Part of every login session's id (accounts.session_id): raising it at logout or a
    # password change ends every session made before, even a copied cookie.
    session_generation: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # An account made on the open sign-up page works only once its owner followed the
    # link mailed to the address (PBP_SIGNUP=open); invited and operator-made accounts
    # never wait.
    awaiting_confirmation: bool = Field(
        default=False, sa_column_kwargs={"server_default": sa.false()}
    )


class Campaign(SQLModel, table=True):
    __table_args__ = (
        _choices("status", CAMPAIGN_STATUSES),
        sa.CheckConstraint("slug <> ''", name="slug_not_empty"),
    )

    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(max_length=80, unique=True)
    name: str = Field(max_length=200)
    ruleset: str = Field(max_length=40)
    status: str = Field(default="setup", max_length=16)
    # Ruleset settings, e.g. Noteworthy: opening_turns, fair_interval_hours, custom_moods.
    settings: dict = _json()
    time_zone: str = Field(default="UTC", max_length=64)
    created_at: datetime = _created()
    # Bumped after every commit that changed what the campaign's pages show (see
    # pbp.content_version); cached pages are keyed by it.
    content_version: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class Membership(SQLModel, table=True):
    __table_args__ = (
        sa.UniqueConstraint("campaign_id", "user_id"),
        _choices("role", ROLES),
    )

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    user_id: int = _fk("user.id")
    role: str = Field(max_length=16)
    # Email preferences by kind ("events", "digest", "notes_on_mine", "challenges");
    # a missing key means the kind's default (see pbp.services.mail).
    notify: dict = _json()
    created_at: datetime = _created()


class Invite(SQLModel, table=True):
    """A referee's single-use invitation; the link carries a signed form of `id`."""

    __table_args__ = (_choices("role", ROLES),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    # The character the invited player will play, if the referee made it already.
    character_id: int | None = _fk("character.id", nullable=True)
    email: str | None = Field(default=None, max_length=320)
    role: str = Field(default="player", max_length=16)
    created_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()
    expires_at: datetime = _time(nullable=False)
    used_at: datetime | None = _time()
    used_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")


class Character(SQLModel, table=True):
    __table_args__ = (
        sa.UniqueConstraint("campaign_id", "slug"),
        sa.UniqueConstraint("campaign_id", "name"),
        _choices("status", CHARACTER_STATUSES),
    )

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    # NULL until the invited player signs up: the referee builds the roster first.
    user_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    name: str = Field(max_length=120)
    slug: str = Field(max_length=80)
    # Other names the character goes by in entries ("Vance" for "Lady Vance"), used by
    # target detection.
    aliases: list = _json(list)
    status: str = Field(default="active", max_length=16)
    profile: str = Field(default="", max_length=4000)
    created_at: datetime = _created()


class Blog(SQLModel, table=True):
    __table_args__ = (
        _choices("kind", BLOG_KINDS),
        sa.CheckConstraint(
            "kind = 'builtin' OR feed_url IS NOT NULL", name="external_blog_has_feed_url"
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
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

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    number: int
    status: str = Field(default="open", max_length=16)
    opened_at: datetime = _created()
    deadline: datetime | None = _time()
    closed_at: datetime | None = _time()
    resolved_at: datetime | None = _time()
    # Character id -> status when the turn opened: Noteworthy resolves all of a turn's
    # challenges "against the standings at the turn's start", even after they change.
    start_standings: dict = _json()
    # The resolved tally's summary (outcomes, explanations), kept for history and export.
    result: dict = _json()


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

    id: int | None = Field(default=None, primary_key=True)
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
    )

    id: int | None = Field(default=None, primary_key=True)
    blog_id: int = _fk("blog.id")
    character_id: int = _fk("character.id")
    turn_id: int | None = _fk("turn.id", nullable=True, ondelete="SET NULL")
    source_id: str = Field(max_length=1000)
    url: str | None = Field(default=None, max_length=2000)
    title: str = Field(default="", max_length=1000)
    body_html: str = Field(default="", sa_type=sa.Text)
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


class EntryRevision(SQLModel, table=True):
    """Every version of an entry as pbp saw it, the first included: the history the
    referee reads, and the mood timeline the rules need (withdrawals)."""

    id: int | None = Field(default=None, primary_key=True)
    entry_id: int = _fk("entry.id")
    seen_at: datetime = _created()
    title: str = Field(default="", max_length=1000)
    body_html: str = Field(default="", sa_type=sa.Text)
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
        # it tempted SQLite's planner into reading them all.
        sa.Index(
            "ix_note_unmapped",
            "entry_id",
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

    id: int | None = Field(default=None, primary_key=True)
    entry_id: int = _fk("entry.id")
    source_id: str = Field(max_length=1000)
    # NULL while the commenter is not mapped to a character.
    author_character_id: int | None = Field(
        default=None, foreign_key="character.id", nullable=True, ondelete="SET NULL"
    )
    author_name: str = Field(default="", max_length=200)
    author_uri: str | None = Field(default=None, max_length=2000)
    author_email_hash: str | None = Field(default=None, max_length=64)
    body_html: str = Field(default="", sa_type=sa.Text)
    published_at: datetime | None = _time(index=True)
    first_seen_at: datetime = _created()
    stance: str = Field(default="none", max_length=16)
    fate_text: str | None = Field(default=None, sa_type=sa.Text)
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

    id: int | None = Field(default=None, primary_key=True)
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

    id: int | None = Field(default=None, primary_key=True)
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

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    turn_id: int | None = _fk("turn.id", nullable=True)
    kind: str = Field(max_length=40)
    subject_type: str = Field(max_length=40)
    subject_id: int
    value: dict = _json()
    reason: str = Field(default="", sa_type=sa.Text)
    referee_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()


class AuditLog(SQLModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int | None = _fk("campaign.id", nullable=True)
    actor_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    action: str = Field(max_length=80)
    detail: dict = _json()
    created_at: datetime = _created()


class OutboxMessage(SQLModel, table=True):
    """One email to one recipient, written in the same transaction as the change it
    announces; `dedupe_key` makes a retried change queue nothing twice."""

    __table_args__ = (_choices("status", OUTBOX_STATUSES),)

    id: int | None = Field(default=None, primary_key=True)
    campaign_id: int | None = _fk("campaign.id", nullable=True)
    kind: str = Field(max_length=40)
    dedupe_key: str = Field(max_length=200, unique=True)
    message_id: str = Field(max_length=300, unique=True)
    recipient: str = Field(max_length=320)
    subject: str = Field(max_length=400)
    body_text: str = Field(sa_type=sa.Text)
    body_html: str | None = Field(default=None, sa_type=sa.Text)
    headers: dict = _json()
    status: str = Field(default="queued", max_length=16, index=True)
    attempts: int = Field(default=0)
    next_attempt_at: datetime | None = _time()
    last_error: str | None = Field(default=None, max_length=2000)
    created_at: datetime = _created()
    sent_at: datetime | None = _time()


from pbp import models_forum  # noqa: E402,F401  (forum tables; registers them on the metadata)

from pbp import models_api  # noqa: E402,F401  (API tables)  # isort: skip

from pbp import models_cards  # noqa: E402,F401  (card game tables)

from pbp import content_version  # noqa: E402,F401  (versions for cached pages)  # isort: skip
