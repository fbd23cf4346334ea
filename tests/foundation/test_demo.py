"""`pbp demo` as a newcomer runs it: every campaign seeded and served, every login printed,
its feed server on a free port, one demo per instance folder, and a quick stop on Ctrl-C or
SIGTERM. Runs the real command in a subprocess against its own instance folder."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
import requests

from tests.smtpserver import free_port

PBP = [sys.executable, "-c", "from pbp.cli import main; main()"]


def _env(instance) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "PBP_"))}
    return {**env, "PBP_INSTANCE_PATH": str(instance), "SECRET_KEY": "d" * 40}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """One seeded instance folder (seeding is the slow part), and what the seed printed."""
    instance = tmp_path_factory.mktemp("demo")
    proc = subprocess.run(
        [*PBP, "demo", "--no-serve"], env=_env(instance), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return instance, proc.stdout


def _serve(instance, port):
    proc = subprocess.Popen(
        [*PBP, "demo", "--port", str(port)],
        env=_env(instance),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its gunicorn worker is stopped with it, see _stop
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/login", timeout=2).status_code == 200:
                return proc
        except requests.ConnectionError:
            pass
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    _stop(proc)
    pytest.fail("the demo did not answer within 120 s")


def _stop(proc) -> None:
    """Kill the demo and its worker (a worker outliving a killed master holds the lock)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def _login(base: str, email: str) -> requests.Session:
    browser = requests.Session()
    page = browser.get(f"{base}/login", timeout=10).text
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    answer = browser.post(
        f"{base}/login",
        data={"email": email, "password": "demo-password", "csrf_token": token},
        timeout=10,
        allow_redirects=False,
    )
    assert answer.status_code == 302, answer.text
    return browser


def test_seed_prints_every_campaign_and_login(seeded):
    _, out = seeded
    campaigns = [line for line in out.splitlines() if line.startswith("demo campaign ready")]
    assert [line.rsplit("/c/", 1)[1] for line in campaigns] == [
        "the-gilded-quill/",
        "rain-on-water-street/",
        "water-street-blues/",
    ]
    logins = [line.split()[0] for line in out.splitlines() if "@demo.invalid" in line]
    assert "referee@demo.invalid" in logins and "gm@demo.invalid" in logins
    assert len(logins) == 10  # the referee, six players, the GM, two forum players


def test_demo_serves_every_campaign_and_refuses_a_second(seeded):
    instance, _ = seeded
    port = free_port()
    proc = _serve(instance, port)
    try:
        base = f"http://127.0.0.1:{port}"
        for slug in ("the-gilded-quill", "rain-on-water-street", "water-street-blues"):
            assert requests.get(f"{base}/c/{slug}/", timeout=10).status_code == 200
        referee = _login(base, "referee@demo.invalid")
        history = referee.get(f"{base}/c/the-gilded-quill/history", timeout=10).text
        # Turn 3's challenge was resolved: Lady Vance won, the Captain became an outsider.
        assert "Captain Ostrander" in history and "outsider" in history.lower()

        second = subprocess.run(
            [*PBP, "demo", "--port", str(free_port())],
            env=_env(instance),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1
        lines = [line for line in second.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "already running" in lines[0]
    finally:
        _stop(proc)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_demo_stops_within_two_seconds(seeded, signum):
    instance, _ = seeded
    proc = _serve(instance, free_port())
    started = time.monotonic()
    proc.send_signal(signum)
    try:
        proc.wait(timeout=10)
        stopped_after = time.monotonic() - started
    finally:
        _stop(proc)
    assert stopped_after < 2.0
    assert proc.returncode == 0
