"""Benchmark: the worst Markdown texts pbp accepts at its length limit (prints figures,
asserts only correctness).

Each shape of tests/markdown_shapes.py (a unit repeated, or generated nesting) is cut to
the longest text `pbp.markup.check_shape` accepts within the limit, then rendered. The
baseline in the same run is ordinary prose of the same length. Target: the worst shape at
most 10x that prose (the 200 ms it used to be, over the prose's 20 ms on a quiet machine, as
a ratio that holds on any machine; issue #34). Prose's instruction count is in
tests/bench/test_bench_instructions.py.
A longer text of the shape is refused before rendering: the time of that refusal is
printed too. ``PBP_BENCH_SCALE=small`` renders each shape once at a quarter of the limit
(a smoke size for CI). Run with::

    pytest tests/bench/test_bench_markup.py -o addopts="" -s
"""

import os
import time

import pytest

from pbp import limits
from pbp.markup import TooIntricate, check_shape, render_markdown
from tests.bench.figures import figure
from tests.markdown_shapes import longest_accepted, shapes

SCALES = {"full": (limits.POST_BODY, 3), "small": (limits.POST_BODY // 4, 1)}
TARGET_RATIO = 10.0  # the worst shape's render over prose's of the same length
PROSE = (
    "The captain *looked* at the [map](https://example.org/map) and said: "
    '"We sail at dawn."\nShe folded it twice.\n\n'
)
SHOWN = 15


def _scale() -> tuple[int, int]:
    return SCALES[os.environ.get("PBP_BENCH_SCALE", "full")]


def _cpu_ms(text: str, runs: int) -> float:
    """The fastest of *runs* renders, in CPU time: the machine is shared."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        render_markdown(text)
        best = min(best, (time.process_time() - start) * 1000)
    return best


def _refusal_ms(text: str) -> float:
    start = time.process_time()
    with pytest.raises(TooIntricate):
        check_shape(text)
    return (time.process_time() - start) * 1000


def test_bench_markdown_worst_shapes_at_the_limit():
    limit, runs = _scale()
    prose = (PROSE * (limit // len(PROSE) + 1))[:limit]
    baseline = _cpu_ms(prose, runs)
    rows = []
    for name, text in shapes().items():
        accepted = longest_accepted(text, limit)
        refused = text[: len(accepted) + 1] if len(accepted) < limit else None
        rows.append(
            (
                _cpu_ms(accepted, runs),
                name,
                len(accepted),
                _refusal_ms(refused) if refused and refused != accepted else None,
            )
        )
    rows.sort(reverse=True)
    assert all(length > 0 for _, _, length, _ in rows)
    lines = [
        f"\nMarkdown at the limit ({limit:,} characters), {len(rows)} shapes, fastest of "
        f"{runs} renders, CPU time; prose of that length "
        f"{baseline:.1f} ms",
        f"  {'shape':34} {'accepted':>9} {'render':>9} {'x prose':>8} {'refusal':>9}",
    ]
    for ms, name, length, refusal in rows[:SHOWN]:
        refused = f"{refusal:7.1f} ms" if refusal is not None else "        -"
        lines.append(f"  {name[:34]:34} {length:9,} {ms:6.1f} ms {ms / baseline:7.1f}x {refused}")
    worst = rows[0]
    lines.append(f"  worst: {worst[1]} at {worst[0]:.1f} ms")
    print("\n".join(lines))
    figure(
        "markup.worst_over_prose",
        worst[0] / baseline,
        better="lower",
        target=TARGET_RATIO,
        guard=False,
    )
