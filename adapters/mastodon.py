"""Mastodon account RSS (``https://instance/@user.rss``): items have no title.

The post's HTML is in ``description``; feedparser maps ``media:description`` (image alt text)
to a text/plain content block, which FeedAdapter's body choice already ignores. A title is
made from the start of the text, after the "Current mood:" line has been taken out.
"""

from __future__ import annotations

import re
from typing import Any

from adapters.base import Parsed
from adapters.common import FeedAdapter, generator_name, get
from adapters.sanitize import clean_text

_STATUS_URL = re.compile(r"https?://[^/]+/@[^/]+/\d+$")


class MastodonAdapter(FeedAdapter):
    name = "mastodon"

    def matches(self, parsed: Parsed) -> bool:
        if generator_name(parsed).lower().startswith("mastodon"):
            return True
        items = get(parsed, "entries") or ()
        return bool(items) and all(
            not get(item, "title") and _STATUS_URL.match(get(item, "link") or "") for item in items
        )

    def is_comment_feed(self, parsed: Parsed) -> bool:
        return False

    def author(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        feed = get(parsed, "feed") or {}
        return clean_text(get(feed, "title")) or None, self.site_url(parsed)
