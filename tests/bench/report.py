"""`python -m tests.bench`: run the benchmarks and write their figures to docs/benchmarks.md;
`python -m tests.bench --check`: run them and compare with what that file holds.

It lives in tests/, not in the installed package: it runs pytest on a checkout.

The benchmarks print their figures (they assert no timings); this runs them with pytest in
verbose mode, echoes the output as it comes, and files each printed line under the
benchmark that printed it, so a new benchmark needs no registration. Lines without a digit
(decoration) are left out. A benchmark may also print a Markdown table (lines that start and
end with "|", e.g. tests/bench/test_bench_growth.py's 1x/4x/16x curve): it is written as a
table of its own under the benchmark's name, below the summary.

The `figure:` lines (tests/bench/figures.py) are also written as the "Guarded figures" table,
one row per figure and scale (a run at one scale keeps the other scale's rows; a run at the
small scale changes only those rows, the document's figures being the full scale's). `--check`
writes nothing: it fails when a figure misses its target, or when a guarded figure is worse
than that table's by more than 10% at the same scale (issue #34 item 4).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from tests.bench.figures import Figure, parse

ROOT = Path(__file__).resolve().parents[2]  # the checkout
TEST_ID = re.compile(r"^(tests/bench/\S+?\.py::\S+)\s?(.*)$")
OUTCOME = re.compile(r"\s*(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\b.*$")


def is_table_row(line: str) -> bool:
    return len(line) > 1 and line.startswith("|") and line.endswith("|")


def figures_by_benchmark(output: str) -> dict[str, list[str]]:
    """{test id: its printed lines}, from `pytest -s -v` output."""
    found: dict[str, list[str]] = {}
    current = None
    for raw in output.splitlines():
        line = raw.rstrip()
        match = TEST_ID.match(line)
        if match:
            current, line = match.group(1), match.group(2)
            found.setdefault(current, [])
        if current is None:
            continue
        line = OUTCOME.sub("", line).strip()
        if line.startswith(("=", "_")):  # pytest's summary: the tests are over
            current = None
            continue
        if line and (re.search(r"\d", line) or is_table_row(line)):
            found[current].append(line)
    return found


GUARD_HEADING = "## Guarded figures"
GUARD_ROW = re.compile(r"^\| `([^`]+)` \| (small|full) \| ([\d,.]+) \| (higher|lower) \|$")


def guarded(text: str) -> dict[tuple[str, str], float]:
    """{(figure, scale): value} from a benchmarks file's guarded table."""
    rows = {}
    for line in text.partition(GUARD_HEADING)[2].splitlines():
        if match := GUARD_ROW.match(line.strip()):
            rows[(match[1], match[2])] = float(match[3].replace(",", ""))
    return rows


def guard_table(figures: list[Figure], scale: str, previous: str) -> list[str]:
    """The guarded table: this run's guarded figures at `scale`, and the other scale's rows
    as `previous` (the file as it was) had them."""
    better = {f.name: f.better for f in figures}
    rows = {key: value for key, value in guarded(previous).items() if key[1] != scale}
    for line in previous.partition(GUARD_HEADING)[2].splitlines():
        if match := GUARD_ROW.match(line.strip()):
            better.setdefault(match[1], match[4])
    rows.update({(f.name, scale): f.value for f in figures if f.guarded})
    lines = [
        GUARD_HEADING,
        "",
        "`python -m tests.bench --check` fails when a figure is worse than its row by more",
        "than 10% at the same scale, or misses its target (targets hold at the full scale).",
        "",
        "| Figure | Scale | Value | Better |",
        "| --- | --- | --- | --- |",
    ]
    for (name, at), value in sorted(rows.items()):
        shown = f"{value:,.0f}" if value >= 1000 or float(value).is_integer() else f"{value:.3g}"
        lines.append(f"| `{name}` | {at} | {shown} | {better[name]} |")
    return lines


