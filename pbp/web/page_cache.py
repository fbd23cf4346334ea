"""Rendered parts of public pages, kept in each process's memory under the campaign's
content version (pbp.content_version), so a page is rebuilt only after a change.

The planet of a long campaign takes tens of milliseconds to build and is read far more
often than it changes; served from here it costs about what the page's frame does. The
key holds the content version, so a change never serves a stale page past the version's
bump; the time limit (PBP_PAGE_CACHE_SECONDS, 0 turns caching off) bounds what a process
that died between a commit and its bump could leave behind. Size is counted in
characters (or bytes) of HTML, 32 M at most per process, least recently used out first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

from cachetools import TTLCache
from flask import current_app

MAX_CHARACTERS = 32 * 1024 * 1024
Page = TypeVar("Page", str, bytes)


class PageCache:
    def __init__(self, seconds: float):
        self._lock = threading.Lock()
        self._cache: TTLCache = TTLCache(MAX_CHARACTERS, seconds, getsizeof=len)
        self._building: dict[Hashable, threading.Lock] = {}

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


def cached(key: Hashable, render: Callable[[], Page]) -> Page:
    """`render()`'s HTML (text or encoded) for `key`, from this app's cache when it holds it."""
    seconds = current_app.config.get("PBP_PAGE_CACHE_SECONDS", 60)
    if not seconds:
        return render()
    cache = current_app.extensions.get("pbp_page_cache")
    if cache is None:
        cache = current_app.extensions.setdefault("pbp_page_cache", PageCache(seconds))
    return cache.get_or_render(key, render)
