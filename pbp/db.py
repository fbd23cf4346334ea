"""Database engine, per-request sessions, and the schema-version check.

SQLite is the embedded default and is shared by the web and worker processes, so every
connection turns on WAL (readers don't block the writer), foreign keys (off by default in
SQLite) and a busy timeout (a second writer waits instead of failing at once).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar, Token
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session

from pbp.errors import DatabaseError

SQLITE_BUSY_TIMEOUT_MS = 10_000

#: A write refused by a unique key or a foreign key: two requests made the same change at
#: the same moment. The pages and the API answer it (409, or the first answer of a replayed
#: form) without importing the database library themselves (the import contracts).
WriteConflict = sa.exc.IntegrityError

__all__ = ["Session", "WriteConflict"]


def normalize_url(url: str) -> str:
    """`postgresql://` means psycopg 3 here (psycopg2 is not a dependency)."""
    try:
        parsed = make_url(url)
    except sa.exc.ArgumentError as exc:
        raise DatabaseError(f"DATABASE_URL is not a database URL: {url!r}") from exc
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


_writing: ContextVar[bool] = ContextVar("pbp_sqlite_writing", default=False)


@contextmanager
def writing() -> Iterator[None]:
    """Mark the transactions begun inside as writers (SQLite: `BEGIN IMMEDIATE`).

    A SQLite transaction that reads and then writes fails at once ("database is locked",
    no busy wait) if another connection committed in between; taking the write lock at
    BEGIN makes it wait its turn instead. Web POSTs, scheduler jobs and CLI commands that
    write run inside this. PostgreSQL ignores it.
    """
    token = _writing.set(True)
    try:
        yield
    finally:
        _writing.reset(token)


def begin_writing() -> Token[bool]:
    """Mark what follows (a request that writes) as a writer until `end_writing`; the
    request hooks of pbp.request_db use it, as `writing()` does for a block."""
    return _writing.set(True)


def end_writing(token: Token[bool]) -> None:
    _writing.reset(token)


def _sqlite_begin(conn) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if _writing.get() else "BEGIN")


_WROTE = "pbp_wrote"


@sa.event.listens_for(Session, "after_flush")
def _note_write(session, _context) -> None:
    session.info[_WROTE] = True


@sa.event.listens_for(Session, "after_commit")
@sa.event.listens_for(Session, "after_rollback")
def _forget_write(session) -> None:
    session.info.pop(_WROTE, None)


def release(session: Session) -> bool:
    """End the session's transaction before slow work (a fetch, a parse or a render), if
    it has only read; True if it did.

    A web POST is a writer, so on SQLite its first query (even the login's) takes the
    database's one write lock (`BEGIN IMMEDIATE`); held across seconds of network or CPU
    work, it makes every other writer of the instance wait, then fail after the busy
    timeout. Call this first, do the slow work, then read and write again: the next query
    begins a new, short transaction. What was read stays loaded (expire_on_commit=False),
    but the checks that guard the write belong after this call, where they cannot go stale.

    A transaction that has written (or holds changes not yet sent) is left open: its
    changes must commit together. Only callers that wrote first do that (a card move
    announcing itself, the demo's setup), and they render short texts of their own.
    """
    if session.info.get(_WROTE) or session.new or session.dirty or session.deleted:
        return False
    session.commit()
    return True


def _private_sqlite_file(url: str) -> None:
    """Create the SQLite file as 0600 (and tighten an existing one and its -wal/-shm).

    It holds dice seeds and account data. SQLite creates -wal and -shm with the mode of
    the database file, so making the database private first covers them too.
    """
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            with suppress(OSError):  # not ours to change, or already gone: leave it
                if name.stat().st_mode & 0o077:
                    name.chmod(0o600)
    except OSError:
        return  # a missing folder: SQLite's own error says it better
    else:
        os.close(fd)  # an empty file is a valid new SQLite database


def make_engine(url: str, **kwargs) -> Engine:
    url = normalize_url(url)
    if url.startswith("sqlite"):
        _private_sqlite_file(url)
        # isolation_level=None + an explicit BEGIN: pysqlite's own transaction handling
        # breaks SAVEPOINTs (SQLAlchemy's documented recipe).
        kwargs.setdefault(
            "connect_args", {"check_same_thread": False, "timeout": 10, "isolation_level": None}
        )
    else:
        kwargs.setdefault("pool_pre_ping", True)
        kwargs.setdefault("connect_args", {"connect_timeout": 5})
    try:
        engine = sa.create_engine(url, **kwargs)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise DatabaseError(f"DATABASE_URL {url!r} cannot be used: {exc}") from exc
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        sa.event.listen(engine, "begin", _sqlite_begin)
    return engine


def check_connection(engine: Engine) -> None:
    """Fail with one clear line when the database cannot be reached."""
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        url = engine.url.render_as_string(hide_password=True)
        raise DatabaseError(f"cannot reach the database at {url}: {reason}") from exc


@dataclass
class Database:
    """What pbp.request_db.init_app keeps in `app.extensions["pbp_db"]`."""

    engine: Engine
    session_factory: Callable[[], Session]


def database(app: Any) -> Database:
    """The app's database (`app.extensions["pbp_db"]`, set by pbp.request_db.init_app)."""
    return app.extensions["pbp_db"]
