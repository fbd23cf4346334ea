"""Every shown time carries its zone (issue #15, item 6): the demo's pages, crawled as its
referee, its forum GM and a player, show no time without a zone, and every <time> on a
campaign's page is in the campaign's zone (the reader's own is added by static/times.js)."""

from __future__ import annotations

import re
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from sqlmodel import Session, select

from pbp import demo
from pbp.db import database
from pbp.models import Campaign
from tests.helpers import post_form
from tests.web import test_crawl

demo_app = test_crawl.demo_app  # the seeded demo, in a scratch database of this module's own

ZONE = "America/New_York"  # not UTC: a page that ignores the campaign's zone shows
ZONE_NAMES = ("EST", "EDT")
# A clock time, and what must follow it: a zone abbreviation or a UTC offset.
CLOCK = re.compile(r"(?<![\d:+-])\d{2}:\d{2}(?::\d{2})?(?![\d:])")
ZONED = re.compile(r"\s?(?:[A-Z]{2,5}\b|[+-]\d{2}(?::?\d{2})?|Z\b)")
ROLES = ("referee@demo.invalid", "gm@demo.invalid", "vance@demo.invalid")
MAX_PAGES = 150


class _Times(HTMLParser):
    """Links, the visible text, and each <time> element's text and class."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.text: list[str] = []
        self.times: list[tuple[str, str]] = []
        self._time: list[str] | None = None
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "style", "textarea"):
            self._hidden += 1
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "time":
            self._time = [attrs.get("class") or ""]

    def handle_endtag(self, tag):
        if tag in ("script", "style", "textarea") and self._hidden:
            self._hidden -= 1
        if tag == "time" and self._time is not None:
            self.times.append((self._time[0], "".join(self._time[1:]).strip()))
            self._time = None

    def handle_data(self, data):
        if self._hidden:
            return
        self.text.append(data)
        if self._time is not None:
            self._time.append(data)


def unzoned(text: str) -> list[str]:
    """Each clock time in `text` with no zone after it, with a little context."""
    return [
        text[max(0, m.start() - 30) : m.end() + 10]
        for m in CLOCK.finditer(text)
        if not ZONED.match(text, m.end())
    ]


def _pages(client, starts: list[str]):
    seen: set[str] = set()
    queue = deque(starts)
    while queue and len(seen) < MAX_PAGES:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        if response.status_code != 200 or "html" not in response.content_type:
            continue
        page = _Times()
        page.feed(response.get_data(as_text=True))
        yield url, page
        for href in page.links:
            target, _ = urldefrag(urljoin(url, href))
            parts = urlsplit(target)
            if parts.netloc and parts.netloc not in ("localhost", "pbp.test"):
                continue
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            if path.startswith(test_crawl.SKIP) or path.endswith(test_crawl.NOT_HTML):
                continue
            if path not in seen:
                queue.append(path)


@pytest.fixture(scope="module")
def zoned_demo(demo_app):
    app, slugs = demo_app
    with Session(database(app).engine) as session:
        for campaign in session.exec(select(Campaign)):
            campaign.time_zone = ZONE
            session.add(campaign)
        session.commit()
    return app, slugs


@pytest.mark.parametrize("email", ROLES)
def test_every_shown_time_carries_its_zone(zoned_demo, email):
    app, slugs = zoned_demo
    client = app.test_client()
    answer = post_form(client, "/login", {"email": email, "password": demo.PASSWORD})
    assert answer.status_code == 302
    starts = ["/", "/account/tokens/", *(f"/c/{slug}/" for slug in slugs)]
    missing: dict[str, list[str]] = {}
    wrong_zone: dict[str, list[str]] = {}
    times = 0
    for url, page in _pages(client, starts):
        bare = unzoned(" ".join(page.text))
        if bare:
            missing[url] = bare
        for cls, text in page.times:
            times += 1
            if not unzoned(text) and not CLOCK.search(text):
                missing.setdefault(url, []).append(f"<time> {text!r}")
            on_campaign = url.startswith("/c/")
            if on_campaign and "local" not in cls and not text.endswith(ZONE_NAMES):
                wrong_zone.setdefault(url, []).append(text)
    assert not missing, f"times without a zone: {missing}"
    assert not wrong_zone, f"times not in the campaign's zone: {wrong_zone}"
    assert times > 10  # the crawl reached pages that show times


def test_the_check_finds_a_time_without_a_zone():
    assert unzoned("posted 2026-12-01 19:00 by Ada") == ["posted 2026-12-01 19:00 by Ada"]
    assert unzoned("2026-12-01 19:00 CET · 2026-12-01T18:00:00+00:00 · 18:00:05 UTC") == []
