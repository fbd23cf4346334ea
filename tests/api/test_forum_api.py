"""The forum through the API: each caller sees what the forum pages would show them."""

from __future__ import annotations

import re
from datetime import datetime

FORUM = "/campaigns/{}/forum"


def _forum(world) -> str:
    return FORUM.format(world.extra["forum"])


def test_a_whisper_reaches_only_its_recipients_and_the_gm(api, forum_world):
    w, base = forum_world, _forum(forum_world)
    referee_id = w.users["referee"].id
    whisper = api.post(
        f"{base}/threads/{w.extra['thread']}/posts",
        token=w.tokens["player"],
        json={"body": "Psst.", "audience": "whisper", "recipient_ids": [referee_id]},
    )
    assert whisper.status_code == 201, whisper.get_data(as_text=True)
    assert whisper.get_json()["recipients"] == ["Referee"]
    url = f"{base}/threads/{w.extra['thread']}/posts"
    seen = {
        role: [p["id"] for p in api.get(url, token=token).get_json()["items"]]
        for role, token in w.tokens.items()
    }
    wid = whisper.get_json()["id"]
    assert wid in seen["player"] and wid in seen["referee"]
    assert wid not in seen["other_player"] and wid not in seen["anonymous"]


def test_a_gm_only_roll_is_hidden_from_everyone_but_roller_and_gm(api, forum_world):
    w, base = forum_world, _forum(forum_world)
    posted = api.post(
        f"{base}/threads/{w.extra['thread']}/posts",
        token=w.tokens["player"],
        json={"body": "Sneaking.\n/roll 3d6", "roll_visibility": "gm"},
    ).get_json()
    roll_id = posted["rolls"][0]["id"]
    states = {
        role: api.get(f"{base}/rolls/{roll_id}", token=t).get_json()["roll"]
        for role, t in w.tokens.items()
    }
    assert states["player"]["state"] == states["referee"]["state"] == "shown"
    assert states["other_player"]["state"] == "hidden"
    assert states["other_player"]["result"] is None and states["other_player"]["command"] is None


def test_rolls_are_made_once_even_when_the_post_is_retried(api, forum_world):
    w, base = forum_world, _forum(forum_world)
    answers = [
        api.post(
            f"{base}/threads/{w.extra['thread']}/posts",
            token=w.tokens["player"],
            headers={"Idempotency-Key": "one-roll"},
            json={"body": "/roll 1d20"},
        ).get_json()
        for _ in range(2)
    ]
    assert answers[0] == answers[1]
    posts = api.get(f"{base}/threads/{w.extra['thread']}/posts").get_json()["items"]
    assert sum(1 for p in posts for r in p["rolls"] if r["id"] == answers[0]["rolls"][0]["id"]) == 1
    assert len(posts) == 2


def test_a_bad_roll_command_says_what_is_wrong(api, forum_world):
    w, base = forum_world, _forum(forum_world)
    response = api.post(
        f"{base}/threads/{w.extra['thread']}/posts",
        token=w.tokens["player"],
        json={"body": "/roll 2d6 Watch"},
    )
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    assert "a roll looks like 2d6+1" in response.get_json()["detail"]


def test_a_blog_campaign_has_no_forum(api, world):
    response = api.get(FORUM.format(world.slug) + "/threads")
    assert response.status_code == 404
    assert "played on blogs" in response.get_json()["detail"]


def test_the_end_reveals_the_seed_and_the_commitment_checks(api, forum_world):
    import hashlib

    w, base = forum_world, _forum(forum_world)
    before = api.get(base).get_json()
    assert before["seed"] is None and before["commitment"]
    after = api.post(f"{base}/end", token=w.tokens["referee"]).get_json()
    assert after["status"] == "ended" and after["commitment"] == before["commitment"]
    assert hashlib.sha256(bytes.fromhex(after["seed"])).hexdigest() == after["commitment"]


def test_the_commitment_is_public_from_the_campaigns_creation(api, client, world):
    """Issue #35 item 1: GET /forum showed "commitment": null until the first roll, even
    one posted in setup. Now it is there right after the campaign is made, the same one
    the end reveals the seed of, and every exported roll comes after it."""
    referee = world.tokens["referee"]
    made = api.post("/campaigns", token=referee, json={"name": "Fresh Noir", "ruleset": "noir"})
    slug = made.get_json()["slug"]
    state = api.get(f"/campaigns/{slug}/forum").get_json()  # anyone, no token
    assert state["status"] == "setup" and re.fullmatch(r"[0-9a-f]{64}", state["commitment"])
    fairness = client.get(f"/c/{slug}/forum/fairness").get_data(as_text=True)
    assert state["commitment"] in fairness  # the fair dice page, linked from the front page
    opened = api.post(
        f"/campaigns/{slug}/forum/threads",
        token=referee,
        json={"title": "Before the start", "post": {"body": "/roll 2d6"}},
    )
    assert opened.status_code == 201 and opened.get_json()["rolls"]
    ended = api.post(f"/campaigns/{slug}/forum/end", token=referee).get_json()
    assert ended["commitment"] == state["commitment"]
    export = client.get(f"/c/{slug}/forum/export.json").get_json()
    committed = datetime.fromisoformat(export["fairness"]["committed_at"])
    assert export["rolls"] and all(
        datetime.fromisoformat(r["created_at"]) >= committed for r in export["rolls"]
    )
