"""WordPress RSS2: per-post comment feeds (``wfw:commentRss``) counted by ``slash:comments``,
and comment feeds, per post (``/post/feed/``) or site-wide (``/comments/feed/``).

Comment items look like: title "Comment on POST by AUTHOR" (site-wide) or "By: AUTHOR"
(per post), guid ``POSTGUID#comment-ID``, author in ``dc:creator``. The post's guid is the
part before ``#comment-``, which maps a note back to its entry even in the site-wide feed.
WordPress's Atom comment feed (``/comments/feed/atom/``) points a threaded reply's
``thr:in-reply-to ref`` at the guid of the comment it answers; its RSS2 comment feeds say
nothing of threads.
"""

from __future__ import annotations

import re
from typing import Any

from adapters.base import Parsed
from adapters.common import FeedAdapter, generator_name, get, links, ns_get

_COMMENT_MARK = "#comment-"
_POST_GUID = re.compile(r"[?&]p=\d+")


def _split_comment(value: str | None) -> str | None:
    if value and _COMMENT_MARK in value:
        return value.split(_COMMENT_MARK, 1)[0]
    return None


class WordPressAdapter(FeedAdapter):
    name = "wordpress"

    def matches(self, parsed: Parsed) -> bool:
        if "wordpress" in generator_name(parsed).lower():
            return True
        items = get(parsed, "entries") or ()
        return any(
            get(item, "wfw_commentrss") or _POST_GUID.search(get(item, "id") or "")
            for item in items
        )

    def is_comment_feed(self, parsed: Parsed) -> bool:
        feed = get(parsed, "feed") or {}
        if any("/comments/feed" in href for href in links(feed, "self")):
            return True
        title = (get(feed, "title") or "").strip().lower()
        if title.startswith(("comments on:", "comments for ")):
            return True
        items = get(parsed, "entries") or ()
        return bool(items) and all(
            _COMMENT_MARK in (get(item, "id") or "") + (get(item, "link") or "") for item in items
        )

    def feed_info(self, parsed: Parsed) -> dict[str, Any]:
        info = super().feed_info(parsed)
        if not self.is_comment_feed(parsed) and info["site_url"]:
            info["site_comments_url"] = info["site_url"].rstrip("/") + "/comments/feed/"
        return info

    def note_parent(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        parent_id = _split_comment(get(item, "id"))
        parent_url = _split_comment(self.link(item))
        if parent_url is None:
            parent_url = self.site_url(parsed)  # a per-post feed's channel link is the post
        return parent_id, parent_url

    def note_reply_to(self, item: Any, parsed: Parsed, parent_id: str | None) -> str | None:
        reply = ns_get(item, self.thread_prefixes(parsed), "in-reply-to")
        ref = get(reply, "ref") if isinstance(reply, dict) else None
        if isinstance(ref, str) and _COMMENT_MARK in ref:
            return ref.strip()
        return None
