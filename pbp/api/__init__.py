"""pbp's JSON API at /api/v1: the pages' operations for scripts and other clients.

Each operation calls the same services with the same permission checks as its page
(pbp.services.campaigns.require_referee and its neighbours, or pbp.web.access where a
module has not moved to them yet), so the API can do nothing a person could not do on the
site. Callers
authenticate with a personal token (`Authorization: Bearer`, made on /account/tokens);
errors are RFC 9457 problem details; the OpenAPI 3.1 document at /api/v1/openapi.json and
the page at /api/v1/docs are generated from the route table in pbp.api.registry.

Wiring (pbp.create_app, after pbp.web.init_app): `api.init_app(app)`.
"""

from __future__ import annotations

from flask import Flask

from pbp.api import bearer, problems
from pbp.api.registry import OPERATIONS, bp

# The modules whose decorators fill the route table.
from pbp.api import board, calendar, campaigns, docs, entries, forum, player, referee, roster, turns  # noqa: E402,F401  # isort: skip
from pbp.api import alive  # noqa: E402,F401  # isort: skip
from pbp.api import saved_drafts  # noqa: E402,F401  # isort: skip
from pbp.api import channels  # noqa: E402,F401  # isort: skip
from pbp.api import icons, search  # noqa: E402,F401  # isort: skip

__all__ = ["OPERATIONS", "bp", "init_app"]

bp.before_request(bearer.start_as_visitor)
problems.attach(bp)


def init_app(app: Flask) -> None:
    """Register the API: token auth instead of cookies (so no CSRF token), and problem
    details for addresses under /api/v1 that match no operation. pbp.web.init_app has set up
    CSRF protection (Flask-WTF's CSRFProtect, kept in app.extensions) before this runs."""
    app.extensions["csrf"].exempt(bp)
    app.register_blueprint(bp)
    problems.register_routing_errors(app)
