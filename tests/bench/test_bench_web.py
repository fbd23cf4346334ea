"""Benchmark: the planet page under load from wrk, served by gunicorn as the Procfile does
(its gunicorn_conf, 2 workers x 4 threads, `pbp:create_app()`), beside a Flask hello-world
served the same way in the same run (prints figures, asserts only that the page is the
campaign's planet).

The campaign is tests/bench/test_bench_pages.py's `build_campaign`: 24 characters over 60
turns (12 over 10 at PBP_BENCH_SCALE=small), committed to a database of its own (a SQLite
file, or a scratch PostgreSQL database with PBP_TEST_DATABASE_URL). Both servers run at
once; wrk (2 threads, 16 connections, on loopback) warms each up for 2 s (discarded), then
loads them in alternating rounds, hello-world, planet, hello-world, ... (ROUNDS of each,
4 s each, 1 s small), so a busy moment of the machine falls on both alike: three runs of
one 20 s load each, one after another on one quiet machine, gave ratios of 0.14, 1.35 and
0.39 (issue #34 item 3). The planet is read by visitors, as most of its readers are, so
after the warm-up it comes from the page cache (pbp.web.page_cache), as it does between
two changes. The client shares the machine's cores with the server, so the ratio to
hello-world is the figure to read: its median over the rounds, with its spread. Targets
(printed, not asserted): a median of at least 0.8 of hello-world's requests/s, zero
errors. Skipped when `wrk` is not installed (apt-get install wrk).

    pytest -o addopts="" -s tests/bench/test_bench_web.py
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import uuid
from dataclasses import dataclass

import pytest

from pbp.models import User
from tests.bench.figures import figure
from tests.bench.test_bench_pages import T0, _insert, bench_engine, build_campaign  # noqa: F401
from tests.deploy.web import Web

SCALES = {"full": ((24, 60), 4), "small": ((12, 10), 1)}  # (characters, turns), round's s
ROUNDS = 5  # of each server, alternating
TARGET_RATIO = 0.8
WARM_UP_SECONDS = 2


@dataclass
class Load:
    requests_per_second: float
    p99_ms: float
    errors: int

    def line(self, label: str) -> str:
        return (
            f"{label:<12} {self.requests_per_second:>9.1f} req/s   p99 {self.p99_ms:>7.1f} ms"
            f"   errors {self.errors}"
        )


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(output: str) -> Load:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$", output, re.M)
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", output))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors += int(non2xx.group(1)) if non2xx else 0
    return Load(rps, _ms(*p99.groups()) if p99 else float("nan"), errors)


def wrk(url: str, seconds: int) -> Load:
    done = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{seconds}s", "--latency", url],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    assert done.returncode == 0, done.stderr
    return parse_wrk(done.stdout)


def test_bench_web_planet_vs_hello_world(bench_engine, tmp_path):  # noqa: F811 (fixture)
    if shutil.which("wrk") is None:
        pytest.skip("wrk is not installed (apt-get install -y wrk)")
    url, engine = bench_engine
    (characters, turns), seconds = SCALES[os.environ.get("PBP_BENCH_SCALE", "full")]
    with engine.begin() as conn:
        (referee_id,) = _insert(
            conn,
            User,
            [
                {
                    "email": f"ref-{uuid.uuid4().hex[:8]}@bench.test",
                    "display_name": "Referee",
                    "created_at": T0,
                }
            ],
            returning=True,
        )
        built = build_campaign(conn, characters=characters, turns=turns, referee_id=referee_id)
    servers, targets = [], {}
    try:
        for label, app, path in (
            ("hello-world", "tests.bench.hello_app:app", "/"),
            ("planet", "pbp:create_app()", f"/c/{built.slug}/"),
        ):
            server = Web(url, tmp_path / label, app=app, access_log=False)
            servers.append(server)
            page = server.wait_ready(path)
            if label == "planet":
                assert f"Turn {turns}" in page
            targets[label] = f"http://127.0.0.1:{server.port}{path}"
            wrk(targets[label], WARM_UP_SECONDS)  # both workers started, templates compiled
        rounds = [
            (wrk(targets["hello-world"], seconds), wrk(targets["planet"], seconds))
            for _ in range(ROUNDS)
        ]
    finally:
        for server in servers:
            server.stop()
    ratios = sorted(
        planet.requests_per_second / hello.requests_per_second for hello, planet in rounds
    )
    errors = sum(planet.errors for _, planet in rounds)
    print(
        "\ngunicorn 2 workers x 4 threads, wrk 2 threads 16 connections,"
        f" {ROUNDS} alternating rounds of {seconds} s each"
    )
    print(f"planet of {characters} characters x {turns} turns on {engine.dialect.name}")
    for n, (hello, planet) in enumerate(rounds, 1):
        print(f"round {n}: " + hello.line("hello-world") + "  |  " + planet.line("planet"))
    print(
        f"planet/hello-world ratio: median {statistics.median(ratios):.2f}, spread"
        f" {ratios[0]:.2f}-{ratios[-1]:.2f}; planet errors {errors} (target 0)"
    )
    figure(
        "web.planet_over_hello",
        statistics.median(ratios),
        better="higher",
        target=TARGET_RATIO,
        guard=False,
    )
    figure("web.planet_errors", errors, better="lower", target=0)
