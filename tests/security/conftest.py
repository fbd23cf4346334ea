"""Issue #16's regression tests reuse the web and API helpers: the API wired into the
app, an `api` caller, `auth` (log in through the pages), and a small Noteworthy campaign
with a token per kind of caller (`world`, `forum_world`)."""

from __future__ import annotations

import pytest

from tests.api.conftest import api, app, auth, forum_world, world  # noqa: F401
from tests.helpers import make_test_app


@pytest.fixture
def app_with(engine, connection, database_url, tmp_path):
    """`app_with(PBP_TRUSTED_PROXIES=1)`: a test app of its own with these settings."""
    made = iter(range(1000))

    def make(**overrides):
        return make_test_app(
            engine, connection, database_url, tmp_path / f"instance-{next(made)}", **overrides
        )

    return make


#: Figures a security test reports (the slow-client attacks' p95): written at the end of
#: the run, so CI's `pytest -q` shows them without `-s`.
REPORTS: list[str] = []


def pytest_terminal_summary(terminalreporter) -> None:
    if REPORTS:
        terminalreporter.section("security figures")
        for line in REPORTS:
            terminalreporter.write_line(line)
