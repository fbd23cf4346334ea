"""Instruction counts of the hot paths, with `valgrind --tool=callgrind` (issue #34 item 2).

    python -m tests.bench.instructions [--scale small|full] [CASE ...]

A count is the same whatever else the machine is doing, so its target holds on any machine,
where a time in seconds judges the machine. Each case runs once under callgrind, in a fresh
interpreter with a fixed hash seed: it builds its input, calls it once to warm up, then
calls it `CALLS` times inside `operator.call`, and callgrind counts only inside that call
(`--toggle-collect` on its C function). The count divided by `CALLS` is one call's, free of
the interpreter's start, the imports and the input's making, exact for small cases too.

The cases (targets are in docs/benchmarks.md's instruction table, checked by --check):
- `tally`: the Noteworthy tally of the crowded turn (24 characters, 5,000 notes), in the
  service's order (tests/bench/test_bench_tally.py builds it).
- `markdown`: one entry of ordinary prose at the entry's length limit, rendered and cleaned.
- `parse_changed`: feedparser and pbp's reading of one changed 20-entry RSS feed.
- `decide_unchanged`: the decider's verdict and poll record for a feed answered 304.
- `store_unchanged`: that poll record written, in a batch of 100 as a pass writes them,
  per feed; `store_changed`: one changed 20-entry feed's store (tests/bench/store_cases.py,
  each on a SQLite file of its own). The issue's targets: decide and store of an unchanged
  feed halved, and store_changed at most 0.5x parse_changed.
"""

from __future__ import annotations

import operator
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.bench import store_cases

ROOT = Path(__file__).resolve().parents[2]
SIZES = {  # (tally characters, tally notes)
    "full": (24, 5_000),
    "small": (6, 300),
}
CALLS = 3
TOGGLE = "_operator_call*"  # operator.call's C function (Modules/_operator.c)
COLLECTED = re.compile(r"Collected : (\d+)")


def _tally(scale: str) -> Callable[[], object]:
    from pbp.rules.noteworthy import tally_turn
    from tests.bench.test_bench_tally import build_turn, in_service_order

    size, notes = SIZES[scale]
    turn = in_service_order(build_turn(size, notes, random.Random(2004)))
    return lambda: tally_turn(turn)


def _markdown(scale: str) -> Callable[[], object]:
    from pbp import limits
    from pbp.markup import render_markdown
    from tests.bench.test_bench_markup import PROSE

    length = limits.ENTRY_BODY if scale == "full" else limits.ENTRY_BODY // 4
    text = (PROSE * (length // len(PROSE) + 1))[:length]
    return lambda: render_markdown(text)


def _parse_changed(scale: str) -> Callable[[], object]:
    from adapters.parse import parse_feed
    from tests.bench.test_bench_poll import rss

    body = rss(7, "http://blog-7.example", 20)
    headers = {"content-type": "application/rss+xml; charset=utf-8"}
    return lambda: parse_feed(body, headers)


def _decide_unchanged(scale: str) -> Callable[[], object]:
    from adapters import FeedState, FetchResult, FetchStatus
    from pbp.services.noteworthy.polling.decide import Job, after_fetch
    from pbp.services.noteworthy.polling.store import record_values

    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    url = "http://blog-7.example/feed"
    state = FeedState(url=url, etag='"v1"', content_hash="h" * 64)
    job = Job(7, 1, url, state, False, None, now + timedelta(days=1))
    result = FetchResult(
        FetchStatus.NOT_MODIFIED, url, now, now + timedelta(minutes=15), 0, etag='"v1"'
    )
    return lambda: record_values(after_fetch(job, result, now).record)


CASES: dict[str, Callable[[str], Callable[[], object]]] = {
    "tally": _tally,
    "markdown": _markdown,
    "parse_changed": _parse_changed,
    "decide_unchanged": _decide_unchanged,
    "store_unchanged": store_cases.store_unchanged,
    "store_changed": store_cases.store_changed,
}
# Cases whose one call does the work of several: its count is divided by this too.
PER_CALL = {"store_unchanged": store_cases.BATCH}


def _run_in_process(case: str, scale: str, calls: int) -> None:
    """The body of one callgrind run: make the case's input, call it once (first calls fill
    caches and import lazily), then call it `calls` times inside `operator.call`, the only
    stretch callgrind counts (`--toggle-collect`)."""
    call = CASES[case](scale)
    call()

    def repeat() -> None:
        for _ in range(calls):
            call()

    operator.call(repeat)


def _collected(case: str, scale: str, calls: int) -> int:
    with tempfile.TemporaryDirectory() as work:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={work}/callgrind.out",
            # Count only inside the C function behind operator.call, which nothing else in
            # the run calls: the interpreter's start, the imports and the input's making
            # are left out, so small cases are counted exactly.
            f"--toggle-collect={TOGGLE}",
            sys.executable,
            "-m",
            "tests.bench.instructions",
            "--inside",
            case,
            scale,
            str(calls),
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    found = COLLECTED.search(done.stderr)
    if done.returncode or found is None or int(found.group(1)) == 0:
        raise RuntimeError(f"callgrind counted nothing for {case}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def counts(scale: str, cases: list[str] | None = None) -> dict[str, int]:
    """Instructions of one call of each case: one callgrind run per case, counting only its
    `CALLS` calls, divided by them (and by the feeds a call writes, for a batch)."""
    return {
        case: _collected(case, scale, CALLS) // (CALLS * PER_CALL.get(case, 1))
        for case in cases or list(CASES)
    }


def available() -> bool:
    return shutil.which("valgrind") is not None


def main(argv: list[str]) -> None:
    if argv[:1] == ["--inside"]:
        case, scale, calls = argv[1:4]
        _run_in_process(case, scale, int(calls))
        return
    scale = "full"
    if argv[:1] == ["--scale"]:
        scale, argv = argv[1], argv[2:]
    for case, found in counts(scale, argv or None).items():
        print(f"instructions: {case} = {found:,}")


if __name__ == "__main__":
    main(sys.argv[1:])
