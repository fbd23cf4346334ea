"""Refuse request bodies over `MAX_CONTENT_LENGTH` (`PBP_MAX_REQUEST_BYTES`, 1 MiB).

Without a limit one POST to an address anyone may call (the unsubscribe link) made a
worker buffer hundreds of MiB. A body that declares its length is refused before anything
reads it; one sent in chunks is cut off by werkzeug once it passes the limit, with the
same 413. The answer is a page, or problem+json under /api/v1 (so this module sits
beside pbp.web and pbp.api, which may not import each other).
"""

from __future__ import annotations

from flask import Flask, current_app, render_template, request
from werkzeug.exceptions import RequestEntityTooLarge

from pbp.errors import UserError


class TooLarge(UserError):
    status = 413


def too_large_message(limit: int | None) -> str:
    size = f"{limit / 1024 / 1024:g} MiB" if limit and limit >= 1024 * 1024 else f"{limit} bytes"
    return (
        f"this request is larger than the {size} pbp accepts: shorten the text, or split it "
        "into several posts"
    )


def init_app(app: Flask) -> None:
    """Call before anything that reads the body (CSRF, the views)."""
    app.before_request(_refuse_oversize)
    app.register_error_handler(RequestEntityTooLarge, _too_large)


def _refuse_oversize() -> None:
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    if limit is None:
        return
    if (request.content_length or 0) > limit:
        raise TooLarge(too_large_message(limit))
    if request.content_length is None and request.environ.get("wsgi.input_terminated"):
        # Chunked: werkzeug stops reading at the limit but hands on what it read as if
        # it were all, so a form would be silently cut short. Read up to the limit (kept
        # for the view), then one byte more: werkzeug raises 413 if there is one.
        try:
            request.get_data(cache=True)
            request.stream.read(1)
        except RequestEntityTooLarge:
            raise TooLarge(too_large_message(limit)) from None


def _too_large(_exc: RequestEntityTooLarge):
    """A chunked body that outgrew the limit while a view or CSRF check read it."""
    from pbp.api import problems

    message = too_large_message(current_app.config.get("MAX_CONTENT_LENGTH"))
    if problems.is_api_request():
        return problems.problem(413, message)
    return render_template("error.html", message=message, status=413), 413
