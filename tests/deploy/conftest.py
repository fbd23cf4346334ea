"""Fixtures for tests that run pbp in several real processes against PostgreSQL.

The processes are `python -m tests.deploy.driver ...` (see driver.py). They share a scratch
PostgreSQL database of their own (created here, dropped afterwards), so a job that works on
every due row (turn advancement, the mail sweep) sees only this module's rows.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pbp import migrate
from pbp.db import make_engine
from tests.conftest import PG_ENV
from tests.helpers import create_scratch_postgres

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def pg_url():
    server = os.environ.get(PG_ENV)
    if not server:
        pytest.skip(
            f"multi-process tests need PostgreSQL (SKIP LOCKED, concurrent writers): set {PG_ENV}"
        )
    url, drop = create_scratch_postgres(server)
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    yield url
    drop()


@pytest.fixture(scope="session")
def pg_engine(pg_url):
    engine = make_engine(pg_url)
    yield engine
    engine.dispose()


class Workers:
    """Driver processes started together: each says when it is ready, then all begin when
    the shared go-file appears (so "concurrently" means the same moment, not import order)."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        self.url = url
        self.tmp = tmp_path
        self.go = tmp_path / "go"
        self.stop_file = tmp_path / "stop"
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, job: str, *args: str) -> None:
        command = [
            sys.executable,
            "-m",
            "tests.deploy.driver",
            job,
            "--db",
            self.url,
            "--go",
            str(self.go),
            "--log",
            str(self.log_path(name)),
            "--ready",
            str(self.tmp / f"{name}.ready"),
            "--stop",
            str(self.stop_file),
            *args,
        ]
        with open(self.tmp / f"{name}.stderr", "wb") as stderr:
            self.procs[name] = subprocess.Popen(command, cwd=ROOT, stderr=stderr)

    def log_path(self, name: str) -> Path:
        return self.tmp / f"{name}.jsonl"

    def lines(self, name: str) -> list[str]:
        path = self.log_path(name)
        return path.read_text().splitlines() if path.exists() else []

    def stderr(self, name: str) -> str:
        return (self.tmp / f"{name}.stderr").read_text(errors="replace")[-3000:]

    def go_when_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        for name, proc in self.procs.items():
            while not (self.tmp / f"{name}.ready").exists():
                assert proc.poll() is None, f"{name} died: {self.stderr(name)}"
                assert time.monotonic() < deadline, f"{name} never got ready"
                time.sleep(0.05)
        self.go.touch()

    def kill(self, name: str) -> None:
        self.procs[name].send_signal(signal.SIGKILL)
        self.procs[name].wait(10)

    def wait(self, name: str, timeout: float = 60) -> int:
        try:
            return self.procs[name].wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{name} did not finish in {timeout} s: {self.stderr(name)}")

    def stop_all(self, timeout: float = 30) -> None:
        self.stop_file.touch()
        for name in self.procs:
            code = self.wait(name, timeout)
            assert code in (0, -signal.SIGKILL), f"{name} exited {code}: {self.stderr(name)}"

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


@pytest.fixture
def workers(pg_url, tmp_path):
    pool = Workers(pg_url, tmp_path)
    yield pool
    pool.close()
