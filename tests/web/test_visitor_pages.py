"""Visitors' planet pages answered from the cache (pbp.web.visitor_pages, issue #34 item 3):
a hit and a 304 build nothing and read nothing, keep the security headers, never cross
between a visitor and someone logged in, and a change still shows."""

from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
from flask import request_started, template_rendered

from pbp.services.noteworthy import hosted_blog, turns
from pbp.web.page_cache import PageCache
from tests.bench.test_bench_pages import count_selects
from tests.factories import make_campaign, make_characters

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def game(app, db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign)
    turns.post_event(session=db_session, campaign=campaign, text="Turn one.", actor=None, now=T0)
    db_session.commit()
    return campaign, chars


@pytest.fixture
def now(app):
    """The page cache's clock, moved by the test; visitors' version rechecked each second
    (the tests' app asks every time otherwise)."""
    app.config["PBP_PAGE_RECHECK_SECONDS"] = 1
    now = [1000.0]
    app.extensions["pbp_page_cache"] = PageCache(60, clock=lambda: now[0])
    return now


@contextmanager
def work(app, engine):
    """The templates rendered, the SELECTs sent and the requests Flask itself handled
    inside the block."""
    rendered: list[str] = []
    flask_requests: list[str] = []

    def record(_sender, template, **_extra):
        rendered.append(template.name)

    def started(_sender, **_extra):
        flask_requests.append("started")

    template_rendered.connect(record, app)
    request_started.connect(started, app)
    try:
        with count_selects(engine) as selects:
            yield rendered, selects, flask_requests
    finally:
        template_rendered.disconnect(record, app)
        request_started.disconnect(started, app)


def _entry(db_session, character, title: str):
    hosted_blog.store_entry(
        session=db_session,
        character=character,
        title=title,
        body_markdown="text",
        mood="Calm",
        now=T0 + timedelta(minutes=1),
    )
    db_session.commit()


def test_a_hit_and_a_304_render_no_template_and_read_nothing(app, engine, game, now):
    campaign, _ = game
    url = f"/c/{campaign.slug}/"
    client = app.test_client()
    first = client.get(url)
    assert first.status_code == 200 and first.headers["ETag"]
    with work(app, engine) as (rendered, selects, flask_requests):
        hit = client.get(url)
        not_modified = client.get(url, headers={"If-None-Match": first.headers["ETag"]})
    assert hit.data == first.data
    assert not_modified.status_code == 304 and not_modified.data == b""
    assert rendered == [] and selects == [] and flask_requests == []
    for answer in (hit, not_modified):
        assert answer.headers["ETag"] == first.headers["ETag"]
        assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Vary"] == "Cookie"
    assert client.get(url, headers={"If-None-Match": '"other"'}).data == first.data


def test_a_visitor_with_a_session_cookie_is_served_from_the_cache_too(app, engine, game, now):
    """Flask answers them (the cookie might be a login's): still no template, no query."""
    campaign, _ = game
    url = f"/c/{campaign.slug}/"
    client = app.test_client()
    client.get("/login")  # its form's token is kept in the session: a cookie, no login
    assert client.get_cookie(app.config["SESSION_COOKIE_NAME"]) is not None
    first = client.get(url)
    with work(app, engine) as (rendered, selects, flask_requests):
        hit = client.get(url)
        not_modified = client.get(url, headers={"If-None-Match": first.headers["ETag"]})
    assert hit.data == first.data and b"Log in" in hit.data
    assert not_modified.status_code == 304 and not_modified.data == b""
    assert rendered == [] and len(selects) <= 1 and len(flask_requests) == 2
    assert "frame-ancestors 'none'" in not_modified.headers["Content-Security-Policy"]


def test_a_change_shows_to_visitors_once_the_recheck_is_over(app, db_session, game, now):
    campaign, (ada, *_) = game
    url = f"/c/{campaign.slug}/"
    client = app.test_client()
    etag = client.get(url).headers["ETag"]
    _entry(db_session, ada, "Fresh news")
    now[0] += 0.5
    assert b"Fresh news" not in client.get(url).data  # a visitor, within the second
    now[0] += 0.6
    page = client.get(url, headers={"If-None-Match": etag})
    assert page.status_code == 200 and b"Fresh news" in page.data
    assert page.headers["ETag"] != etag
    assert client.get(url, headers={"If-None-Match": etag}).status_code == 200


def test_visitors_and_people_logged_in_never_get_each_others_page(app, auth, db_session, game, now):
    campaign, (ada, *_) = game
    url = f"/c/{campaign.slug}/"
    visitor = app.test_client()
    seen = visitor.get(url)
    assert b"Log in" in seen.data and b"Log out" not in seen.data

    member = auth.create_user()
    auth.login(member)  # the `client` fixture's
    member_client = auth._client
    mine = member_client.get(url, headers={"If-None-Match": seen.headers["ETag"]})
    assert mine.status_code == 200 and b"Log out" in mine.data and b"Log in<" not in mine.data
    assert "ETag" not in mine.headers

    again = app.test_client().get(url)
    assert again.data == seen.data and b"Log out" not in again.data


def test_a_remember_cookie_goes_through_the_login_manager(app, engine, game, now):
    """Whoever carries the remember cookie may be logged in by it: Flask answers."""
    campaign, _ = game
    url = f"/c/{campaign.slug}/"
    app.test_client().get(url)  # kept for visitors
    client = app.test_client()
    client.set_cookie("remember_token", "1|forged")  # Flask-Login's name
    with work(app, engine) as (rendered, selects, flask_requests):
        page = client.get(url)
    assert page.status_code == 200 and b"Log in" in page.data
    assert flask_requests == ["started"] and rendered == [] and len(selects) <= 1


def test_nothing_is_kept_with_the_cache_off(app, game):
    app.config["PBP_PAGE_CACHE_SECONDS"] = 0
    campaign, _ = game
    client = app.test_client()
    assert client.get(f"/c/{campaign.slug}/").status_code == 200
    assert client.get(f"/c/{campaign.slug}/").status_code == 200
    assert "pbp_page_cache" not in app.extensions
