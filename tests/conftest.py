"""Shared fixtures: a real database (SQLite, or PostgreSQL when PBP_TEST_DATABASE_URL is
set), migrated once per run, and a transaction per test that is rolled back afterwards
(Warehouse's pattern), plus flaskr's `app`, `client` and `runner`.
"""

from __future__ import annotations

import os
import uuid

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from pbp import create_app, migrate
from pbp.db import make_engine, normalize_url

DB_FIXTURES = {"engine", "connection", "db_session", "app", "client", "runner", "database_url"}
PG_ENV = "PBP_TEST_DATABASE_URL"


def pytest_collection_modifyitems(items):
    for item in items:
        if DB_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.db)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    # In CI a skipped database test on the PostgreSQL pass would hide a gap: fail it.
    on_postgres_in_ci = os.environ.get("CI") == "true" and os.environ.get(PG_ENV)
    if on_postgres_in_ci and report.skipped and item.get_closest_marker("db"):
        report.outcome = "failed"
        report.longrepr = f"database test skipped in CI: {report.longrepr}"


def _create_scratch_postgres(server_url: str) -> tuple[str, callable]:
    """A fresh database per run so parallel runs on one server never collide."""
    name = f"pbp_test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(normalize_url(server_url)).set(database=name)

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url.render_as_string(hide_password=False), drop


@pytest.fixture(scope="session")
def database_url(tmp_path_factory):
    server = os.environ.get(PG_ENV)
    if not server:
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite3'}"
        return
    url, drop = _create_scratch_postgres(server)
    yield url
    drop()


@pytest.fixture(scope="session")
def engine(database_url):
    engine = make_engine(database_url)
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def connection(engine):
    with engine.connect() as conn:
        outer = conn.begin()
        yield conn
        outer.rollback()


def _session_on(connection) -> Session:
    # Each service commit releases a savepoint; the test's outer transaction still
    # rolls everything back at the end.
    return Session(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )


@pytest.fixture
def db_session(connection):
    session = _session_on(connection)
    yield session
    session.close()


def make_test_app(engine, connection, database_url, instance_path, **overrides):
    """The test app on the test's connection; `overrides` add or change settings (those
    read at start-up, such as PBP_TRUSTED_PROXIES, need an app of their own)."""
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": instance_path,
            "SECRET_KEY": "test-secret-key-" + "x" * 32,
            "DATABASE_URL": database_url,
            "ENGINE": engine,
            "PBP_ALLOW_PRIVATE_FEEDS": True,
            "PBP_BASE_URL": "http://pbp.test",
            # Tests read pages right after writing: no second of grace for visitors
            # (tests/web/test_planet_cache.py covers it).
            "PBP_PAGE_RECHECK_SECONDS": 0,
            **overrides,
        }
    )
    app.extensions["pbp_db"].session_factory = lambda: _session_on(connection)
    return app


@pytest.fixture
def app(engine, connection, database_url, tmp_path):
    yield make_test_app(engine, connection, database_url, tmp_path / "instance")


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()
