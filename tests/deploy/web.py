"""The Procfile's web process for tests/deploy: gunicorn with pbp's gunicorn_conf, 2 workers
x 4 threads, serving `pbp:create_app()` on a free loopback port.

The only addition to the Procfile's command is an access log naming, for each request, the
worker process that answered it (`%(p)s`) and the request's `X-Probe` header, which `get`
numbers: so a test can tell which worker served which response, and make sure both did.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.smtpserver import free_port

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 2
ACCESS_FORMAT = "%(p)s %({x-probe}i)s %(s)s"
_ACCESS_LINE = re.compile(r"^<(\d+)> (\d+) (\d+)$")
_BOOTED = re.compile(r"Booting worker with pid: (\d+)")


@dataclass
class Response:
    probe: int
    status: int  # 0: no HTTP answer at all (see body)
    body: str


class Web:
    """gunicorn serving `app` (pbp by default) on `database_url`; `access_log=False` leaves
    the access log out, as the Procfile does (tests/bench/test_bench_web.py times it)."""

    def __init__(
        self,
        database_url: str,
        tmp: Path,
        env: dict[str, str] | None = None,
        app: str = "pbp:create_app()",
        access_log: bool = True,
    ) -> None:
        tmp.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.log = tmp / "gunicorn.log"
        self.access_log = tmp / "access.log"
        command = [sys.executable, "-m", "gunicorn", "-c", "python:pbp.gunicorn_conf"]
        command += ["--workers", str(WORKERS), "--threads", "4"]
        command += ["--bind", f"127.0.0.1:{self.port}"]
        if access_log:
            command += ["--access-logfile", str(self.access_log)]
            command += ["--access-logformat", ACCESS_FORMAT]
        command += [app]
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "SECRET_KEY": "deploy-test-secret-key-" + "x" * 32,
            "PBP_INSTANCE_PATH": str(tmp / "instance"),
            **(env or {}),
        }
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
        self._probes = itertools.count()

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def get(self, path: str, timeout: float = 30) -> Response:
        """One GET over a connection of its own (urllib sends `Connection: close`)."""
        probe = next(self._probes)
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", headers={"X-Probe": str(probe)}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return Response(probe, answer.status, answer.read().decode())
        except urllib.error.HTTPError as exc:
            return Response(probe, exc.code, exc.read().decode(errors="replace"))
        except OSError as exc:
            return Response(probe, 0, f"{type(exc).__name__}: {exc}")

    def wait_ready(self, path: str, timeout: float = 60) -> str:
        """The page at `path` once the server answers it with a 200."""
        deadline = time.monotonic() + timeout
        while (answer := self.get(path)).status != 200:
            assert self.proc.poll() is None, self.output()[-3000:]
            assert time.monotonic() < deadline, self.output()[-3000:]
            time.sleep(0.2)
        return answer.body

    def served_by(self, probes: list[int], timeout: float = 10) -> dict[int, int]:
        """{probe: pid of the worker that answered it}. gunicorn logs a request after its
        response is sent, so a line can trail the response by a moment."""
        wanted = set(probes)
        deadline = time.monotonic() + timeout
        while True:
            found = {}
            for line in self.access_log.read_text().splitlines():
                match = _ACCESS_LINE.match(line)
                if match and int(match[2]) in wanted:
                    found[int(match[2])] = int(match[1])
            if found.keys() == wanted:
                return found
            assert time.monotonic() < deadline, f"not in the access log: {wanted - found.keys()}"
            time.sleep(0.05)

    def booted(self) -> list[int]:
        """The pids of every worker gunicorn started (more than WORKERS: one was replaced)."""
        return [int(pid) for pid in _BOOTED.findall(self.output())]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
