"""Issue #16, item 8: with RATELIMIT_STORAGE_URI pointing at a shared store, every web
worker counts against the same limit. Two apps stand for two gunicorn workers; the store
is a real redis-server on loopback (skipped without one, except in CI)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from tests.helpers import auth_for

REDIS_SERVER = shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def redis_url(tmp_path):
    try:
        import redis  # noqa: F401  (the client the limits package uses for redis://)
    except ImportError:
        reason = "the redis package is not installed (pip install -e '.[test]')"
    else:
        reason = None if REDIS_SERVER else "redis-server is missing (apt-get install redis)"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    port = _free_port()
    server = subprocess.Popen(
        [
            REDIS_SERVER,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("redis-server did not start")
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    server.terminate()
    server.wait(timeout=10)


def _failed_logins(app, db_session, user, times: int) -> list[int]:
    client = app.test_client()
    auth = auth_for(client, db_session)
    return [
        auth.post("/login", {"email": user.email, "password": "wrong password!"}).status_code
        for _ in range(times)
    ]


def test_two_workers_share_one_login_limit_through_redis(app_with, db_session, redis_url):
    # Through the environment, as a deployment sets it (pbp.config reads it).
    settings = {"ENVIRON": {"RATELIMIT_STORAGE_URI": redis_url}, "PBP_LOGIN_LIMIT": "3 per minute"}
    first, second = app_with(**settings), app_with(**settings)
    user = auth_for(first.test_client(), db_session).create_user()
    assert _failed_logins(first, db_session, user, 2) == [400, 400]
    assert _failed_logins(second, db_session, user, 2) == [400, 429]


def test_in_memory_counters_are_per_worker(app_with, db_session):
    """Why the setting matters: with memory:// each worker counts on its own."""
    first, second = (
        app_with(PBP_LOGIN_LIMIT="3 per minute"),
        app_with(PBP_LOGIN_LIMIT="3 per minute"),
    )
    user = auth_for(first.test_client(), db_session).create_user()
    assert _failed_logins(first, db_session, user, 2) == [400, 400]
    assert _failed_logins(second, db_session, user, 2) == [400, 400]
