"""Security tests reuse the API tests' fixtures: the API wired into the app, an `api`
caller, and a small Noteworthy campaign with a token per kind of caller (`world`)."""

from tests.api.conftest import api, app, auth, world  # noqa: F401
