"""Thin blueprints over pbp.services; `init_app` registers them and the error pages."""

from __future__ import annotations

from flask import Flask, render_template

from pbp.errors import PbpError, SchemaBehind, UserError


def init_app(app: Flask) -> None:
    from pbp import api
    from pbp.web import (
        auth,
        blog,
        cards,
        feeds,
        forum,
        history,
        mail,
        nav,
        player,
        public,
        referee,
        roster,
        times,
        tokens,
        turns,
    )

    auth.init_app(app)  # login, CSRF on every POST, rate limits, cookie flags
    nav.init_app(app)  # the campaign navigation bar, a template global
    times.init_app(app)  # the `zoned` and `iso` filters
    app.register_blueprint(public.bp)
    app.register_blueprint(feeds.bp)
    app.register_blueprint(mail.bp)
    app.register_blueprint(referee.bp)
    app.register_blueprint(history.bp)
    app.register_blueprint(turns.bp)
    app.register_blueprint(roster.characters_bp)
    app.register_blueprint(roster.tables_bp)
    app.register_blueprint(forum.bp)
    app.register_blueprint(cards.bp)
    app.register_blueprint(player.bp)
    app.register_blueprint(tokens.bp)
    api.init_app(app)  # /api/v1: bearer tokens instead of cookies, problem+json errors
    app.register_blueprint(blog.bp)  # last: its /c/<slug>/<character>/ routes are catch-alls
    app.register_error_handler(UserError, _user_error)
    app.register_error_handler(SchemaBehind, _schema_behind)


def _user_error(exc: UserError):
    return render_template("error.html", message=str(exc), status=exc.status), exc.status


def _schema_behind(exc: PbpError):
    return str(exc) + "\n", 503, {"Content-Type": "text/plain; charset=utf-8"}
