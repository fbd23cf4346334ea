"""Unread in the API (issue #29 item 2): `unread` on campaigns, scenes and the board, and
`POST /campaigns/<slug>/read`, the twin of the pages' "Mark all read"."""

from __future__ import annotations


def _unread(api, world, role) -> int | None:
    return api.get(f"/campaigns/{world.slug}", token=world.tokens[role]).get_json()["unread"]


def test_unread_counts_on_campaigns_and_mark_all_read(api, world):
    """Ada's challenge is new to Bram and the referee, not to Ada's player; a stranger and
    a visitor get null."""
    assert _unread(api, world, "other_player") == 1
    assert _unread(api, world, "referee") == 1
    assert _unread(api, world, "player") == 0
    assert _unread(api, world, "stranger") is None and _unread(api, world, "anonymous") is None
    listed = api.get("/campaigns", token=world.tokens["other_player"]).get_json()["items"]
    assert next(c for c in listed if c["slug"] == world.slug)["unread"] == 1
    board = api.get("/me/board", token=world.tokens["other_player"]).get_json()
    assert {"campaign": world.slug, "campaign_name": world.campaign.name, "role": "player",
            "unread": 1} in board["campaigns"]  # fmt: skip
    answer = api.post(f"/campaigns/{world.slug}/read", token=world.tokens["other_player"])
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json() == {"campaign": world.slug, "unread": 0}
    assert _unread(api, world, "other_player") == 0
    assert _unread(api, world, "referee") == 1  # marks are each member's own


def test_marking_one_entry_s_notes_read(api, world):
    entry = world.challenge.id
    note = api.post(
        f"/campaigns/{world.slug}/entries/{entry}/notes",
        token=world.tokens["other_player"],
        json={"body": "Never."},
    )
    assert note.status_code == 201, note.get_data(as_text=True)
    assert _unread(api, world, "player") == 1  # Bram's note on Ada's entry
    answer = api.post(
        f"/campaigns/{world.slug}/read", token=world.tokens["player"], json={"entry": entry}
    )
    assert answer.get_json()["unread"] == 0
    both = api.post(
        f"/campaigns/{world.slug}/read",
        token=world.tokens["player"],
        json={"entry": entry, "scene": 1},
    )
    assert both.status_code == 422


def test_mark_read_is_for_members(api, world):
    url = f"/campaigns/{world.slug}/read"
    assert api.post(url, token=world.tokens["stranger"]).status_code == 403
    assert api.post(f"/campaigns/{world.slug}/read", token=None).status_code == 401


def test_scenes_carry_what_is_new_and_a_whisper_to_others_is_not(api, forum_world):
    w = forum_world
    base = f"/campaigns/{w.extra['forum']}/forum/threads"
    thread = w.extra["thread"]
    whisper = api.post(
        f"{base}/{thread}/posts",
        token=w.tokens["player"],
        json={"body": "Psst.", "audience": "whisper", "recipient_ids": [w.users["referee"].id]},
    )
    assert whisper.status_code == 201

    def scene(role):
        items = api.get(base, token=w.tokens[role]).get_json()["items"]
        return next(t for t in items if t["id"] == thread)["unread"]

    assert scene("other_player") == 1  # the opening post; the whisper is not to him
    assert scene("referee") == 2
    assert scene("player") == 0
    assert scene("anonymous") is None
    slug = w.extra["forum"]
    answer = api.post(f"/campaigns/{slug}/read", token=w.tokens["referee"], json={"scene": thread})
    assert answer.status_code == 200 and answer.get_json()["unread"] == 0
    assert scene("referee") == 0 and scene("other_player") == 1
