"""Issue #28's WebSub regression tests run against the same loopback hub, feed server and
pbp served over HTTP as tests/services/test_websub.py, with its committed campaign whose
Colonel Marsh's feed names the hub (`game`)."""

from tests.services.test_websub import fetcher, game, hub, live  # noqa: F401
