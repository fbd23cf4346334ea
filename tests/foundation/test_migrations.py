"""Migrations apply from empty, are idempotent, and match the models (no drift)."""

import sqlalchemy as sa
from sqlmodel import SQLModel

from pbp import migrate
from pbp.db import make_engine
from pbp.errors import SchemaBehind


def _fresh_engine(database_url, tmp_path, name):
    """A brand-new empty database on the same server kind as the test database."""
    if database_url.startswith("sqlite"):
        return make_engine(f"sqlite:///{tmp_path / name}.sqlite3"), lambda: None
    from tests.helpers import create_scratch_postgres

    url, drop = create_scratch_postgres(database_url)
    engine = make_engine(url)

    def cleanup():
        engine.dispose()
        drop()

    return engine, cleanup


def test_upgrade_from_empty_creates_every_table_and_has_no_drift(database_url, tmp_path):
    engine, cleanup = _fresh_engine(database_url, tmp_path, "empty")
    try:
        before, after = migrate.upgrade(engine)
        assert before is None and after == migrate.head_revision()
        tables = set(sa.inspect(engine).get_table_names())
        assert set(SQLModel.metadata.tables) <= tables
        migrate.check_drift(engine)  # raises if models and migrations disagree
        again = migrate.upgrade(engine)
        assert again == (after, after)
    finally:
        cleanup()


def test_schema_behind_is_refused_with_the_fix(database_url, tmp_path):
    engine, cleanup = _fresh_engine(database_url, tmp_path, "behind")
    try:
        try:
            migrate.require_current(engine)
        except SchemaBehind as exc:
            assert "pbp db upgrade" in str(exc)
        else:
            raise AssertionError("an empty database was accepted")
    finally:
        cleanup()


def test_app_refuses_to_serve_on_a_schema_behind(tmp_path):
    from pbp import create_app

    app = create_app(
        {
            "INSTANCE_PATH": tmp_path,
            "SECRET_KEY": "s" * 40,
            "DATABASE_URL": f"sqlite:///{tmp_path / 'old.sqlite3'}",
        }
    )
    page = app.test_client().get("/")
    assert page.status_code == 503
    assert b"run `pbp db upgrade`" in page.data
