"""Thin blueprints over pbp.services; `init_app` registers them and the error pages."""

from __future__ import annotations

from flask import Flask, render_template, request

from pbp import db, migrate
from pbp.errors import PbpError, SchemaBehind, UserError


def init_app(app: Flask) -> None:
    from pbp.web import public

    app.register_blueprint(public.bp)
    app.before_request(_require_current_schema)
    app.register_error_handler(UserError, _user_error)
    app.register_error_handler(SchemaBehind, _schema_behind)


def _require_current_schema() -> None:
    """Refuse to serve on a schema behind the code (checked once per process)."""
    from flask import current_app

    if current_app.extensions.get("pbp_schema_ok") or request.endpoint == "static":
        return
    migrate.require_current(db.database(current_app).engine)
    current_app.extensions["pbp_schema_ok"] = True


def _user_error(exc: UserError):
    return render_template("error.html", message=str(exc), status=exc.status), exc.status


def _schema_behind(exc: PbpError):
    return str(exc) + "\n", 503, {"Content-Type": "text/plain; charset=utf-8"}
