"""The Webmention endpoint (blueprint `webmention`, W3C Webmention), issue #31 item 4.

    POST /webmention    source=…&target=…: 202, verified later by a job

A machine's request, not a person's form: no login, no form token (CSRF-exempt), and
rate limited per client address (`PBP_WEBMENTION_LIMIT`). The view checks only what needs
no fetch (pbp.services.noteworthy.webmentions.receive): a bad source or target, or a
source equal to the target, is a 400 with the reason. The source is fetched later, by the
scheduler, through the SSRF-guarded fetcher, never while the sender waits.

Every HTML page advertises the endpoint: an HTTP `Link: <…/webmention>; rel="webmention"`
here, and `<link rel="webmention">` in templates/base.html.
"""

from __future__ import annotations

from flask import Blueprint, Flask, Response, current_app, request, url_for

from pbp.request_db import get_session
from pbp.services.noteworthy import webmentions
from pbp.web.actions import callback, now

bp = Blueprint("webmention", __name__)

WEBMENTION_LIMIT = "60 per minute"
TEXT = {"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"}


def init_app(app: Flask) -> None:
    """Register the endpoint, CSRF-exempt and limited (call after pbp.web.auth)."""
    from pbp.web.auth import csrf

    app.register_blueprint(bp)
    csrf.exempt(receive)
    limiter = app.extensions["pbp_limiter"]  # made by pbp.rate_limits
    limit = limiter.limit(app.config.get("PBP_WEBMENTION_LIMIT", WEBMENTION_LIMIT))
    app.view_functions["webmention.receive"] = limit(app.view_functions["webmention.receive"])
    app.after_request(_advertise)


def endpoint_url() -> str:
    return current_app.config["PBP_BASE_URL"] + url_for("webmention.receive")


def _advertise(response: Response) -> Response:
    """W3C Webmention: the endpoint in an HTTP Link header, which senders look at first."""
    if response.mimetype == "text/html" and request.method in ("GET", "HEAD"):
        response.headers.add("Link", f'<{endpoint_url()}>; rel="webmention"')
    return response


@bp.post("/webmention")
@callback
def receive():
    mention = webmentions.receive(
        session=get_session(),
        base_url=current_app.config["PBP_BASE_URL"],
        source=request.form.get("source", ""),
        target=request.form.get("target", ""),
        now=now(),
    )
    return f"accepted: {mention.source} will be verified\n", 202, TEXT
