"""The database in a Flask request: the app's engine, one session per request, the schema
check and the SQLite write lock for a request that writes.

Kept apart from pbp.db so the services, the models and pbp.db itself import no web
framework (an import contract in pyproject.toml): a service is called with a session, by a
page, the API, the scheduler or the CLI alike.
"""

from __future__ import annotations

from flask import Flask, current_app, g, request
from sqlalchemy.engine import Engine

from pbp.db import Database, Session, begin_writing, database, end_writing, make_engine


def init_app(app: Flask, engine: Engine | None = None) -> None:
    engine = engine or make_engine(app.config["DATABASE_URL"])
    app.extensions["pbp_db"] = Database(engine, lambda: Session(engine, expire_on_commit=False))
    app.before_request(_require_current_schema)
    app.before_request(_mark_writes)
    app.teardown_request(_unmark_writes)
    app.teardown_appcontext(_close_session)


def _require_current_schema() -> None:
    """Refuse to serve on a schema behind the code (checked once per process, before the
    request is marked as a writer: the check's own connection only reads)."""
    from pbp import migrate

    if current_app.extensions.get("pbp_schema_ok") or request.endpoint == "static":
        return
    migrate.require_current(database(current_app).engine)
    current_app.extensions["pbp_schema_ok"] = True


def _mark_writes() -> None:
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        g.pbp_writing = begin_writing()


def _unmark_writes(_exc) -> None:
    token = g.pop("pbp_writing", None)
    if token is not None:
        end_writing(token)


def get_session() -> Session:
    """The request's session: one per app context, closed at teardown."""
    if "db_session" not in g:
        g.db_session = database(current_app).session_factory()
    return g.db_session


def _close_session(_exc) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()
