"""The API twins of keeping a game alive (issue #30): the activity check, its settings,
and a player's hiatus. The activity check's numbers are the history's: compared here
through both operations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

BACK = (datetime.now(UTC) + timedelta(days=10)).date().isoformat()


def test_activity_agrees_with_the_history(api, world):
    token = world.tokens["referee"]
    seen = api.get(f"/campaigns/{world.slug}/activity", token=token)
    assert seen.status_code == 200, seen.json
    story = api.get(f"/campaigns/{world.slug}/history", token=token).json
    body = seen.json
    assert body["rule"] == "1 entry per turn"
    assert [p["number"] for p in body["periods"]] == [t["number"] for t in story["turns"]]
    for turn, period in zip(story["turns"], body["periods"], strict=True):
        history_cells = {s["character_id"]: (s["status"], s["made"]) for s in turn["standings"]}
        for row in body["rows"]:
            cell = next(c for c in row["cells"] if c["period"] == period["key"])
            assert (cell["status"], cell["challenges"]) == history_cells[row["character_id"]]
    ada = next(r for r in body["rows"] if r["name"] == "Ada")
    # Her challenge is an entry; the history counts it once the turn is resolved.
    assert ada["cells"][0]["entries"] == 1
    assert ada["cells"][0]["met"] is True


def test_only_the_referee_reads_and_sets_the_activity_check(api, world):
    for role in ("anonymous", "stranger", "player"):
        got = api.get(f"/campaigns/{world.slug}/activity", token=world.tokens[role])
        assert got.status_code in (401, 403), role
    url = f"/campaigns/{world.slug}/activity/settings"
    body = {"nudge_hours": [72, 24], "overdue_hours": None, "rule_count": 2}
    assert api.put(url, token=world.tokens["player"], json=body).status_code == 403
    saved = api.put(url, token=world.tokens["referee"], json=body)
    assert saved.status_code == 200, saved.json
    assert saved.json == {**body, "rule_days": None}
    wrong = api.put(url, token=world.tokens["referee"], json={**body, "nudge_hours": [0]})
    assert wrong.status_code == 422 and "between 1 hour" in wrong.json["detail"]


def test_a_player_goes_away_and_comes_back(api, world):
    url = f"/campaigns/{world.slug}/me/away"
    token = world.tokens["player"]
    assert api.get(url, token=token).json["away"] is False
    away = api.put(url, token=token, json={"until": BACK, "note": "Exams."})
    assert away.status_code == 200, away.json
    assert away.json["away"] is True and away.json["note"] == "Exams."
    assert api.get(url, token=token).json["away"] is True
    rows = api.get(f"/campaigns/{world.slug}/activity", token=world.tokens["referee"]).json
    ada = next(r for r in rows["rows"] if r["name"] == "Ada")
    assert ada["away_until"] is not None
    assert api.call("DELETE", url, token=token).json["away"] is False
    assert api.call("DELETE", url, token=token).status_code == 409
    # The referee runs the game: no hiatus for them.
    refused = api.put(url, token=world.tokens["referee"], json={"until": BACK})
    assert refused.status_code in (400, 403, 422)
