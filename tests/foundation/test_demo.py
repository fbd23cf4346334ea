"""`pbp demo` as a newcomer runs it: every campaign seeded and served, every login printed,
its feed server on a free port, one demo per instance folder, and a quick stop on Ctrl-C or
SIGTERM. Runs the real command in a subprocess against its own instance folder.

Issue #27 item 8: the demo keeps its data in an instance folder of its own (`<instance>-demo`),
and `pbp serve` refuses a database holding the demo's accounts unless told `--demo`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
import requests

from pbp.db import make_engine
from pbp.services.accounts import demo_accounts
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
        # Issue #27 item 1: links point at the port served, not http://127.0.0.1:5000.
        feed = requests.get(f"{base}/c/the-gilded-quill/feed.atom", timeout=10).text
        assert f'href="{base}/c/the-gilded-quill/"' in feed and ":5000/" not in feed
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


def _demo_accounts_in(folder) -> int:
    if not (folder / "pbp.sqlite3").exists():
        return 0
    engine = make_engine(f"sqlite:///{folder / 'pbp.sqlite3'}")
    try:
        return demo_accounts.count(engine=engine)
    finally:
        engine.dispose()


def test_the_demo_keeps_its_own_instance_folder(seeded):
    """Run in the README's real-install folder, the demo left its campaigns and ten accounts
    (password demo-password, printed) in the database `pbp serve` then served."""
    instance, out = seeded
    demo_folder = instance.with_name(instance.name + "-demo")
    assert _demo_accounts_in(instance) == 0
    assert _demo_accounts_in(demo_folder) == 10
    assert f"the demo's instance folder: {demo_folder}" in out
    logins = [line.split()[0] for line in out.splitlines() if "@demo.invalid" in line]
    assert all(demo_accounts.is_demo_email(email) for email in logins)


def _pbp_serve(folder, *args: str):
    """`pbp serve ARGS` on the instance folder `folder`: (command, environment)."""
    return [*PBP, "serve", *args], _env(folder)


def test_serve_refuses_the_demos_database_unless_told_demo(seeded):
    instance, _ = seeded
    demo_folder = instance.with_name(instance.name + "-demo")
    command, env = _pbp_serve(demo_folder, "--port", str(free_port()), "--no-scheduler")
    try:
        refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("pbp serve served the demo's accounts")
    assert refused.returncode == 1
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, refused.stderr
    assert "holds 10 of the demo's accounts" in lines[0] and "--demo" in lines[0]

    port = free_port()
    command, env = _pbp_serve(demo_folder, "--port", str(port), "--no-scheduler", "--demo")
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                page = requests.get(f"{base}/c/the-gilded-quill/", timeout=5)
                break
            except requests.ConnectionError:
                assert proc.poll() is None, proc.stdout.read()
                assert time.monotonic() < deadline, "pbp serve --demo did not answer"
                time.sleep(0.2)
        assert page.status_code == 200
        # `pbp serve` stops within 2 s of SIGTERM, as the demo does.
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert time.monotonic() - started < 2.0
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
