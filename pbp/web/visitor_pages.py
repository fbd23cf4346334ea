"""Visitors' pages answered before Flask (issue #34 item 3): a GET with no session or
remember cookie, for an address whose whole answer is kept, costs a dictionary look-up.

Most of a planet's readers have no account. For them the page is the same for everyone
(pbp.web.public keeps it whole, pbp.web.page_cache), yet each request still went through
Flask's request context, the session, the login manager, the limiter and the after-request
hooks: more than the page itself cost once cached. Here the first answer Flask gives such
a visitor for an address is kept as it went out, status, headers (CSP and the rest, from
pbp.web.headers) and body, and the next visitors get it straight from the WSGI call.

Only what the view marked as a visitor's page (`keep_for_visitors`) is kept, only when the
request carried neither the session nor the remember cookie (who has one may be logged in,
or have a message waiting: Flask answers them), and only if the answer sets no cookie. A
kept answer is served while the campaign's content version the page was built under is
still the one visitors are shown (PBP_PAGE_RECHECK_SECONDS, pbp.web.page_cache): after a
change, the next visitor past the recheck goes through Flask and the page is rebuilt.
A matching If-None-Match gets a 304 with the same headers and no body.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask, request
from flask_login.config import COOKIE_NAME as REMEMBER_COOKIE  # type: ignore[import-untyped]
from werkzeug.http import parse_etags

from pbp.web.page_cache import cache_of, version_key

_MARK = "pbp.visitor_page"  # the environ key the view fills: (slug, version)
_LEFT_OUT_OF_304 = frozenset({"content-length", "content-type"})


def init_app(app: Flask) -> None:
    """Wrap the app's WSGI callable (after anything else wraps it, such as ProxyFix)."""
    app.wsgi_app = VisitorPages(app, app.wsgi_app)  # type: ignore[method-assign]


def keep_for_visitors(slug: str, version: Any) -> None:
    """Mark this request's answer as the page every visitor gets while the campaign `slug`
    is at `version` (the value pbp.web.page_cache.visitors_version gave)."""
    request.environ[_MARK] = (slug, version)


class Kept:
    def __init__(self, slug: str, version: Any, headers: list[tuple[str, str]], body: bytes):
        self.slug = slug
        self.version = version
        self.headers = headers
        self.body = body
        self.etag = next((v for k, v in headers if k.lower() == "etag"), None)
        self.not_modified_headers = [
            (name, value) for name, value in headers if name.lower() not in _LEFT_OUT_OF_304
        ]

    def __len__(self) -> int:
        return len(self.body)

    def answer(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        asked = environ.get("HTTP_IF_NONE_MATCH")
        if asked and self.etag and parse_etags(asked).contains_weak(self.etag.strip('"')):
            start_response("304 NOT MODIFIED", list(self.not_modified_headers))
            return []
        start_response("200 OK", list(self.headers))
        return [self.body]


class VisitorPages:
    def __init__(self, app: Flask, wsgi_app: Callable) -> None:
        self.app = app
        self.wsgi_app = wsgi_app
        names = (
            app.config["SESSION_COOKIE_NAME"],
            app.config.get("REMEMBER_COOKIE_NAME", REMEMBER_COOKIE),  # Flask-Login's default
        )
        self.cookies = tuple(f"{name}=" for name in names)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        cache = cache_of(self.app)
        if cache is None or environ.get("REQUEST_METHOD") != "GET" or self._signed(environ):
            return self.wsgi_app(environ, start_response)
        key = (
            "response",
            environ.get("SCRIPT_NAME", ""),
            environ.get("PATH_INFO", ""),
            environ.get("QUERY_STRING", ""),
        )
        recheck = self.app.config.get("PBP_PAGE_RECHECK_SECONDS", 1)
        if not recheck:  # every visitor's page asks the database: nothing to answer here
            return self.wsgi_app(environ, start_response)
        kept = cache.peek(key)
        if kept is not None and cache.seen(version_key(kept.slug), recheck) == kept.version:
            return kept.answer(environ, start_response)
        return self._answer_and_keep(cache, key, environ, start_response)

    def _signed(self, environ: dict) -> bool:
        """Whether the request may belong to someone logged in (or with a message to see):
        it carries the session or the remember cookie. A look for the names, no parsing:
        a false alarm only sends the request through Flask."""
        cookies: str = environ.get("HTTP_COOKIE") or ""
        return any(name in cookies for name in self.cookies)

    def _answer_and_keep(self, cache, key, environ: dict, start_response: Callable):
        sent: dict[str, Any] = {}

        def recording(status, headers, exc_info=None):
            sent["status"], sent["headers"] = status, headers
            return start_response(status, headers, exc_info)

        body = self.wsgi_app(environ, recording)
        mark = environ.get(_MARK)
        if (
            mark is None
            or not sent.get("status", "").startswith("200 ")
            or any(name.lower() == "set-cookie" for name, _ in sent["headers"])
        ):
            return body
        try:
            data = b"".join(body)
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
        cache.put(key, Kept(mark[0], mark[1], list(sent["headers"]), data))
        return [data]
