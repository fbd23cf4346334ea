"""Issue #27 item 1: the referee learns when links in mail point elsewhere than the site.

Invitations, mails and feeds build their links on PBP_BASE_URL. When it names another host
or port than the one the referee's browser reached, players get links that may not open
(`pbp serve --port 5410` once mailed http://127.0.0.1:5000/...). The referee's dashboards
(Noteworthy and forum) say so in one line, through the template global `base_url_notice`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, current_app, has_request_context, request

DEFAULT_PORTS = {"http": 80, "https": 443}


def _where(url: str) -> tuple[str, int | None]:
    """Host and port of `url`; a scheme's default port counts as none, so
    https://pbp.example.org matches http://pbp.example.org reached through a TLS proxy."""
    parts = urlsplit(url)
    port = parts.port
    if port == DEFAULT_PORTS.get(parts.scheme):
        port = None
    return (parts.hostname or "").lower(), port


def mismatch(base_url: str, reached: str, given: bool = True) -> str | None:
    """What to tell the referee when links built on `base_url` point to another host or
    port than `reached` (the address this page was requested at); None when they agree.
    `given`: PBP_BASE_URL was set, rather than taken from the address `pbp serve` serves."""
    if _where(base_url) == _where(reached):
        return None
    base, here = base_url.rstrip("/"), reached.rstrip("/")
    advice = (
        f"if players should use {here}, set PBP_BASE_URL to it"
        if given
        else "set PBP_BASE_URL to the address players use"
    )
    return f"Links in mail point to {base}; this page was reached at {here}: {advice}."


def notice() -> str | None:
    """`mismatch` for the current request (the template global `base_url_notice`)."""
    if not has_request_context():
        return None
    config = current_app.config
    return mismatch(
        config["PBP_BASE_URL"], request.host_url, bool(config.get("PBP_BASE_URL_GIVEN", True))
    )


def init_app(app: Flask) -> None:
    app.add_template_global(notice, "base_url_notice")
