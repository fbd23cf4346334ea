"""Fixtures shared by the service tests."""

import pytest

from adapters import Fetcher


@pytest.fixture
def fetcher():
    """The production fetcher with loopback allowed and short timeouts."""
    with Fetcher(allow_private=True, connect_timeout=1, read_timeout=2) as f:
        yield f
