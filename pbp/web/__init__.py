"""Thin blueprints over pbp.services; `init_app` registers them and the error pages."""

from __future__ import annotations

from flask import Flask, g, render_template
from werkzeug.exceptions import HTTPException

from pbp.errors import PbpError, RulesError, SchemaBehind, UserError


def init_app(app: Flask) -> None:
    from pbp import request_size
    from pbp.web import (
        actions,
        activity,
        auth,
        base_url,
        blog,
        book,
        calendar,
        cards,
        channels,
        combat,
        feeds,
        forum,
        headers,
        history,
        icons,
        mail,
        nav,
        player,
        public,
        referee,
        roster,
        roster_admin,
        saved_drafts,
        search,
        signup,
        times,
        tokens,
        turns,
        unread,
        visitor_pages,
        webmention,
        websub,
    )

    request_size.init_app(app)  # first: refuse an oversized body before anything reads it
    headers.init_app(app)  # CSP, nosniff, Referrer-Policy on every response
    auth.init_app(app)  # login, CSRF on every POST, rate limits, cookie flags
    signup.init_app(app)  # /signup (PBP_SIGNUP), under the same limiter
    websub.init_app(app)  # the WebSub callback: CSRF-exempt, under the same limiter
    webmention.init_app(app)  # the Webmention endpoint, advertised on every page; limited
    calendar.init_app(app)  # /account/calendar and the secret .ics feeds, limited
    nav.init_app(app)  # the campaign navigation bar, a template global
    actions.init_app(app)  # form_fields(), as_typed() and refusal() for the forms' templates
    times.init_app(app)  # the `zoned` and `iso` filters
    base_url.init_app(app)  # the referee's notice when PBP_BASE_URL is not this site
    app.register_blueprint(public.bp)
    app.register_blueprint(feeds.bp)
    app.register_blueprint(mail.bp)
    app.register_blueprint(channels.bp)  # issue #31: chat channels, push devices, /sw.js
    app.register_blueprint(referee.bp)
    app.register_blueprint(roster_admin.bp)
    app.register_blueprint(history.bp)
    app.register_blueprint(activity.bp)
    app.register_blueprint(turns.bp)
    app.register_blueprint(roster.characters_bp)
    app.register_blueprint(roster.tables_bp)
    app.register_blueprint(forum.bp)
    app.register_blueprint(cards.bp)
    app.register_blueprint(player.bp)
    app.register_blueprint(tokens.bp)
    app.register_blueprint(saved_drafts.bp)  # before blog's catch-all /c/<slug>/<character>/
    unread.init_app(app)  # "Mark all read" and the new_mark() template global
    app.register_blueprint(search.bp)
    app.register_blueprint(icons.bp)
    app.register_blueprint(book.bp)  # before blog's catch-alls
    app.register_blueprint(combat.bp)
    # Before the API's (pbp.create_app wires the API after this): it answers its own routing
    # errors and hands the rest to these.
    for code in (403, 404, 405, 410, 500):
        app.register_error_handler(code, _http_error)
    app.register_blueprint(blog.bp)  # last: its /c/<slug>/<character>/ routes are catch-alls
    app.register_error_handler(UserError, _user_error)
    app.register_error_handler(RulesError, _user_error)  # a rule refused: same clear page
    app.register_error_handler(SchemaBehind, _schema_behind)
    visitor_pages.init_app(app)  # last: around the WSGI app, before Flask's own work


def _user_error(exc: UserError | RulesError):
    page = render_template(
        "error.html", message=str(exc), status=exc.status, campaign=g.get("pbp_campaign")
    )
    return page, exc.status


# What each HTTP error says when nothing more specific is known (werkzeug's own texts speak
# of "the server" and "the requested URL").
HTTP_MESSAGES = {
    403: "You don't have permission to open this page.",
    404: "No page has this address.",
    405: "This page does not take that kind of request.",
    410: "This page existed but is gone for good.",
    500: "pbp failed to answer this request.",
}


def _http_error(exc: HTTPException):
    code = exc.code or 500  # Flask has logged an unhandled exception before this runs
    message = HTTP_MESSAGES.get(code, exc.description or "")
    return render_template("error.html", message=message, status=code), code


def _schema_behind(exc: PbpError):
    return str(exc) + "\n", 503, {"Content-Type": "text/plain; charset=utf-8"}
