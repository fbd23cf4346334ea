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


# --- figures and the regression guard (issue #34 item 4) --------------------------------


def test_a_figure_line_reads_back_as_printed(capsys, monkeypatch):
    from tests.bench.figures import figure, parse

    monkeypatch.setenv("PBP_BENCH_SCALE", "full")
    printed = [
        figure("web.planet_over_hello", 0.42, better="higher", target=0.8, guard=False),
        figure("instructions.tally", 51_234_567, better="lower", target=30_000_000),
        figure("queries.planet", 18, better="lower"),
    ]
    out = capsys.readouterr().out
    assert "target >= 0.8: MISSED" in out and "not guarded" in out
    assert [(f.name, f.met, f.guarded) for f in parse(out)] == [
        ("web.planet_over_hello", False, False),
        ("instructions.tally", False, True),
        ("queries.planet", None, True),
    ]
    assert parse(out)[1].value == 51_234_567 == printed[1].value


def test_targets_hold_at_the_full_scale_only(capsys, monkeypatch):
    from tests.bench.figures import figure

    monkeypatch.setenv("PBP_BENCH_SCALE", "small")
    assert figure("instructions.tally", 5e6, better="lower", target=1).met is None
    assert "target" not in capsys.readouterr().out


def test_the_guard_fails_a_regression_beyond_ten_percent_and_a_missed_target():
    from tests.bench.figures import Figure
    from tests.bench.report import guard_problems, guard_table, guarded

    before = [Figure("instructions.tally", 100.0, "lower"), Figure("web.ratio", 1.0, "higher")]
    previous = "\n".join(guard_table(before, "small", ""))
    committed = guarded(previous)
    assert committed == {("instructions.tally", "small"): 100.0, ("web.ratio", "small"): 1.0}
    same = [Figure("instructions.tally", 109.0, "lower"), Figure("web.ratio", 0.91, "higher")]
    assert guard_problems(same, committed, "small") == []
    worse = [Figure("instructions.tally", 111.0, "lower"), Figure("web.ratio", 0.89, "higher")]
    assert len(guard_problems(worse, committed, "small")) == 2
    assert guard_problems(worse, committed, "full") == []  # no row at that scale
    unguarded = [Figure("web.ratio", 0.5, "higher", guarded=False)]
    assert guard_problems(unguarded, committed, "small") == []
    missed = [Figure("web.ratio", 2.0, "higher", target=3.0, met=False)]
    assert guard_problems(missed, committed, "small") == ["web.ratio = 2 misses its target 3"]


def test_a_run_at_one_scale_keeps_the_other_scales_rows():
    from tests.bench.figures import Figure
    from tests.bench.report import guard_table, guarded

    small = "\n".join(guard_table([Figure("queries.planet", 18, "lower")], "small", ""))
    both = "\n".join(guard_table([Figure("queries.planet", 19, "lower")], "full", small))
    assert guarded(both) == {("queries.planet", "small"): 18, ("queries.planet", "full"): 19}
