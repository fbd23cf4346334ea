"""Shared fixtures: a real database (SQLite, or PostgreSQL when PBP_TEST_DATABASE_URL is
set), migrated once per run, and a transaction per test that is rolled back afterwards
(Warehouse's pattern), plus flaskr's `app`, `client` and `runner`.
"""

from __future__ import annotations

import os

import pytest

from pbp import migrate
from pbp.db import make_engine
from pbp.services.noteworthy import polling
from tests.feedserver import FeedServer
from tests.helpers import create_scratch_postgres, make_test_app, session_on
from tests.smtpserver import SmtpServer

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


@pytest.fixture(autouse=True)
def _close_app_fetchers(monkeypatch):
    """Close the fetcher an app made during the test (`polling.app_fetcher`). A poll pass
    keeps an event loop and its aiohttp connections on it; a test app dropped with them open
    would leave a thread running and, when collected, an "Unclosed connector" warning that
    fails whichever later test is running (the suite makes warnings errors)."""
    made = []
    real = polling.app_fetcher

    def tracked(app):
        fetcher = real(app)
        made.append(fetcher)
        return fetcher

    # poll_once calls it in its own module; the scheduler and the CLI through the package.
    monkeypatch.setattr(polling, "app_fetcher", tracked)
    monkeypatch.setattr(polling.app, "app_fetcher", tracked)
    yield
    for fetcher in made:
        fetcher.close()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory):
    server = os.environ.get(PG_ENV)
    if not server:
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite3'}"
        return
    url, drop = create_scratch_postgres(server)
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


@pytest.fixture
def db_session(connection):
    session = session_on(connection)
    yield session
    session.close()


@pytest.fixture
def app(engine, connection, database_url, tmp_path):
    yield make_test_app(engine, connection, database_url, tmp_path / "instance")


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def server():
    """A feed server on loopback, for the tests that poll real HTTP."""
    with FeedServer() as srv:
        yield srv


@pytest.fixture
def smtp():
    """A real SMTP server on loopback (aiosmtpd), for the tests that deliver mail."""
    with SmtpServer() as server:
        yield server
