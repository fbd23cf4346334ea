"""Issue #27 item 2 in the API: `POST .../entries/<id>/hide`, the twin of the entry page's
"Hide my entry"; a hidden entry answers 404 to everyone but its author and the referee,
leaves the entry list (but the referee's) and the tally."""

from __future__ import annotations

import pytest

from pbp.services.noteworthy import hosted_blog


def _hide(api, world, role="player"):
    return api.post(
        f"/campaigns/{world.slug}/entries/{world.challenge.id}/hide", token=world.tokens[role]
    )


def test_the_author_hides_their_challenge(api, world):
    answer = _hide(api, world)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["id"] == world.challenge.id and body["hidden_at"]


def test_another_player_cannot_hide_it(api, world):
    answer = _hide(api, world, "other_player")
    assert answer.status_code == 403
    assert "only the entry's author can hide it" in answer.get_data(as_text=True)


def test_hiding_twice_is_refused_with_the_reason(api, world):
    assert _hide(api, world).status_code == 200
    again = _hide(api, world)
    assert again.status_code == 400 and "you hid this entry" in again.get_data(as_text=True)


@pytest.mark.parametrize(
    "role,status", [("player", 200), ("referee", 200), ("other_player", 404), ("stranger", 404)]
)
def test_a_hidden_entry_is_read_by_its_author_and_the_referee_only(api, world, role, status):
    assert _hide(api, world).status_code == 200
    base = f"/campaigns/{world.slug}/entries"
    one = api.get(f"{base}/{world.challenge.id}", token=world.tokens[role])
    notes = api.get(f"{base}/{world.challenge.id}/notes", token=world.tokens[role])
    assert one.status_code == notes.status_code == status
    listed = [e["id"] for e in api.get(base, token=world.tokens[role]).get_json()["items"]]
    assert (world.challenge.id in listed) is (role == "referee")


def test_an_anonymous_caller_gets_404(api, world):
    assert _hide(api, world).status_code == 200
    url = f"/campaigns/{world.slug}/entries/{world.challenge.id}"
    assert api.get(url).status_code == 404


def test_the_tally_forgets_the_hidden_challenge(api, world, db_session):
    hosted_blog.store_note(
        session=db_session,
        entry=world.challenge,
        author=world.characters["Cleo"],
        body_markdown="Support.",
        now=world.challenge.first_seen_at,
    )
    db_session.commit()
    tally = f"/campaigns/{world.slug}/turns/1/tally"
    before = api.get(tally, token=world.tokens["referee"]).get_json()
    assert [c["entry_id"] for c in before["challenges"]] == [world.challenge.id]
    assert _hide(api, world).status_code == 200
    after = api.get(tally, token=world.tokens["referee"]).get_json()
    assert after["challenges"] == []
    public = api.get(f"/campaigns/{world.slug}/turns/1/challenges").get_json()
    assert world.challenge.title not in str(public)
