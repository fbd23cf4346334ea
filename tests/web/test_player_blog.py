"""A player chooses where their character blogs: built-in, or their own blog found by
autodiscovery on a real loopback server, with the SSRF rules and CSRF on."""

import html
from datetime import UTC, datetime

import pytest
from sqlmodel import select

from pbp.models import AuditLog, Blog, User
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import blog_settings
from pbp.web import player
from tests.factories import make_campaign, make_characters
from tests.feedserver import FeedServer
from tests.helpers import PASSWORD

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
HOME = b"""<!doctype html><html><head><title>Ada's journal</title>
<link rel="alternate" type="application/rss+xml" title="Comments" href="/comments/feed/">
<link rel="alternate" type="application/rss+xml" title="Ada's journal" href="/feed/">
</head><body><h1>Ada's journal</h1></body></html>"""
FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Ada's journal</title><link>{base}/</link>
<description>d</description>
<item><title>Arrival</title><link>{base}/arrival/</link><guid>{base}/arrival/</guid>
<pubDate>Sat, 01 Aug 2026 08:00:00 +0000</pubDate><description>Hello.</description></item>
</channel></rss>"""


@pytest.fixture
def app(app):
    if "player" not in app.blueprints:
        app.register_blueprint(player.bp)
    app.config["PBP_CLOCK"] = lambda: T0
    app.config["PBP_FETCH_READ_TIMEOUT"] = 2
    app.config["PBP_FETCH_CONNECT_TIMEOUT"] = 1
    return app


@pytest.fixture
def server():
    with FeedServer("127.0.0.1") as srv:
        srv.add("/", body=HOME, content_type="text/html; charset=utf-8")
        srv.add("/feed/", body=FEED.replace(b"{base}", srv.base_url.encode()))
        srv.add("/comments/feed/", body=FEED.replace(b"{base}", srv.base_url.encode()))
        yield srv


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session)
    chars = make_characters(db_session, campaign, names=("Ada", "Bram"))
    for character in chars:
        db_session.get(User, character.user_id).password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    return campaign, chars


def login_as(auth, db_session, character):
    auth.login(db_session.get(User, character.user_id))


def blog_row(db_session, character) -> Blog:
    db_session.expire_all()
    return blog_settings.blog_of(session=db_session, character=character)


def url_of(campaign):
    return f"/c/{campaign.slug}/me/blog"


def test_home_page_is_discovered_and_stored_with_a_fresh_poll_state(
    client, auth, game, db_session, server
):
    campaign, (ada, _) = game
    stale = blog_row(db_session, ada)
    stale.etag, stale.failure_count, stale.last_error, stale.next_poll_at = '"x"', 3, "old", T0
    db_session.add(stale)
    db_session.commit()
    login_as(auth, db_session, ada)
    page = client.get(url_of(campaign))
    assert page.status_code == 200 and b"the built-in blog" in page.data
    saved = auth.post(url_of(campaign), {"kind": "external", "url": server.url("/")})
    assert saved.status_code == 302, saved.get_data(as_text=True)
    row = blog_row(db_session, ada)
    assert (row.kind, row.feed_url, row.home_url) == (
        "external",
        server.url("/feed/"),  # the main feed, not the comments feed declared first
        server.url("/"),
    )
    assert (row.etag, row.failure_count, row.last_error, row.next_poll_at) == (None, 0, None, None)
    assert server.count("/feed/") == 1  # read once to prove it is a feed
    shown = client.get(url_of(campaign)).get_data(as_text=True)
    assert "pbp reads it within a few minutes" in shown and server.url("/feed/") in shown
    audit = db_session.exec(select(AuditLog).where(AuditLog.action == "blog_changed")).one()
    assert audit.detail["to"] == {"kind": "external", "feed_url": server.url("/feed/")}


def test_a_feed_address_is_stored_as_is_and_the_player_can_switch_back(
    client, auth, game, db_session, server
):
    campaign, (ada, _) = game
    login_as(auth, db_session, ada)
    auth.post(url_of(campaign), {"kind": "external", "url": server.url("/feed/")})
    row = blog_row(db_session, ada)
    assert (row.kind, row.feed_url, row.home_url) == ("external", server.url("/feed/"), None)
    assert auth.post(url_of(campaign), {"kind": "builtin", "url": ""}).status_code == 302
    row = blog_row(db_session, ada)
    assert (row.kind, row.feed_url, row.home_url) == ("builtin", None, None)


def test_private_address_is_refused_with_the_reason_when_private_feeds_are_off(
    app, client, auth, game, db_session, server
):
    app.config["PBP_ALLOW_PRIVATE_FEEDS"] = False
    campaign, (ada, _) = game
    login_as(auth, db_session, ada)
    refused = auth.post(url_of(campaign), {"kind": "external", "url": server.url("/")})
    assert refused.status_code == 422
    text = refused.get_data(as_text=True)
    assert "Feeds on loopback addresses are not allowed (127.0.0.1)" in text
    assert server.total_requests == 0  # refused before any request was made
    assert blog_row(db_session, ada).kind == "builtin"
    metadata = auth.post(url_of(campaign), {"kind": "external", "url": "http://169.254.169.254/"})
    assert "link-local addresses are not allowed" in metadata.get_data(as_text=True)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/nothing-here", "answered HTTP 404"),
        ("/plain", "No feed was found at"),
        ("/broken-link", "names a feed, but it cannot be read"),
    ],
)
def test_unreachable_and_feedless_addresses_are_refused_with_the_reason(
    client, auth, game, db_session, path, message
):
    with FeedServer("127.0.0.1") as server:  # no feed at any of the usual addresses
        _refused_with(client, auth, game, db_session, server, path, message)


def _refused_with(client, auth, game, db_session, server, path, message):
    server.add("/plain", body=b"<html><body>no feed</body></html>", content_type="text/html")
    server.add(
        "/broken-link",
        body=b'<html><head><link rel="alternate" type="application/rss+xml" href="/gone.xml">',
        content_type="text/html",
    )
    campaign, (ada, _) = game
    login_as(auth, db_session, ada)
    refused = auth.post(url_of(campaign), {"kind": "external", "url": server.url(path)})
    assert refused.status_code == 422
    assert message in refused.get_data(as_text=True)
    assert blog_row(db_session, ada).kind == "builtin"


def test_another_player_cannot_change_my_blog(client, auth, game, db_session, server):
    campaign, (ada, bram) = game
    login_as(auth, db_session, bram)
    form = {"kind": "external", "url": server.url("/"), "character_id": str(ada.id)}
    assert auth.post(url_of(campaign), form).status_code == 403
    assert blog_row(db_session, ada).kind == "builtin"
    assert server.total_requests == 0
    auth.logout()
    stranger = auth.create_user()
    auth.login(stranger)
    assert client.get(url_of(campaign)).status_code == 403
    assert auth.post(url_of(campaign), {"kind": "builtin"}).status_code == 403


def test_two_characters_cannot_share_one_feed(client, auth, game, db_session, server):
    campaign, (ada, bram) = game
    login_as(auth, db_session, ada)
    auth.post(url_of(campaign), {"kind": "external", "url": server.url("/")})
    auth.logout()
    login_as(auth, db_session, bram)
    refused = auth.post(url_of(campaign), {"kind": "external", "url": server.url("/feed/")})
    assert refused.status_code == 409
    assert "already Ada's blog" in html.unescape(refused.get_data(as_text=True))


def test_missing_csrf_token_is_refused(client, auth, game, db_session, server):
    campaign, (ada, _) = game
    login_as(auth, db_session, ada)
    refused = client.post(url_of(campaign), data={"kind": "external", "url": server.url("/")})
    assert refused.status_code == 400
    assert "this form could not be accepted" in refused.get_data(as_text=True)
    assert blog_row(db_session, ada).kind == "builtin"
    assert server.total_requests == 0


def test_a_visitor_is_sent_to_log_in(client, game):
    campaign, _ = game
    page = client.get(url_of(campaign))
    assert page.status_code == 302 and "/login" in page.headers["Location"]


def test_an_address_without_a_scheme_means_https():
    assert (
        blog_settings.normalize_address("  ada.example/journal ") == "https://ada.example/journal"
    )
    assert blog_settings.normalize_address("http://ada.example/") == "http://ada.example/"
