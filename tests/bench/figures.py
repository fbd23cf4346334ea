"""A benchmark's figures in one line each, which `python -m tests.bench` files and `--check`
compares with the guarded table committed in docs/benchmarks.md (issue #34 item 4).

    figure("web.planet_over_hello", 0.42, better="higher", target=0.8)

prints

    figure: web.planet_over_hello = 0.42 (higher is better; target >= 0.8: MISSED)

Every figure is a ratio to a peer or a floor measured in the same run, a count of queries, or
a count of instructions: never a time, which judges the machine rather than the code.
A target is stated for the full scale only; at the small scale (CI's smoke size) fixed costs
weigh more, so only regressions against the small scale's own committed figures count.
`guard=False` marks a figure that varies more than the 10% the guard allows from one run to
the next on a quiet machine (a timing ratio measured over a few seconds): it is printed and
filed, and its target still judged, but a change in it is not called a regression.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal

LINE = re.compile(
    r"figure: (?P<name>[\w.\-/]+) = (?P<value>[\d,.]+)"
    r" \((?P<better>higher|lower) is better"
    r"(?:; target (?P<op>>=|<=) (?P<target>[\d,.]+): (?P<verdict>met|MISSED))?"
    r"(?P<unguarded>; not guarded)?\)"
)


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    better: Literal["higher", "lower"]
    target: float | None = None
    met: bool | None = None
    guarded: bool = True

    def regressed_from(self, before: float, tolerance: float = 0.10) -> bool:
        """Worse than `before` by more than `tolerance` of it."""
        if self.better == "higher":
            return self.value < before * (1 - tolerance)
        return self.value > before * (1 + tolerance)


def scale() -> str:
    return os.environ.get("PBP_BENCH_SCALE", "full")


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 or float(value).is_integer() else f"{value:.3g}"


def figure(
    name: str,
    value: float,
    *,
    better: Literal["higher", "lower"],
    target: float | None = None,
    guard: bool = True,
) -> Figure:
    """Print the figure's line and return it; `target` is dropped below the full scale."""
    if scale() != "full":
        target = None
    met = None
    text = f"figure: {name} = {_number(value)} ({better} is better"
    if target is not None:
        met = value >= target if better == "higher" else value <= target
        op = ">=" if better == "higher" else "<="
        text += f"; target {op} {_number(target)}: {'met' if met else 'MISSED'}"
    if not guard:
        text += "; not guarded"
    print(text + ")")
    return Figure(name, value, better, target, met, guard)


def parse(output: str) -> list[Figure]:
    """Every figure line in a run's output."""
    found = []
    for match in LINE.finditer(output):
        target = match["target"]
        found.append(
            Figure(
                match["name"],
                float(match["value"].replace(",", "")),
                match["better"],  # type: ignore[arg-type]
                float(target.replace(",", "")) if target else None,
                None if match["verdict"] is None else match["verdict"] == "met",
                match["unguarded"] is None,
            )
        )
    return found
