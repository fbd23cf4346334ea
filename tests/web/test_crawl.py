"""A link crawl of everything the demo shows, as each kind of person: a visitor, a player,
the Noteworthy referee and the forum GM. Every link a page offers answers without a 404 or
a 500, and no page shows an internal identifier (the deny-list below): people read words.

The demo is seeded through `pbp.demo` into a committed scratch database (SQLite file, or a
scratch PostgreSQL database on the PostgreSQL pass), and crawled with Flask's test client.
"""

from __future__ import annotations

import re
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

from pbp import create_app, demo
from tests.helpers import post_form

# Identifiers from the code that must never reach a reader's eyes.
DENY = [
    "note_validity",
    "fate_not_allowed",
    "post_event",
    "add_character",
    "sex-and-violence",
    "one-can-have-her",
    "invalid_reason",
    "RulingKind",
    "Outcome.",
    "noteworthy_",
]
ROLES = {
    "visitor": None,
    "player": "vance@demo.invalid",
    "referee": "referee@demo.invalid",
    "gm": "gm@demo.invalid",
}
SKIP = ("/logout", "/mail/unsubscribe/")
NOT_HTML = (".atom", ".json", ".zip", ".css", ".js")
MAX_PAGES = 600


class _Page(HTMLParser):
    """The links and the visible text of one page (script and style left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.text: list[str] = []
        self.inline_styles: list[str] = []  # what a style-src 'self' policy would block
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self._hidden += 1
        if tag == "style" or any(name == "style" for name, _ in attrs):
            self.inline_styles.append(self.get_starttag_text() or tag)
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.links.append(href)

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden:
            self.text.append(data)


@pytest.fixture(scope="module")
def demo_app(tmp_path_factory, request):
    database_url = request.getfixturevalue("database_url")
    tmp = tmp_path_factory.mktemp("crawl")
    drop = None
    if database_url.startswith("sqlite"):
        url = f"sqlite:///{tmp / 'crawl.sqlite3'}"
    else:
        from tests.helpers import create_scratch_postgres

        url, drop = create_scratch_postgres(database_url)
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp / "instance",
            "SECRET_KEY": "crawl-secret-" + "x" * 32,
            "DATABASE_URL": url,
            "PBP_ALLOW_PRIVATE_FEEDS": True,
            "PBP_BASE_URL": "http://pbp.test",
            "PBP_PAGE_RECHECK_SECONDS": 0,
        }
    )
    from pbp import migrate
    from pbp.db import database

    migrate.upgrade(database(app).engine)
    feeds = demo.start_feed_server(app)
    try:
        slugs = demo.seed_all(app, feed_port=feeds.server_address[1])
    finally:
        feeds.shutdown()
        feeds.server_close()
    yield app, slugs
    database(app).engine.dispose()
    if drop:
        drop()


def _crawl(client, starts: list[str]) -> tuple[dict[str, int], dict[str, list[str]], int]:
    """Status per URL, what is wrong per URL (deny-listed words shown, inline styles, a
    policy that allows inline styles), and the links checked."""
    seen: dict[str, int] = {}
    found: dict[str, list[str]] = {}
    queue = deque(starts)
    links = 0
    while queue and len(seen) < MAX_PAGES:
        url = queue.popleft()
        if url in seen:
            continue
        response = client.get(url)
        seen[url] = response.status_code
        if response.status_code in (301, 302, 303, 307, 308):
            queue.append(urlsplit(response.headers["Location"]).path or "/")
            continue
        if url.endswith(NOT_HTML) or "html" not in response.content_type:
            continue
        page = _Page()
        page.feed(response.get_data(as_text=True))
        text = " ".join(page.text)
        bad = [word for word in DENY if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text)]
        bad += page.inline_styles
        if "style-src 'self';" not in response.headers.get("Content-Security-Policy", ""):
            bad.append("a Content-Security-Policy without style-src 'self' alone")
        if bad:
            found[url] = bad
        for href in page.links:
            target, _ = urldefrag(urljoin(url, href))
            parts = urlsplit(target)
            if parts.netloc and parts.netloc not in ("localhost", "pbp.test"):
                continue  # a player's own blog, or another site
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            if path.startswith(SKIP):
                continue
            links += 1
            if path not in seen:
                queue.append(path)
    return seen, found, links


@pytest.mark.parametrize("role", list(ROLES))
def test_every_link_answers_and_reads_as_words(demo_app, role):
    app, slugs = demo_app
    client = app.test_client()
    if ROLES[role]:
        answer = post_form(client, "/login", {"email": ROLES[role], "password": demo.PASSWORD})
        assert answer.status_code == 302
    starts = ["/", *(f"/c/{slug}/" for slug in slugs)]
    seen, found, links = _crawl(client, starts)
    broken = {url: status for url, status in seen.items() if status in (404, 500)}
    assert not broken, f"{role}: broken links {broken}"
    assert not found, f"{role}: internal identifiers or inline styles shown {found}"
    print(f"\n{role}: {len(seen)} pages crawled, {links} links checked")
    assert len(seen) > 20
