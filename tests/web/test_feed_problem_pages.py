"""Feed errors in plain words (issue #15, item 6): the referee's roster and the player's own
blog page say what is wrong in a sentence, the library's text behind a Details toggle."""

from __future__ import annotations

import re

import pytest

from pbp.models import User
from pbp.services.noteworthy import blog_settings
from pbp.services.noteworthy.feed_problems import feed_problem
from pbp.web import player

UNREACHABLE = (
    "Could not connect to the server: HTTPConnectionPool(host='blog.example', port=80): "
    "Max retries exceeded with url: /feed (Caused by NewConnectionError('<x>: Failed'))"
)
TOO_LARGE = "The feed is larger than 5 MiB; refused."
NOT_FOUND = "The server answered HTTP 404; retrying with back-off."


@pytest.fixture
def app(app):
    if "player" not in app.blueprints:
        app.register_blueprint(player.bp)
    return app


def _failing(db_session, character, error: str, *, gone: bool = False):
    row = blog_settings.blog_of(session=db_session, character=character)
    row.kind, row.feed_url = "external", "https://blog.example/feed"
    row.last_error, row.failure_count, row.gone = error, 3, gone
    db_session.add(row)
    db_session.commit()
    return row


def _details(html: str) -> list[str]:
    return re.findall(r"<details[^>]*><summary>Details</summary><pre>(.*?)</pre></details>", html)


def test_the_roster_says_what_is_wrong_in_words_with_the_details_behind_a_toggle(
    client, auth, game, db_session
):
    campaign, referee, (ada, bram, cleo, *_) = game
    _failing(db_session, ada, UNREACHABLE)
    _failing(db_session, bram, TOO_LARGE)
    _failing(db_session, cleo, "The feed is gone (HTTP 410): deleted.", gone=True)
    auth.login(referee)
    html = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert "The blog&#39;s server did not answer." in html
    assert "The feed is larger than pbp accepts (5 MiB)." in html
    assert "The blog is gone" in html
    shown = _details(html)
    assert any("Max retries exceeded" in d for d in shown) and len(shown) == 3
    # the library's text appears only inside the toggle
    assert html.count("Max retries exceeded") == 1


def test_the_players_page_says_what_is_wrong_in_words(client, auth, game, db_session):
    campaign, _, (ada, *_) = game
    _failing(db_session, ada, NOT_FOUND)
    auth.login(db_session.get(User, ada.user_id))
    html = client.get(f"/c/{campaign.slug}/me/blog").get_data(as_text=True)
    assert "The blog&#39;s server has nothing at this address (HTTP 404)." in html
    assert _details(html) == [NOT_FOUND]


@pytest.mark.parametrize(
    ("error", "plain"),
    [
        ("This address serves a web page, not a feed. Give …", "The address is not a feed."),
        ("The server did not answer within 15 s.", "did not answer in time"),
        ("The server answered HTTP 503; retrying with back-off.", "an error (HTTP 503)"),
        ("poll record not saved: database is locked", "could not store it"),
    ],
)
def test_each_kind_has_its_sentence(game, db_session, error, plain):
    _, _, (ada, *_) = game
    problem = feed_problem(_failing(db_session, ada, error))
    assert plain in problem.plain and problem.details == error


def test_a_feed_that_reads_has_no_problem(game, db_session):
    _, _, (ada, *_) = game
    assert feed_problem(blog_settings.blog_of(session=db_session, character=ada)) is None
