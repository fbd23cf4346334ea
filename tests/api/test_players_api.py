"""What a player (or a bot) needs without scraping the pages (issue #35 item 3): the members
and their characters with ids, whispers to characters by slug, an invitation accepted by an
account that exists, and one type of id (a card seat is a user id, an integer)."""

from __future__ import annotations

from pbp.services import campaigns
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail.settings import MailSettings
from tests.helpers import API_NOW as NOW

FORUM = "/campaigns/{}/forum"


def test_a_player_lists_the_members_and_their_characters_with_ids(api, forum_world):
    w = forum_world
    listed = api.get(f"/campaigns/{w.extra['forum']}/members", token=w.tokens["player"])
    assert listed.status_code == 200, listed.get_data(as_text=True)
    members = {m["display_name"]: m for m in listed.get_json()["members"]}
    bram = members[w.users["other_player"].display_name]
    assert bram["id"] == w.users["other_player"].id and bram["role"] == "player"
    assert [(c["slug"], c["name"]) for c in bram["characters"]] == [("bram", "Bram")]
    assert members[w.users["referee"].display_name]["role"] == "referee"
    stranger = api.get(f"/campaigns/{w.extra['forum']}/members", token=w.tokens["stranger"])
    assert stranger.status_code == 403


def test_a_whisper_goes_to_a_character_named_by_slug(api, forum_world):
    w = forum_world
    url = f"{FORUM.format(w.extra['forum'])}/threads/{w.extra['thread']}/posts"
    whisper = api.post(
        url,
        token=w.tokens["referee"],
        json={"body": "Psst.", "audience": "whisper", "recipient_characters": ["bram"]},
    )
    assert whisper.status_code == 201, whisper.get_data(as_text=True)
    assert whisper.get_json()["recipients"] == [w.users["other_player"].display_name]
    wid = whisper.get_json()["id"]
    seen = {
        role: [p["id"] for p in api.get(url, token=w.tokens[role]).get_json()["items"]]
        for role in ("other_player", "player")
    }
    assert wid in seen["other_player"] and wid not in seen["player"]
    unknown = api.post(
        url,
        token=w.tokens["referee"],
        json={"body": "Psst.", "audience": "whisper", "recipient_characters": ["nobody"]},
    )
    assert unknown.status_code >= 400 and "nobody" in unknown.get_json()["detail"]


def test_an_existing_account_accepts_an_invitation_through_the_api(api, world):
    slug = world.campaign.slug
    made = api.post(f"/campaigns/{slug}/invites", token=world.tokens["referee"], json={})
    assert made.status_code == 201, made.get_data(as_text=True)
    link = made.get_json()["url"]
    joined = api.post("/invites/accept", token=world.tokens["stranger"], json={"invitation": link})
    assert joined.status_code == 201, joined.get_data(as_text=True)
    assert (joined.get_json()["slug"], joined.get_json()["role"]) == (slug, "player")
    members = api.get(f"/campaigns/{slug}/members", token=world.tokens["stranger"])
    assert world.users["stranger"].id in [m["id"] for m in members.get_json()["members"]]
    again = api.post("/invites/accept", token=world.tokens["stranger"], json={"invitation": link})
    assert again.status_code == 410 and "already used" in again.get_json()["detail"]


def test_a_card_seat_is_the_players_user_id_an_integer(api, world, db_session):
    users = world.users
    game = campaigns.create_campaign(
        session=db_session, referee=users["referee"], name="Seats", ruleset="sex-and-violence"
    )
    campaigns.add_character(session=db_session, campaign=game, name="Max", user=users["player"])
    post = posts.create_thread(
        session=db_session,
        campaign=game,
        author=users["referee"],
        title="Bar",
        draft=Draft(body="Smoke."),
        mail=MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>"),
        now=NOW,
    )
    db_session.commit()
    url = f"{FORUM.format(game.slug)}/threads/{post.thread_id}/cards"
    assert api.post(url, token=world.tokens["referee"], json={}).status_code == 201
    character = {
        "name": "Max",
        "archetype": "warrior",
        "criminal_background": "Enforcer",
        "redeeming_quality": "Loyal",
        "angle": "bodyguard",
        "fields": ["C"],
    }
    me = users["player"].id
    made = api.post(
        url + "/moves",
        token=world.tokens["player"],
        json={"action": "create_character", "params": character},
    )
    assert made.status_code == 200, made.get_data(as_text=True)
    table = made.get_json()
    assert table["me"] == me
    assert table["view"]["characters"][0]["player_id"] == me
    keep = api.post(url + "/moves", token=world.tokens["player"], json={"action": "keep"})
    assert keep.status_code == 200, keep.get_data(as_text=True)
    contest = {"player": me, "suit": "C", "kind": "plain"}
    opened = api.post(
        url + "/moves",
        token=world.tokens["referee"],
        json={"action": "open_contest", "params": contest},
    )
    assert opened.status_code == 200, opened.get_data(as_text=True)
    assert opened.get_json()["view"]["contest"]["player_id"] == me
    assert opened.get_json()["me"] == "gm"
    assert opened.get_json()["log"][-1]["events"]  # the log's events are typed too


def test_a_seat_is_read_as_a_number_or_its_old_text_form():
    from pbp.inputs.cards import CardMove

    for sent in (2, "2"):
        move = CardMove.model_validate(
            {"action": "open_contest", "params": {"player": sent, "suit": "C", "kind": "plain"}}
        )
        assert move.params()["player"] == "2"  # as the engines and the record keep it


def test_a_roll_keeps_its_command_as_written_and_what_pbp_resolved_beside_it(api, forum_world):
    """Issue #35 item 4: `skill="Short Blade"` is not rewritten to `... score=7`."""
    from tests.services.forum.tables import ONE_STATS

    w = forum_world
    base = FORUM.format(w.extra["forum"])
    sheet = {"data": {"stats": ONE_STATS, "skills": {"Short Blade": 4}}}
    put = api.put(f"/campaigns/{w.extra['forum']}/sheets/ada", token=w.tokens["player"], json=sheet)
    assert put.status_code == 200, put.get_data(as_text=True)
    ada = next(
        c["id"]
        for m in api.get(
            f"/campaigns/{w.extra['forum']}/members", token=w.tokens["player"]
        ).get_json()["members"]
        for c in m["characters"]
        if c["slug"] == "ada"
    )
    typed = '/roll one skill="Short Blade" # quick hands'
    posted = api.post(
        f"{base}/threads/{w.extra['thread']}/posts",
        token=w.tokens["player"],
        json={"body": f"I cut the rope.\n{typed}", "character_id": ada},
    )
    assert posted.status_code == 201, posted.get_data(as_text=True)
    roll = posted.get_json()["rolls"][0]
    assert roll["command"] == typed
    assert roll["resolved"].startswith('/roll one check skill="Short Blade" score=')
    assert roll["result"]["ruleset"] == "one" and roll["result"]["reading"]["kind"] == "check"
    again = api.get(f"{base}/rolls/{roll['id']}", token=w.tokens["other_player"]).get_json()
    assert again["roll"]["command"] == typed
