"""Dreamwidth: RSS in LiveJournal's lj: namespace, Atom with ``dw:`` elements, and the
latest-comments RSS.

Dreamwidth's Atom feed declares ``xmlns:dw`` as the site root (``https://www.dreamwidth.org``)
rather than a versioned URI, so any namespace on the dreamwidth.org host counts. Its comment
feed items only carry the thread URL (``/4242.html?thread=98765#cmt98765``); the entry is the
same URL without query and fragment.

Entries carry no per-entry comment feed, only ``lj:reply-count``; a journal's notes are read
from its latest-comments feed, at ``data/rss?comments=1`` beside its ``data/rss``. Polling
fetches it (as WordPress's site-wide ``/comments/feed/``) when the journal's feed has changed
and lists reply counts; a 304 or identical bytes skip it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from adapters.base import Parsed
from adapters.common import generator_name, get, host_of, namespace_prefix, safe_url
from adapters.livejournal import LiveJournalAdapter, _is_lj_ns
from adapters.sanitize import clean_text


def _is_dw_ns(uri: str) -> bool:
    return host_of(uri) in ("dreamwidth.org", "www.dreamwidth.org")


def entry_url_of_thread(url: str | None) -> str | None:
    """``https://u.dreamwidth.org/4242.html?thread=9#cmt9`` → ``https://u.dreamwidth.org/4242.html``."""
    if not url:
        return None
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def latest_comments_url(journal_url: str | None) -> str | None:
    """``https://lord-ashby.dreamwidth.org/`` → ``https://lord-ashby.dreamwidth.org/data/rss?comments=1``.

    The journal's address as its feed gives it (the channel link). Any host: the dialect was
    detected or chosen, and a mirror or a test server has the same layout.
    """
    url = safe_url(journal_url)
    if url is None:
        return None
    parts = urlsplit(url)
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return urlunsplit((parts.scheme, parts.netloc, path + "data/rss", "comments=1", ""))


def _is_thread_url(url: str | None) -> bool:
    if not url:
        return False
    return "thread=" in url or "#cmt" in url


class DreamwidthAdapter(LiveJournalAdapter):
    name = "dreamwidth"
    journal_domain = "dreamwidth.org"

    def matches(self, parsed: Parsed) -> bool:
        return (
            namespace_prefix(parsed, _is_dw_ns) is not None
            or "dreamwidth" in generator_name(parsed).lower()
            or host_of(self.site_url(parsed)).endswith(".dreamwidth.org")
        )

    def prefixes(self, parsed: Parsed) -> tuple[str | None, ...]:
        return (
            namespace_prefix(parsed, _is_dw_ns),
            namespace_prefix(parsed, _is_lj_ns),
            "dw",
            "lj",
        )

    def is_comment_feed(self, parsed: Parsed) -> bool:
        items = get(parsed, "entries") or []
        return bool(items) and all(_is_thread_url(self.link(item)) for item in items)

    def feed_info(self, parsed: Parsed) -> dict[str, Any]:
        info = super().feed_info(parsed)
        if not self.is_comment_feed(parsed):
            info["site_comments_url"] = latest_comments_url(info["site_url"])
        return info

    def note_parent(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        return None, entry_url_of_thread(self.link(item))

    def note_author(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        poster = clean_text(self.field(item, parsed, "poster"))
        if poster:
            return poster, self.journal_url(poster)
        return super().note_author(item, parsed)
