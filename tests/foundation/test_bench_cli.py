"""`python -m tests.bench`'s report: each printed line filed under the benchmark that printed it."""

from datetime import UTC, datetime

from tests.bench.report import figures_by_benchmark, markdown

OUTPUT = """\
============================= test session starts ==============================
tests/bench/test_bench_poll.py::test_bench_poll_pass
poll bench: 2000 feeds on 200 loopback addresses
  measured pass: 1800 x 304, 200 changed     7.85 s
  ----------
PASSED
tests/bench/test_bench_growth.py::test_bench_growth | measure | 1x |
| --- | --- |
| poll | 2.0 |
  whole run 89 s
PASSED
============================== 2 passed in 90.00s ==============================
"""


def test_lines_are_filed_under_their_benchmark_and_decoration_is_dropped():
    figures = figures_by_benchmark(OUTPUT)
    assert figures == {
        "tests/bench/test_bench_poll.py::test_bench_poll_pass": [
            "poll bench: 2000 feeds on 200 loopback addresses",
            "measured pass: 1800 x 304, 200 changed     7.85 s",
        ],
        "tests/bench/test_bench_growth.py::test_bench_growth": [
            "| measure | 1x |",
            "| --- | --- |",
            "| poll | 2.0 |",
            "whole run 89 s",
        ],
    }


def test_the_report_has_a_row_per_line_and_tables_below(monkeypatch):
    monkeypatch.delenv("PBP_TEST_DATABASE_URL", raising=False)
    text = markdown(figures_by_benchmark(OUTPUT), "full", datetime(2026, 11, 29, tzinfo=UTC))
    assert "scale `full`, database SQLite" in text
    assert "| `test_bench_poll.py::test_bench_poll_pass` | poll bench: 2000 feeds" in text
    assert "## `test_bench_growth.py::test_bench_growth`\n\n| measure | 1x |" in text
    assert "7.85 s" in text and "----------" not in text
