"""Issue #27 item 3 through the API: a forum player with no character makes one and its
sheet (make_character), or the GM makes one and hands it over (make_character_for); the
same service functions as the Sheets page and the GM's dashboard."""

from __future__ import annotations

from sqlmodel import select

from pbp.models import Campaign, Character, Membership
from pbp.services import campaigns
from tests.factories import make_user
from tests.helpers import make_token
from tests.services.forum.tables import ONE_STATS


def _newcomer(db_session, forum_world, name):
    """A player who joined by an invitation naming no character, with an API token."""
    game = campaigns.get_campaign(session=db_session, slug=forum_world.extra["forum"])
    user = make_user(db_session, name)
    db_session.add(Membership(campaign_id=game.id, user_id=user.id, role="player"))
    token = make_token(db_session, user)
    db_session.commit()
    return game, user, token


def test_a_player_makes_their_character_and_posts_as_them(api, db_session, forum_world):
    game, pip, token = _newcomer(db_session, forum_world, "Pip")
    base = f"/campaigns/{game.slug}/forum"
    sheet = {"stats": ONE_STATS, "skills": {"Short Blade": 3}}
    made = api.post(f"{base}/characters", token=token, json={"name": "Dash", "sheet": sheet})
    assert made.status_code == 201, made.get_data(as_text=True)
    out = made.get_json()
    assert out["player_id"] == pip.id and out["name"] == "Dash"
    assert out["sheet"]["data"]["skills"] == {"Short Blade": 3}
    posted = api.post(
        f"{base}/threads/{forum_world.extra['thread']}/posts",
        token=token,
        json={"body": 'In.\n/roll one skill="Short Blade"', "character_id": out["id"]},
    )
    assert posted.status_code == 201 and posted.get_json()["character"] == "Dash"
    assert "Short Blade" in posted.get_json()["rolls"][0]["note"]
    again = api.post(f"{base}/characters", token=token, json={"name": "Dot", "sheet": sheet})
    assert again.status_code == 409 and "already play Dash" in again.get_json()["detail"]


def test_a_sheet_the_ruleset_refuses_makes_nothing(api, db_session, forum_world):
    game, _, token = _newcomer(db_session, forum_world, "Pip")
    refused = api.post(
        f"/campaigns/{game.slug}/forum/characters",
        token=token,
        json={"name": "Dash", "sheet": {"stats": {**ONE_STATS, "STR": 12}}},
    )
    assert refused.status_code == 422 and "35" in refused.get_json()["detail"]
    assert db_session.exec(select(Character).where(Character.name == "Dash")).all() == []


def test_the_gm_makes_a_character_for_a_player(api, db_session, forum_world):
    game, pip, _ = _newcomer(db_session, forum_world, "Pip")
    made = api.post(
        f"/campaigns/{game.slug}/forum/characters/for-player",
        token=forum_world.tokens["referee"],
        json={"player_id": pip.id, "name": "Dash"},
    )
    assert made.status_code == 201, made.get_data(as_text=True)
    assert made.get_json()["player_id"] == pip.id and made.get_json()["sheet"] is None
    dash = db_session.exec(select(Character).where(Character.name == "Dash")).one()
    assert dash.user_id == pip.id and db_session.get(Campaign, dash.campaign_id).slug == game.slug
