"""Card tables through the API: the same service functions as the table's page
(cards.open_table, cards.move), so the same checks answer (#18 item 1)."""

from __future__ import annotations

from pbp.services import campaigns
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail.settings import MailSettings
from tests.helpers import API_NOW as NOW

WARRIOR = {
    "name": "Max",
    "archetype": "warrior",
    "criminal_background": "Enforcer",
    "redeeming_quality": "Loyal to his friends",
    "angle": "bodyguard",
    "fields": ["C"],
}


def _table_url(world, db_session) -> str:
    users = world.users
    game = campaigns.create_campaign(
        session=db_session,
        referee=users["referee"],
        name=f"{world.campaign.name} cards",
        ruleset="sex-and-violence",
    )
    for name, role in (("Max", "player"), ("Burke", "other_player")):
        campaigns.add_character(session=db_session, campaign=game, name=name, user=users[role])
    post = posts.create_thread(
        session=db_session,
        campaign=game,
        author=users["referee"],
        title="Water Street",
        draft=Draft(body="The rain."),
        mail=MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>"),
        now=NOW,
    )
    db_session.commit()
    return f"/campaigns/{game.slug}/forum/threads/{post.thread_id}/cards"


def test_the_gm_opens_a_table_and_a_player_moves_through_the_api(api, world, db_session):
    url = _table_url(world, db_session)
    gm, player = world.tokens["referee"], world.tokens["player"]
    refused = api.post(url, token=player, json={})
    assert refused.status_code == 403 and "only the GM" in refused.get_json()["detail"]
    opened = api.post(url, token=gm, json={"settings": {"gm_sees_hands": True}})
    assert opened.status_code == 201, opened.get_data(as_text=True)
    assert (opened.get_json()["ruleset"], opened.get_json()["version"]) == ("sex-and-violence", 0)
    assert api.post(url, token=gm, json={}).status_code == 409  # one table a thread

    moved = api.post(
        url + "/moves",
        token=player,
        json={"action": "create_character", "params": WARRIOR, "version": 0},
    )
    assert moved.status_code == 200, moved.get_data(as_text=True)
    table = moved.get_json()
    assert table["version"] == 1 and table["log"][-1]["action"] == "Create a character"
    stale = api.post(
        url + "/moves",
        token=world.tokens["other_player"],
        json={"action": "create_character", "params": {**WARRIOR, "name": "Burke"}, "version": 0},
    )
    assert stale.status_code == 409 and "has changed" in stale.get_json()["detail"]
    assert api.get(url, token=player).get_json()["version"] == 1


def test_a_move_the_rules_refuse_is_a_problem_and_saves_nothing(api, world, db_session):
    url = _table_url(world, db_session)
    assert api.post(url, token=world.tokens["referee"], json={}).status_code == 201
    bad = {**WARRIOR, "fields": ["C", "D", "H", "S"]}
    refused = api.post(
        url + "/moves",
        token=world.tokens["player"],
        json={"action": "create_character", "params": bad},
    )
    assert refused.status_code == 422 and "all four" in refused.get_json()["detail"]
    assert api.get(url, token=world.tokens["player"]).get_json()["version"] == 0
