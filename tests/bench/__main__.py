"""`python -m tests.bench [--scale small|full] [pytest args]`: see tests/bench/report.py."""

from tests.bench.report import bench

bench(prog_name="python -m tests.bench")
