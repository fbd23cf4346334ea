"""Blogger Atom: ``link rel="replies"`` comment feeds, ``thr:total`` counts, comments that
point at their post with ``thr:in-reply-to ref=…`` (RFC 4685), and ``rel="next"`` paging.
A threaded reply also carries ``link rel="related"`` to the comment it answers
(``…/feeds/BLOG/POST/comments/default/COMMENT``), whose own id is
``tag:blogger.com,1999:blog-BLOG.post-COMMENT``.

All of this is standard Atom threading, handled by FeedAdapter; this class only recognises
Blogger and prefers the Atom comment feed over the HTML "replies" link.
"""

from __future__ import annotations

import re
from typing import Any

from adapters.base import Parsed
from adapters.common import FeedAdapter, first, generator_name, get, links, safe_url

_PARENT_COMMENT = re.compile(r"/feeds/(\d+)/\d+/comments/default/(\d+)/?$")


class BloggerAdapter(FeedAdapter):
    name = "blogger"

    def matches(self, parsed: Parsed) -> bool:
        feed = get(parsed, "feed") or {}
        return "blogger" in generator_name(parsed).lower() or str(get(feed, "id") or "").startswith(
            "tag:blogger.com"
        )

    def is_comment_feed(self, parsed: Parsed) -> bool:
        feed_id = str(get(get(parsed, "feed") or {}, "id") or "")
        return feed_id.endswith("..comments") or super().is_comment_feed(parsed)

    def comment_feed_url(self, item: Any, parsed: Parsed) -> str | None:
        return safe_url(first(links(item, "replies", "atom")))

    def note_reply_to(self, item: Any, parsed: Parsed, parent_id: str | None) -> str | None:
        for href in links(item, "related"):
            found = _PARENT_COMMENT.search(href)
            if found:
                return f"tag:blogger.com,1999:blog-{found.group(1)}.post-{found.group(2)}"
        return None
