"""Issue #28 item 3: eight slow clients stopped the site.

Eight connections sending their headers a line at a time made `GET /` time out, on
`pbp serve` and on the Procfile's gunicorn (2 workers x 4 threads): gunicorn's threaded
worker gives each connection a thread as soon as its first bytes arrive.

Each test holds SLOW connections open on 127.0.0.1 (tests/security/slowloris.py: a request
line, then one more header line a second, never the end of the headers; a connection the
server closes is opened again), then times REQUESTS plain `GET /` one after another, SPACING
apart (so they span more than nginx's 10 s header timeout), each with CLIENT_TIMEOUT seconds
to answer. Every one must be answered: the verdict is "no request timed out"; the p95 is
printed at the end of the run ("security figures"), never asserted, as a timing target
would be.

- `pbp serve` (waitress since this issue) holds 500 slow connections without a thread each.
  On the server it had before (gunicorn's threaded worker, 8 threads) 8 slow clients were
  enough: every GET / timed out.
- The Procfile's gunicorn, behind nginx with deploy/nginx.conf (rendered into tmp_path, on
  free loopback ports; nginx in the foreground as a child of the test): 500 slow connections.
- The same gunicorn without nginx, 8 slow connections: requests time out. This is why the
  proxy is required (docs/operating.md, Deployment), and it shows the attack is real in the
  same run.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pbp import migrate
from pbp.db import make_engine
from tests.deploy.web import Web
from tests.security.conftest import REPORTS
from tests.security.slowloris import SlowClients, latencies, raise_fd_limit
from tests.smtpserver import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PBP = [sys.executable, "-c", "from pbp.cli import main; main()"]
SLOW = 500
REQUESTS = 40
# Seconds between two GETs: the 40 span more than nginx's 10 s client_header_timeout, so
# they are also timed while the attack opens again every connection nginx closed.
SPACING = 0.3
CLIENT_TIMEOUT = 10.0  # seconds: a GET / that takes longer is not answered
SETTLE = 3.0  # seconds of dripping before the first GET, so every slow connection is in


@pytest.fixture(autouse=True)
def _open_files():
    raise_fd_limit(4 * SLOW)  # the attack's sockets here, the held connections in the server


@pytest.fixture
def database_file(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'pbp.sqlite3'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    return url


def _env(tmp_path, database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "PBP_"))}
    return {
        **env,
        "PBP_INSTANCE_PATH": str(tmp_path / "instance"),
        "DATABASE_URL": database_url,
        "SECRET_KEY": "slow-clients-" + "k" * 32,
    }


def _wait_answering(port: int, proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        assert time.monotonic() < deadline, f"no answer on {port}: {log.read_text()[-3000:]}"
        time.sleep(0.2)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _attack(port: int, slow: int, label: str, client_timeout: float = CLIENT_TIMEOUT):
    with SlowClients(port, slow) as attack:
        time.sleep(SETTLE)
        timed = latencies(port, REQUESTS, client_timeout, spacing=SPACING)
        summary = attack.summary()
    print(f"\n{timed.report(label)}; {summary}")
    REPORTS.append(f"{timed.report(label)}; {summary}")
    return timed, attack


@pytest.fixture
def pbp_serve(tmp_path, database_file):
    """`pbp serve` (the real command, scheduler included) on a free loopback port."""
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*PBP, "serve", "--port", str(port)],
            cwd=ROOT,
            env=_env(tmp_path, database_file),
            stdout=out,
            stderr=out,
        )
    try:
        _wait_answering(port, proc, log)
        yield port
    finally:
        _stop(proc)


def test_pbp_serve_answers_while_500_slow_clients_hold_connections(pbp_serve):
    timed, attack = _attack(pbp_serve, SLOW, f"pbp serve, {SLOW} slow clients")
    assert attack.failed_connects == 0 and attack.connects >= SLOW
    assert timed.timeouts == 0 and timed.errors == [], timed.report("pbp serve")
    assert len(timed.seconds) == REQUESTS


def _post_declaring(port: int, length: int, body: bytes) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT)
    try:
        conn.putrequest("POST", "/mail/unsubscribe/not-even-a-token")
        conn.putheader("Content-Type", "application/x-www-form-urlencoded")
        conn.putheader("Content-Length", str(length))
        conn.endheaders(body)
        answer = conn.getresponse()
        return answer.status, answer.read().decode(errors="replace")
    finally:
        conn.close()


def test_pbp_serve_refuses_a_huge_body_before_reading_it(pbp_serve):
    """waitress reads a body whole before pbp sees the request, so it must refuse a huge one
    itself (it would buffer up to 1 GB on disk): one that declares more than twice
    PBP_MAX_REQUEST_BYTES gets a 413 before a byte of it is sent. A body just over the limit
    still reaches pbp and gets pbp's own 413 page (tests/security/test_request_size.py)."""
    limit = 1024 * 1024
    status, _ = _post_declaring(pbp_serve, 2 * limit + 1, b"")  # no body follows
    assert status == 413
    status, page = _post_declaring(pbp_serve, limit + 1, b"a=" + b"x" * (limit - 1))
    assert status == 413 and "larger than the 1 MiB pbp accepts" in page


