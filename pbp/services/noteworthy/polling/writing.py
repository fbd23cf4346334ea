"""The pipeline's write transactions (claims, poll records, stored feeds)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Engine

from pbp.db import writing as db_writing

_sqlite_writers: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()
_sqlite_writers_guard = threading.Lock()


@contextmanager
def writing(engine: Engine) -> Iterator[None]:
    """A write transaction. On SQLite the pass's threads also queue on a lock of their own:
    SQLite's busy handler polls with sleeps and is unfair, so 16 threads contending for the
    write lock wasted most of a pass sleeping and some gave up ("database is locked") after
    the busy timeout. Other processes still wait through the busy timeout as before."""
    if engine.dialect.name != "sqlite":
        with db_writing():
            yield
        return
    with _sqlite_writers_guard:
        lock = _sqlite_writers.setdefault(engine, threading.Lock())
    with lock, db_writing():
        yield
