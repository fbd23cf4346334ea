"""The feed readers a group would otherwise poll with, run on the poll benchmark's farm
(issue #34 item 1). Each runs in a process of its own; a pass gives its wall time and the
CPU its process used (`resource.getrusage(RUSAGE_CHILDREN)` around it).

- `reader` (lemon24/reader, on PyPI): its own parallel update, `update_feeds(workers=16)`
  (the worker count its documentation's examples use for many feeds), every feed at once
  (`scheduled=False`); it parses with feedparser and stores in SQLite, as pbp can.
- `newsboat` (C++, Debian's package): `newsboat -x reload` with `reload-threads 16`.

A peer that is not installed is None, and the benchmark says so.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

WORKERS = 16

READER_SCRIPT = """\
import sys
from reader import make_reader
db, urls, prime = sys.argv[1], sys.argv[2], sys.argv[3] == "prime"
reader = make_reader(db)
if prime:
    for url in open(urls).read().split():
        reader.add_feed(url, exist_ok=True)
reader.update_feeds(scheduled=False, workers=WORKERS)
broken = sum(1 for _ in reader.get_feeds(broken=True))
print(f"broken={broken} entries={reader.get_entry_counts().total}")
""".replace("WORKERS", str(WORKERS))


@dataclass(frozen=True)
class PeerPass:
    seconds: float
    cpu: float  # the peer process's user + system CPU, in seconds
    said: str  # what the peer printed last (its own count of entries and failures)


def _timed(command: list[str], env: dict[str, str] | None = None) -> PeerPass:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    said = (done.stdout.strip().splitlines() or [""])[-1]
    return PeerPass(seconds, cpu, said)


class Reader:
    name = "reader"

    def __init__(self, urls: list[str], work: Path) -> None:
        self.db, self.urls = work / "reader.sqlite", work / "reader-urls.txt"
        self.urls.write_text("\n".join(urls))

    def run(self, *, prime: bool = False) -> PeerPass:
        command = [sys.executable, "-c", READER_SCRIPT, str(self.db), str(self.urls)]
        return _timed([*command, "prime" if prime else "update"])

    @staticmethod
    def available() -> bool:
        return importlib.util.find_spec("reader") is not None


class Newsboat:
    name = "newsboat"

    def __init__(self, urls: list[str], work: Path) -> None:
        self.home = work / "newsboat"
        self.home.mkdir(exist_ok=True)
        (self.home / "urls").write_text("\n".join(urls) + "\n")
        (self.home / "config").write_text(f"reload-threads {WORKERS}\n")

    def run(self, *, prime: bool = False) -> PeerPass:
        home = self.home
        command = ["newsboat", "-x", "reload", "-u", str(home / "urls")]
        command += ["-c", str(home / "cache.db"), "-C", str(home / "config")]
        env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home)}
        env.pop("http_proxy", None)
        return _timed(command, env)

    @staticmethod
    def available() -> bool:
        return shutil.which("newsboat") is not None


def installed(urls: list[str], work: Path) -> list[Reader | Newsboat]:
    return [peer(urls, work) for peer in (Reader, Newsboat) if peer.available()]