# --- The Procfile's gunicorn, behind nginx -------------------------------------------------

NGINX_MAIN = """\
daemon off;
master_process on;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 768; }}  # Debian's nginx.conf
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {tmp}/pbp-site.conf;
}}
"""


def render_site(listen_port: int, upstream_port: int) -> str:
    """deploy/nginx.conf with its two addresses moved to free loopback ports."""
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    for old, new in (
        ("listen 80;", f"listen 127.0.0.1:{listen_port};"),
        ("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream_port};"),
    ):
        assert text.count(old) == 1, f"deploy/nginx.conf no longer says {old!r} once"
        text = text.replace(old, new)
    return text


def _nginx_binary() -> str:
    found = shutil.which("nginx")  # Debian installs it in sbin, on root's PATH (as CI runs)
    if not found:
        reason = "nginx is not installed (apt-get install nginx)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return found


@pytest.fixture
def gunicorn(tmp_path, database_file):
    web = Web(database_file, tmp_path / "gunicorn", access_log=False)
    try:
        web.wait_ready("/")
        yield web
    finally:
        web.stop()


def test_nginx_before_gunicorn_answers_while_500_slow_clients_hold_connections(tmp_path, gunicorn):
    nginx = _nginx_binary()
    port = free_port()
    conf = tmp_path / "nginx"
    conf.mkdir()
    (conf / "pbp-site.conf").write_text(render_site(port, gunicorn.port))
    (conf / "nginx.conf").write_text(NGINX_MAIN.format(tmp=conf))
    log = conf / "nginx-error.log"
    command = [nginx, "-p", str(conf), "-c", str(conf / "nginx.conf"), "-e", str(log)]
    check = subprocess.run([*command, "-t"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    with open(conf / "nginx.out", "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=out)
    try:
        _wait_answering(port, proc, log)
        timed, attack = _attack(port, SLOW, f"nginx + gunicorn 2x4, {SLOW} slow clients")
        assert attack.failed_connects == 0 and attack.connects >= SLOW
    finally:
        _stop(proc)
    assert timed.timeouts == 0 and timed.errors == [], timed.report("nginx + gunicorn")
    assert len(timed.seconds) == REQUESTS


def test_gunicorn_alone_is_stopped_by_eight_slow_clients(gunicorn):
    """Why the proxy is required: without it, 8 slow clients hold the 2 x 4 threads. (Should
    gunicorn ever stop giving a thread to a connection that has not sent its request yet,
    this fails, and the requirement in docs/operating.md can be revisited.)"""
    timed, _ = _attack(gunicorn.port, 8, "gunicorn 2x4 alone, 8 slow clients", client_timeout=5)
    assert timed.timeouts > 0, timed.report("gunicorn alone")
