"""Every GET route of an application, filled with the values a test world gives its
arguments: secrecy tests search each one, so a new route is searched without editing them."""

from __future__ import annotations

import itertools

from sqlmodel import select

from pbp.models import SavedDraft
from pbp.models.forum import Post, Roll, Thread
from pbp.services.saved_drafts import key_of


def forum_values(db_session, table) -> dict[str, list]:
    """The argument values of a forum campaign's table (tests/services/test_forum_fixtures)."""
    return {
        "slug": [table.campaign.slug],
        "thread_id": [t.id for t in db_session.exec(select(Thread))],
        "post_id": [p.id for p in db_session.exec(select(Post))],
        "roll_id": [r.id for r in db_session.exec(select(Roll))],
        "character": [c.slug for c in (table.ada, table.bram, table.cleo)],
        # Every saved draft's address (issue #29 item 5): each reader asks for each one.
        "key": sorted({key_of(d.form, d.target_id) for d in db_session.exec(select(SavedDraft))})
        or ["scene"],
    }


def every_get_url(app, values: dict[str, list]) -> list[str]:
    """One URL per GET route and combination of `values`; routes with an argument that has
    no value here (a blog entry, a turn, a token: a forum campaign has none) are left out."""
    urls = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if "GET" not in rule.methods or rule.endpoint == "static":
                continue
            names = sorted(rule.arguments)
            if any(n not in values for n in names):
                continue
            for combo in itertools.product(*(values[n] for n in names)):
                urls.append(app.url_for(rule.endpoint, **dict(zip(names, combo, strict=True))))
    return urls


def search_urls(app, slug: str, words) -> list[str]:
    """One URL per search route (the page, the API: any GET route whose endpoint is a
    search) and word: the secrecy tests search for every marker they plant (issue #33)."""
    from urllib.parse import urlencode

    urls = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if "GET" not in rule.methods or "search" not in rule.endpoint:
                continue
            if set(rule.arguments) != {"slug"}:
                continue
            base = app.url_for(rule.endpoint, slug=slug)
            urls.extend(f"{base}?{urlencode({'q': word})}" for word in words)
    return urls


def lists_icons(url: str) -> bool:
    """A character's own icon list (the API's, public like the character; the player's page
    shows their own): the one place an icon's alt text and keyword show without the text
    that uses it, so the secrecy tests look for a secret icon everywhere else."""
    return url.endswith("/icons") or "/icons?" in url


def hit_count(page) -> int:
    """How many hits a search answered: the API's items, the page's `data-hits`."""
    import re

    if page.is_json:
        return len(page.get_json()["items"])
    found = re.search(r'data-hits="(\d+)"', page.get_data(as_text=True))
    assert found, "a search page with words shows its results"
    return int(found.group(1))