def guard_problems(
    figures: list[Figure], committed: dict[tuple[str, str], float], scale: str
) -> list[str]:
    """What fails the guard: missed targets, and regressions beyond 10%."""
    problems = []
    for f in figures:
        if f.met is False:
            problems.append(f"{f.name} = {f.value:g} misses its target {f.target:g}")
        before = committed.get((f.name, scale))
        if f.guarded and before is not None and f.regressed_from(before):
            problems.append(
                f"{f.name} = {f.value:g} at {scale} scale, was {before:g} (> 10% worse)"
            )
    return problems


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(
    figures: dict[str, list[str]], scale: str, when: datetime, guard: list[str] | None = None
) -> str:
    lines = [
        "# Benchmarks",
        "",
        f"Written by `python -m tests.bench` on {when:%Y-%m-%d %H:%M} UTC, scale `{scale}`,"
        f" database {'PostgreSQL' if os.environ.get('PBP_TEST_DATABASE_URL') else 'SQLite'}.",
        "Each benchmark's printed figures; what they measure and the targets are in the"
        " docstring of each file in tests/bench/.",
        "",
        "| Benchmark | Figures |",
        "| --- | --- |",
    ]
    tables: dict[str, list[str]] = {}
    for test_id, printed in figures.items():
        name = f"`{test_id.removeprefix('tests/bench/')}`"
        rows = [line for line in printed if is_table_row(line)]
        text = [line for line in printed if not is_table_row(line)]
        if rows:
            tables[name] = rows
            text.insert(min(1, len(text)), "(its table of figures is below)")
        for n, line in enumerate(text or ["(no figures printed)"]):
            lines.append(f"| {name if n == 0 else ''} | {_cell(line)} |")
    for name, rows in tables.items():
        lines += ["", f"## {name}", "", *rows]
    if guard:
        lines += ["", *guard]
    return "\n".join(lines) + "\n"


@click.command("bench", context_settings={"ignore_unknown_options": True})
@click.option(
    "--scale",
    type=click.Choice(["small", "full"]),
    default="full",
    show_default=True,
    help="PBP_BENCH_SCALE for the benchmarks.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    show_default="docs/benchmarks.md, or docs/benchmarks-postgresql.md with PBP_TEST_DATABASE_URL",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; fail on a missed target or a guarded figure >10% worse than the file's.",
)
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def bench(scale: str, output: Path | None, check: bool, pytest_args: tuple[str, ...]) -> None:
    """Run tests/bench and write the figures they print to docs/benchmarks.md (SQLite) or
    docs/benchmarks-postgresql.md (PBP_TEST_DATABASE_URL set: the benchmarks use it).

    Extra arguments go to pytest, e.g. `python -m tests.bench --scale small -k poll`."""
    if output is None:
        postgres = bool(os.environ.get("PBP_TEST_DATABASE_URL"))
        output = ROOT / "docs" / ("benchmarks-postgresql.md" if postgres else "benchmarks.md")
    command = [sys.executable, "-m", "pytest", "-o", "addopts=", "-s", "-v", "-p"]
    command += ["no:cacheprovider", "tests/bench", *pytest_args]
    env = {**os.environ, "PBP_BENCH_SCALE": scale}
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    captured = []
    for line in proc.stdout:
        click.echo(line, nl=False)
        captured.append(line)
    code = proc.wait()
    if code:
        raise click.ClickException(f"pytest exited {code}: see the output above")
    text = "".join(captured)
    previous = output.read_text() if output.exists() else ""
    if check:
        problems = guard_problems(parse(text), guarded(previous), scale)
        for problem in problems:
            click.echo(f"REGRESSION: {problem}")
        if problems:
            raise click.ClickException(f"{len(problems)} figure(s) fail the guard of {output}")
        click.echo(f"every figure holds against {output} ({len(parse(text))} figures)")
        return
    figures = figures_by_benchmark(text)
    guard = guard_table(parse(text), scale, previous)
    output.parent.mkdir(parents=True, exist_ok=True)
    if scale == "full" or not previous:
        output.write_text(markdown(figures, scale, datetime.now(UTC), guard))
        click.echo(f"wrote {output} ({len(figures)} benchmarks)")
    else:  # a smoke size's figures are not the document's: only its guarded rows change
        output.write_text(
            previous.partition(GUARD_HEADING)[0].rstrip("\n") + "\n\n" + "\n".join(guard) + "\n"
        )
        click.echo(f"wrote the {scale} scale's guarded figures into {output}")
