"""The history page (members), the JSON export and the archive (the referee): who may see
what, what the downloads look like, and queries that do not grow with the campaign."""

from __future__ import annotations

import json
import re

import pytest

from pbp.models import User
from pbp.services.accounts import logins as accounts
from pbp.web import history
from tests.factories import make_campaign
from tests.services.noteworthy.test_history import count_selects, grow, play_campaign
from tests.services.test_export import broken_links, read_zip

PAGES = ("history", "export.json", "archive.zip")


@pytest.fixture
def app(app):
    # Until create_app registers the blueprint itself; harmless after that.
    if "history" not in app.blueprints:
        app.register_blueprint(history.bp)
    return app


@pytest.fixture
def referee(auth):
    return auth.create_user(display_name="The Referee")


@pytest.fixture
def game(db_session, referee):
    game = play_campaign(db_session, referee=referee)
    db_session.commit()
    return game


@pytest.fixture
def player(db_session, game, auth):
    """Dov's player, with a password to log in with."""
    user = db_session.get(User, game.chars["dov"].user_id)
    user.password_hash = accounts.hash_password(auth.password)
    db_session.add(user)
    db_session.commit()
    return user


def url(game, page: str) -> str:
    return f"/c/{game.campaign.slug}/{page}"


@pytest.mark.parametrize("page", PAGES)
def test_visitors_are_sent_to_log_in(client, game, page):
    response = client.get(url(game, page))
    assert response.status_code == 302
    assert "/login" in response.headers["Location"]


@pytest.mark.parametrize("page", PAGES)
def test_strangers_get_403_everywhere(client, auth, game, page):
    auth.login(auth.create_user())
    response = client.get(url(game, page))
    assert response.status_code == 403
    assert "only a member" in response.get_data(as_text=True) or "only the referee" in (
        response.get_data(as_text=True)
    )


@pytest.mark.parametrize("page", ["export.json", "archive.zip"])
def test_players_get_403_on_the_referees_downloads(client, auth, game, player, page):
    auth.login(player)
    response = client.get(url(game, page))
    assert response.status_code == 403
    assert "only the referee" in response.get_data(as_text=True)


def test_players_see_the_history_without_download_links(client, auth, game, player):
    auth.login(player)
    response = client.get(url(game, "history"))
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "every member of The Long Night" in page and "the referee's alone" in page
    assert "export.json" not in page and "archive.zip" not in page
    assert '<svg xmlns="http://www.w3.org/2000/svg" role="img"' in page
    assert '<th scope="row">Bram</th><td class="status-outsider">outsider</td>' in page
    assert "Ada won (2 for, 1 against)" in page
    assert "<strong>Cleo</strong> challenged" in page and "Ada held" in page


def test_history_page_escapes_hostile_names_and_consequences(client, auth, game, player):
    auth.login(player)
    page = client.get(url(game, "history")).get_data(as_text=True)
    # The only scripts are pbp's own files (no inline script: the CSP forbids it).
    scripts = re.findall(r"<script[^>]*>", page, flags=re.IGNORECASE)
    assert all(re.fullmatch(r'<script src="/static/[\w-]+\.js" defer>', s) for s in scripts)
    assert "&lt;script&gt;alert(" in page
    assert "Bram is exiled &lt;b&gt;forever&lt;/b&gt;." in page


def test_a_campaign_without_turns_has_an_empty_history(client, auth, db_session, referee):
    campaign = make_campaign(db_session, name="Not Yet", referee=referee)
    db_session.commit()
    auth.login(referee)
    page = client.get(f"/c/{campaign.slug}/history").get_data(as_text=True)
    assert "No turns yet: the history starts with the referee" in page
    assert "No turns have been played yet." in page  # the chart's description


def test_unknown_campaign_is_404(client, auth, referee):
    auth.login(referee)
    assert client.get("/c/no-such-game/history").status_code == 404


def test_referee_downloads_the_json_export(client, auth, game, referee):
    auth.login(referee)
    page = client.get(url(game, "history")).get_data(as_text=True)
    assert f'href="/c/{game.campaign.slug}/export.json"' in page
    response = client.get(url(game, "export.json"))
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    disposition = response.headers["Content-Disposition"]
    assert disposition == f'attachment; filename="{game.campaign.slug}.json"'
    assert response.headers["Cache-Control"] == "private, no-store"
    data = json.loads(response.data)
    assert data["campaign"]["name"] == "The Long Night" and len(data["turns"]) == 3
    assert any(e["character_id"] for e in data["events"])  # tailored events are included


def test_referee_downloads_an_archive_whose_links_resolve(client, auth, game, referee):
    auth.login(referee)
    response = client.get(url(game, "archive.zip"))
    assert response.status_code == 200
    assert response.mimetype == "application/zip"
    disposition = response.headers["Content-Disposition"]
    assert disposition == f'attachment; filename="{game.campaign.slug}-archive.zip"'
    files = read_zip(response.data)
    assert f"{game.campaign.slug}/index.html" in files
    assert broken_links(files) == []
    # Relative links in built-in entries point at this site's address.
    bram = files[f"{game.campaign.slug}/blogs/bram.html"]
    assert f'href="http://pbp.test/c/{game.campaign.slug}/bram/map.html"' in bram


def _selects(client, engine, path) -> int:
    with count_selects(engine) as seen:
        assert client.get(path).status_code == 200
    return len(seen)


def test_queries_per_page_do_not_grow_with_characters_or_turns(
    client, auth, db_session, engine, game, referee
):
    auth.login(referee)
    paths = [url(game, page) for page in PAGES]
    before = [_selects(client, engine, p) for p in paths]
    grow(db_session, game)
    db_session.commit()
    after = [_selects(client, engine, p) for p in paths]
    assert before == after
    assert "Turn 6" in client.get(paths[0]).get_data(as_text=True)
