"""Security headers on every response (`init_app(app)`).

- Content-Security-Policy: scripts and styles only from pbp's own static files (no inline
  `<script>`, no `onclick=`, no `<style>`; tests/security/test_files_and_headers.py keeps the
  templates that way), so an HTML injection that slips past the sanitizer still runs
  nothing; `frame-ancestors 'none'` stops other sites framing pbp (clickjacking).
- Images: with `PBP_BLOCK_REMOTE_IMAGES` on (the default) pages load images only from pbp
  itself, so an image in an entry, note or ingested feed post cannot tell another site who
  read it and when. Entries and feeds already stored are covered too: the browser enforces
  it when the page is shown, whatever was stored. Feed readers ignore our CSP, so the Atom
  feeds pbp serves drop remote images' sources (the `local_images` template filter).
- X-Content-Type-Options: nosniff, so an uploaded or stored text is never run as a script.
- Referrer-Policy: same-origin, so a link in player content does not tell the linked site
  which campaign page it was on. A view that sets its own (the token pages' no-referrer)
  keeps it.
"""

from __future__ import annotations

from flask import Flask, Response, current_app

from adapters.sanitize import without_remote_images

LOCAL_IMAGES = "'self' data:"
ANY_IMAGES = "'self' data: https: http:"


def content_security_policy(block_remote_images: bool) -> str:
    directives = {
        "default-src": "'self'",
        "script-src": "'self'",
        "style-src": "'self'",
        "img-src": LOCAL_IMAGES if block_remote_images else ANY_IMAGES,
        "object-src": "'none'",
        "base-uri": "'self'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
    }
    return "; ".join(f"{name} {value}" for name, value in directives.items())


def init_app(app: Flask) -> None:
    app.after_request(_add_headers)
    app.add_template_filter(_local_images, "local_images")


def _local_images(html: str) -> str:
    """For HTML no CSP protects (the Atom feeds out): remote images lose their source."""
    if not current_app.config.get("PBP_BLOCK_REMOTE_IMAGES", True):
        return html
    return without_remote_images(html)


def _add_headers(response: Response) -> Response:
    block = current_app.config.get("PBP_BLOCK_REMOTE_IMAGES", True)
    headers = response.headers
    headers.setdefault("Content-Security-Policy", content_security_policy(block))
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "same-origin")
    return response
