"""Rendered parts of public pages, kept in each process's memory under the campaign's
content version (pbp.content_version), so a page is rebuilt only after a change.

The planet of a long campaign takes tens of milliseconds to build and is read far more
often than it changes; served from here it costs about what the page's frame does. The
key holds the content version, so a change never serves a stale page past the version's
bump; the time limit (PBP_PAGE_CACHE_SECONDS, 0 turns caching off) bounds what a process
that died between a commit and its bump could leave behind. Size is counted in
characters (or bytes) of HTML, 32 M at most per process, least recently used out first.

Visitors (no account) may be served on a version up to PBP_PAGE_RECHECK_SECONDS old (1 s;
0: always ask): under load the page then costs no database round trip at all. People
logged in, who write, always get the current version, so they see their own changes.
A visitor's page carries an ETag (`VisitorPage`), and a visitor without cookies is
answered before Flask runs (pbp.web.visitor_pages).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from cachetools import TTLCache
from flask import Flask, Response, current_app, request

MAX_CHARACTERS = 32 * 1024 * 1024
Page = TypeVar("Page", str, bytes, "VisitorPage")
T = TypeVar("T")


class PageCache:
    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: TTLCache[Hashable, Any] = TTLCache(
            MAX_CHARACTERS, seconds, clock, getsizeof=len
        )
        self._building: dict[Hashable, threading.Lock] = {}
        self._versions: dict[Hashable, tuple[float, Any]] = {}

    def get_or_render(self, key: Hashable, render: Callable[[], Page]) -> Page:
        with self._lock:
            html = self._cache.get(key)
            if html is not None:
                return html
            building = self._building.setdefault(key, threading.Lock())
        # One thread builds a missing page while the others asking for it wait for it:
        # after a change, a busy page is built once per process, not once per reader.
        with building:
            try:
                with self._lock:
                    html = self._cache.get(key)
                if html is None:
                    html = render()
                    if len(html) <= MAX_CHARACTERS // 8:
                        with self._lock:
                            self._cache[key] = html
            finally:
                with self._lock:
                    self._building.pop(key, None)
        return html

    def peek(self, key: Hashable) -> Any:
        """What is kept under `key`, or None; never builds anything."""
        with self._lock:
            return self._cache.get(key)

    def put(self, key: Hashable, value: Any) -> None:
        if len(value) <= MAX_CHARACTERS // 8:
            with self._lock:
                self._cache[key] = value

    def seen(self, key: Hashable, recheck: float) -> Any:
        """What `recent` last loaded for `key` if less than `recheck` seconds ago, else None."""
        with self._lock:
            seen = self._versions.get(key)
        if seen is None or self._clock() - seen[0] >= recheck:
            return None
        return seen[1]

    def recent(self, key: Hashable, load: Callable[[], T], recheck: float) -> T:
        """`load()`, or its value from less than `recheck` seconds ago."""
        now = self._clock()
        with self._lock:
            seen = self._versions.get(key)
        if seen is not None and now - seen[0] < recheck:
            value: T = seen[1]  # what load() gave for this key
            return value
        value = load()
        with self._lock:
            self._versions[key] = (now, value)
        return value


class VisitorPage:
    """A visitor's whole page, encoded, with its ETag (a hash of the bytes): a reader who
    sends it back in If-None-Match gets a 304 without the page being built or sent."""

    def __init__(self, body: bytes):
        self.body = body
        self.etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'

    def __len__(self) -> int:
        return len(self.body)

    def response(self) -> Response:
        if request.if_none_match.contains_weak(self.etag.strip('"')):
            answer = Response(status=304)
        else:
            answer = Response(self.body, mimetype="text/html")
        answer.headers["ETag"] = self.etag
        return answer


def cache_of(app: Flask) -> PageCache | None:
    """`app`'s page cache, made on first use; None when PBP_PAGE_CACHE_SECONDS is 0."""
    seconds = app.config.get("PBP_PAGE_CACHE_SECONDS", 60)
    if not seconds:
        return None
    cache = app.extensions.get("pbp_page_cache")
    if cache is None:
        cache = app.extensions.setdefault("pbp_page_cache", PageCache(seconds))
    return cache


def _cache() -> PageCache | None:
    return cache_of(current_app)


def cached(key: Hashable, render: Callable[[], Page]) -> Page:
    """`render()`'s HTML (text or encoded) for `key`, from this app's cache when it holds it."""
    cache = _cache()
    return render() if cache is None else cache.get_or_render(key, render)


def visitors_version(slug: str, load: Callable[[], T]) -> T:
    """The campaign's content version as `load()` reads it, trusted for visitors' pages for
    PBP_PAGE_RECHECK_SECONDS."""
    cache = _cache()
    recheck = current_app.config.get("PBP_PAGE_RECHECK_SECONDS", 1)
    if cache is None or not recheck:
        return load()
    return cache.recent(version_key(slug), load, recheck)


def version_key(slug: str) -> tuple[str, str]:
    return ("version", slug)
