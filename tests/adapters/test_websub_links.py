"""The WebSub hub and topic a feed names (WebSub 4: `rel="hub"`, `rel="self"`), in each
syntax pbp reads; pbp.services.websub subscribes to them."""

from __future__ import annotations

import json

from adapters import parse_feed

HUB = "https://hub.example/"
SELF = "https://blog.example/feed/"

ATOM = f"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<id>urn:x</id><updated>2024-01-01T00:00:00Z</updated>
<link rel="hub" href="{HUB}"/><link rel="self" href="{SELF}"/>
<entry><id>urn:1</id><title>e</title><updated>2024-01-01T00:00:00Z</updated></entry></feed>"""

RSS = f"""<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel><title>t</title><link>https://blog.example/</link><description>d</description>
<atom:link rel="hub" href="{HUB}"/><atom:link rel="self" href="{SELF}"/>
<item><title>e</title><guid>urn:1</guid></item></channel></rss>"""

JSON_FEED = {
    "version": "https://jsonfeed.org/version/1.1",
    "title": "t",
    "feed_url": SELF,
    "hubs": [{"type": "rssCloud", "url": "https://cloud.example/"}, {"type": "WebSub", "url": HUB}],
    "items": [{"id": "1", "content_text": "e"}],
}


def test_atom_rss_and_json_feed_name_their_hub_and_topic() -> None:
    documents = {
        "atom": (ATOM.encode(), "application/atom+xml"),
        "rss": (RSS.encode(), "application/rss+xml"),
        "json": (json.dumps(JSON_FEED).encode(), "application/feed+json"),
    }
    for name, (body, content_type) in documents.items():
        parsed = parse_feed(body, {"content-type": content_type})
        assert (parsed.hub_url, parsed.self_url) == (HUB, SELF), name


def test_a_feed_without_a_hub_names_none() -> None:
    plain = ATOM.replace(f'<link rel="hub" href="{HUB}"/>', "")
    assert parse_feed(plain.encode(), {"content-type": "application/atom+xml"}).hub_url is None


def test_a_hub_link_that_is_not_http_is_ignored() -> None:
    hostile = ATOM.replace(HUB, "javascript:alert(1)")
    assert parse_feed(hostile.encode(), {"content-type": "application/atom+xml"}).hub_url is None
