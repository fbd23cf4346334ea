"""Issue #33 item 4 on the pages and the API: the GM starts a ONE combat in a scene,
players declare, the GM attaches the scene's rolls to an attack and moves on; the thread
shows the segment, who acts, the fighters' hit points and the history. Segment 2 of ONE's
Larry and Curly example, as tests/services/forum/test_combat_scene.py plays it whole."""

from __future__ import annotations

import pytest

from pbp.services.accounts import logins as accounts
from pbp.services.forum import sheets
from tests.api import conftest as api_fixtures
from tests.helpers import PASSWORD, make_token
from tests.services.forum.scene_combat import BLADE, make_scene


@pytest.fixture
def app(app):
    api_fixtures.wire(app)
    return app


@pytest.fixture
def scene(db_session, monkeypatch):
    scene = make_scene(db_session, monkeypatch)
    for user in (scene.gm, scene.larry_user, scene.curly_user):
        user.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    return scene


def test_segment_two_on_the_thread_page(auth, client, db_session, scene):
    thread = f"/c/{scene.campaign.slug}/forum/t/{scene.thread.id}"
    auth.login(scene.gm)
    assert "Start the combat" in client.get(thread).get_data(as_text=True)
    started = auth.post(thread + "/combat/start", {"characters": ["larry", "curly"]})
    assert started.status_code == 302
    page = client.get(thread).get_data(as_text=True)
    assert (
        "Turn 1, segment 1 of 12" in page
        and "Combat starts: Larry (Speed 7), Curly (Speed 8)" in page
    )
    auth.post(thread + "/combat/next")
    assert "Waiting for: Larry, Curly" in client.get(thread).get_data(as_text=True)

    auth.logout()
    auth.login(scene.larry_user)
    refused = auth.post(thread + "/combat/plans", {"fighter": "Curly", "plan": "attack"})
    assert refused.status_code == 403
    auth.post(thread + "/combat/plans", {"fighter": "Larry", "plan": "attack defend"})
    auth.logout()
    auth.login(scene.curly_user)
    auth.post(thread + "/combat/plans", {"fighter": "Curly", "plan": "attack attack"})

    c1, c2, dmg = scene.post("Curly", f"{BLADE}\n{BLADE}\n/roll 1d6", [4, 5, 3, 3, 1])
    (shield,) = scene.post("Larry", f"{BLADE} # shield", [3, 4])
    auth.logout()
    auth.login(scene.gm)
    form = {"attacker": "Curly", "defender": "Larry", "skill": "Short Blade",
            "defence_skill": "Short Blade", "defence_roll": shield, "damage_roll": dmg}  # fmt: skip
    assert auth.post(thread + "/combat/attacks", form | {"attack_roll": c1}).status_code == 302
    hit = auth.post(thread + "/combat/attacks", form | {"attack_roll": c2}, follow_redirects=True)
    text = hit.get_data(as_text=True)
    assert "= 1 taken" in text and "29 / 30" in text
    again = auth.post(thread + "/combat/attacks", form | {"attack_roll": c2})
    assert again.status_code == 409  # the combat's state forbids it (docs/api.md)
    assert "already part of this combat" in again.get_data(as_text=True)
    sheet = sheets.get_sheet(session=db_session, character=scene.larry)
    db_session.refresh(sheet)
    assert sheet.data["hit_points_lost"] == 1

    auth.logout()  # a visitor reads the combat with the scene
    assert "= 1 taken" in client.get(thread).get_data(as_text=True)


def test_the_api_twins(client, db_session, scene):
    base = f"/api/v1/campaigns/{scene.campaign.slug}/forum/threads/{scene.thread.id}/combat"

    def call(method, path, user, body=None):
        headers = {"Authorization": "Bearer " + make_token(db_session, user)}
        db_session.commit()
        return client.open(base + path, method=method, json=body, headers=headers)

    assert call("GET", "", scene.gm).status_code == 404  # no combat yet
    assert call("POST", "", scene.larry_user, {"characters": ["larry", "curly"]}).status_code == 403
    started = call("POST", "", scene.gm, {"characters": ["larry", "curly"]})
    assert started.status_code == 201
    assert {f["name"]: f["speed"] for f in started.json["fighters"]} == {"Larry": 7, "Curly": 8}
    assert call("POST", "/next", scene.gm).json["waiting_for"] == ["Larry", "Curly"]
    planned = call("POST", "/plans", scene.larry_user, {"fighter": "Larry", "plans": [["attack"]]})
    assert planned.status_code == 201 and planned.json["waiting_for"] == ["Curly"]
    (hit, dmg) = scene.post("Larry", f"{BLADE}\n/roll 1d6", [3, 3, 4])
    body = {"attacker": "Larry", "defender": "Curly", "skill": "Short Blade",
            "attack_roll": hit, "damage_roll": dmg}  # fmt: skip
    done = call("POST", "/attacks", scene.gm, body)
    assert done.status_code == 201
    assert {f["name"]: f["hit_points"] for f in done.json["fighters"]}["Curly"] == 22
    ended = call("POST", "/end", scene.gm)
    assert ended.json["under_way"] is False
    assert [s["kind"] for s in ended.json["steps"]] == ["start", "next", "declare", "attack", "end"]
