"""What every table shares: the naming convention, UTC times, column helpers and vocabularies.

Constraints keep bad data out at the database: unique keys where the game has one
(a character's slug in a campaign, a turn number, an entry's source id on its blog),
foreign keys everywhere, NOT NULL by default, and CHECKs on the small vocabularies.
Times are stored as naive UTC and come back timezone-aware (`UTCDateTime`), the same on
SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import sqlalchemy as sa
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

# A table's integer primary key. At run time the field is `int | None` as SQLModel needs (None
# until the row's first flush), so the columns, validation and schemas are as before. mypy reads
# it as `int`: the code handles stored rows, and with `int | None` every `row.id` passed on would
# need a check for a case that cannot happen (issue #18 item 7).
if TYPE_CHECKING:
    RowId = int
else:
    RowId = int | None

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


def _fk(
    target: str,
    nullable: bool = False,
    ondelete: Literal["CASCADE", "SET NULL", "RESTRICT"] = "CASCADE",
    **kw: Any,
) -> Any:
    return Field(foreign_key=target, nullable=nullable, ondelete=ondelete, index=True, **kw)


ROLES = ("referee", "player")
CHARACTER_STATUSES = ("active", "outsider", "winner")
BLOG_KINDS = ("builtin", "external")
TURN_STATUSES = ("open", "closed", "resolved")
EVENT_MODES = ("all", "addition", "replacement")
STANCES = ("support", "oppose", "none", "ambiguous")
OUTBOX_STATUSES = ("queued", "sending", "sent", "failed")
CAMPAIGN_STATUSES = ("setup", "running", "ended")
