"""JSON Feed 1.0/1.1 (https://jsonfeed.org/version/1.1), which feedparser 6 does not read.

Autodiscovery finds ``application/feed+json`` links, so we read them too, by reshaping the JSON
into the dict layout feedparser produces; the generic adapter then handles it like any feed.
Nothing in it is trusted: all text still goes through adapters.sanitize.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from feedparser import FeedParserDict

from adapters.errors import NotAFeed


def looks_like_json(body: bytes, content_type: str) -> bool:
    if "json" in content_type.lower():
        return True
    return body.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


def _date(value: Any) -> time.struct_time | None:
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.astimezone(UTC).timetuple()


def _author(data: dict[str, Any]) -> FeedParserDict | None:
    authors = data.get("authors") or [data.get("author")]  # "author" is JSON Feed 1.0
    for author in authors if isinstance(authors, list) else ():
        if isinstance(author, dict) and (author.get("name") or author.get("url")):
            return FeedParserDict(name=author.get("name"), href=author.get("url"))
    return None


def _item(data: dict[str, Any]) -> FeedParserDict:
    item = FeedParserDict()
    if data.get("id") is not None:
        item["id"] = str(data["id"])
    if isinstance(data.get("url"), str):
        item["link"] = data["url"]
    if isinstance(data.get("title"), str):
        item["title"] = data["title"]
        item["title_detail"] = FeedParserDict(type="text/plain", value=data["title"])
    content = []
    if isinstance(data.get("content_html"), str):
        content.append(FeedParserDict(type="text/html", value=data["content_html"]))
    if isinstance(data.get("content_text"), str):
        content.append(FeedParserDict(type="text/plain", value=data["content_text"]))
    if content:
        item["content"] = content
    if isinstance(data.get("summary"), str):
        item["summary"] = data["summary"]
        item["summary_detail"] = FeedParserDict(type="text/plain", value=data["summary"])
    dates = (("date_published", "published_parsed"), ("date_modified", "updated_parsed"))
    for key, target in dates:
        parsed = _date(data.get(key))
        if parsed:
            item[target] = parsed
    author = _author(data)
    if author:
        item["author_detail"] = author
    tags = data.get("tags")
    if isinstance(tags, list):
        item["tags"] = [FeedParserDict(term=str(t)) for t in tags]
    return item


def parse_json_feed(body: bytes) -> FeedParserDict:
    """Parse JSON Feed bytes into a feedparser-shaped result (raises NotAFeed)."""
    try:
        data = json.loads(body.decode("utf-8-sig", errors="replace"))
    except (ValueError, RecursionError) as exc:
        raise NotAFeed(f"This address serves broken JSON, not a feed ({exc}).") from None
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str) or "jsonfeed.org" not in version:
        raise NotAFeed("This address serves JSON, but not a JSON Feed.")
    feed = FeedParserDict()
    if isinstance(data.get("title"), str):
        feed["title"] = data["title"]
    if isinstance(data.get("home_page_url"), str):
        feed["link"] = data["home_page_url"]
    author = _author(data)
    if author:
        feed["author_detail"] = author
    links = []
    if isinstance(data.get("next_url"), str):
        links.append(FeedParserDict(rel="next", href=data["next_url"]))
    if isinstance(data.get("feed_url"), str):
        links.append(FeedParserDict(rel="self", href=data["feed_url"]))
    hubs = data.get("hubs") if isinstance(data.get("hubs"), list) else []
    # JSON Feed 1.1 `hubs`: the WebSub hub that pushes this feed (pbp.services.websub).
    links += [
        FeedParserDict(rel="hub", href=hub["url"])
        for hub in hubs
        if isinstance(hub, dict)
        and isinstance(hub.get("url"), str)
        and str(hub.get("type", "")).lower() == "websub"
    ]
    if links:
        feed["links"] = links
    items = data.get("items")
    entries = [_item(i) for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    return FeedParserDict(
        bozo=False, version="json1", feed=feed, entries=entries, namespaces={}, headers={}
    )
