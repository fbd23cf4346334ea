"""Schema migrations through Alembic, driven from pbp's own engine.

No alembic.ini: the script location is inside the package, so an installed pbp can
upgrade its database with `pbp db upgrade` from any folder.
"""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine

from pbp.errors import SchemaBehind


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", "pbp:migrations")
    cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None  # the package ships its migrations
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str]:
    """Bring the schema to head; returns (before, after). Idempotent."""
    before = current_revision(engine)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    return before, head_revision()


def check_drift(engine: Engine) -> None:
    """Raise alembic's error if the models differ from what migrations create."""
    with engine.connect() as conn:
        command.check(alembic_config(conn))


def require_current(engine: Engine) -> None:
    """Refuse to serve on a schema behind the code."""
    current, head = current_revision(engine), head_revision()
    if current != head:
        raise SchemaBehind(current, head)
