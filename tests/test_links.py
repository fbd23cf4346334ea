"""Every link pbp.links builds is a route of the app, and the route it was meant for.

Mail, feeds and the archive are read outside the site, long after they were written: a
link that no route answers is a 404 in someone's inbox, and no page test would see it.
Each function of pbp.links is listed below with sample values and the endpoint it must
reach; a function missing from the list fails the test, so a new link is checked too.
"""

from __future__ import annotations

import ast
import inspect

import pytest
from werkzeug.routing import RequestRedirect

from pbp import ROOT, create_app, links

BASE = "https://pbp.example/play"
# function name -> (sample arguments, the endpoint, the route's arguments it must carry)
CASES = {
    "campaign": (("saga",), "public.campaign", {"slug": "saga"}),
    "turns": (("saga",), "turns.index", {"slug": "saga"}),
    "turn": (("saga", 3), "turns.page", {"slug": "saga", "number": 3}),
    "write": (("saga",), "blog.write", {"slug": "saga"}),
    "character": (("saga", "ada"), "blog.character_page", {"slug": "saga", "character": "ada"}),
    "entry": (
        ("saga", "ada", 12),
        "blog.entry",
        {"slug": "saga", "character": "ada", "entry_id": 12},
    ),
    "note": (
        ("saga", "ada", 12, 40),
        "blog.entry",
        {"slug": "saga", "character": "ada", "entry_id": 12},
    ),
    "referee_board": (("saga",), "referee.board", {"slug": "saga"}),
    "activity": (("saga",), "activity.page", {"slug": "saga"}),
    "away": (("saga",), "activity.away_page", {"slug": "saga"}),
    "sheet": (("saga", "ada"), "forum.sheet", {"slug": "saga", "character": "ada"}),
    "mail_preferences": (("saga",), "mail.preferences", {"slug": "saga"}),
    "forum": (("saga",), "forum.index", {"slug": "saga"}),
    "thread": (("saga", 7), "forum.thread", {"slug": "saga", "thread_id": 7}),
    "post": (("saga", 7, 99), "forum.thread", {"slug": "saga", "thread_id": 7}),
    "card_table": (("saga", 7), "cards.table", {"slug": "saga", "thread_id": 7}),
    "campaign_feed": (("saga",), "feeds.campaign_feed", {"slug": "saga"}),
    "events_feed": (("saga",), "feeds.events_feed", {"slug": "saga"}),
    "blog_feed": (("saga", "ada"), "feeds.blog_feed", {"slug": "saga", "character": "ada"}),
    "notes_feed": (("saga", "ada"), "feeds.notes_feed", {"slug": "saga", "character": "ada"}),
    "forum_feed": (("saga",), "forum.feed", {"slug": "saga"}),
    "calendar_feed": (("Ab3-_x",), "calendar.feed", {"secret": "Ab3-_x"}),
    "calendar_page": ((), "calendar.page", {}),
    "login": ((), "auth.login", {}),
    "reset_request": ((), "auth.reset_request", {}),
    "invite": (("eyJhIjoxfQ.sig-_",), "auth.invite", {"token": "eyJhIjoxfQ.sig-_"}),
    "password_reset": (("eyJhIjoxfQ.sig-_",), "auth.reset", {"token": "eyJhIjoxfQ.sig-_"}),
    "signup_confirmation": (
        ("eyJhIjoxfQ.sig-_",),
        "signup.confirm",
        {"token": "eyJhIjoxfQ.sig-_"},
    ),
    "unsubscribe": (
        ("eyJhIjoxfQ.sig-_",),
        "mail.unsubscribe_confirm",
        {"token": "eyJhIjoxfQ.sig-_"},
    ),
}
HELPERS = {"absolute"}


@pytest.fixture(scope="module")
def url_map(tmp_path_factory):
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "links-test-" + "x" * 32,
            "DATABASE_URL": "sqlite://",
            "INSTANCE_PATH": str(tmp_path_factory.mktemp("instance")),
        }
    )
    return app.url_map.bind("pbp.example")


def _link_functions() -> set[str]:
    return {
        name
        for name, value in vars(links).items()
        if inspect.isfunction(value)
        and not name.startswith("_")
        and value.__module__ == links.__name__
    }


def test_every_link_function_is_checked_against_the_routes():
    assert _link_functions() - HELPERS == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_link_is_the_route_it_means(url_map, name):
    args, endpoint, values = CASES[name]
    path = getattr(links, name)(*args)
    assert path.startswith("/")
    route, _fragment = path.split("#", 1) if "#" in path else (path, "")
    try:
        matched, arguments = url_map.match(route, method="GET")
    except RequestRedirect as redirect:  # a missing trailing slash still costs a redirect
        pytest.fail(f"{name}: {path} is answered by a redirect to {redirect.new_url}")
    assert (matched, arguments) == (endpoint, values)


def test_fragments_point_at_the_anchor_the_page_writes():
    assert links.note("saga", "ada", 12, 40).endswith("/12#note-40")
    assert links.post("saga", 7, 99).endswith("/7#post-99")


def test_a_segment_cannot_step_into_another_route(url_map):
    """A slash in a value stays inside its segment: the route is still the entry page."""
    path = links.entry("saga", "ada/../x", 12)
    assert url_map.match(path, method="GET")[0] == "blog.entry"


def test_absolute_joins_the_site_address_once():
    assert links.absolute(BASE, links.turn("saga", 3)) == BASE + "/c/saga/turns/3"
    assert links.absolute(BASE + "/", links.turn("saga", 3)) == BASE + "/c/saga/turns/3"


ROUTE_PREFIXES = ("/c/", "/invite/", "/reset/", "/signup/confirm/", "/mail/unsubscribe/")


def _built_paths(root) -> list[str]:
    """f-strings under `root` that spell a route of the app ("/c/{slug}/...")."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.JoinedStr):
                continue
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if any(prefix in text for prefix in ROUTE_PREFIXES):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_services_and_the_scheduler_build_no_link_of_their_own():
    """Mail, feeds and exports are built in services and the scheduler: their links must
    come from pbp.links, the module this file checks against the routes."""
    assert _built_paths(ROOT / "pbp" / "services") + _built_paths(ROOT / "scheduler") == []


def test_the_scan_would_catch_a_link_built_by_hand(tmp_path):
    (tmp_path / "mod.py").write_text('def url(s):\n    return f"https://x/c/{s}/turns/1"\n')
    assert _built_paths(tmp_path) == ["mod.py:2"]
