"""Issue #27 item 2 in the API: `POST .../entries/<id>/hide`, the twin of the entry page's
"Hide my entry"; a hidden entry answers 404 to everyone but its author and the referee,
leaves the entry list (but the referee's) and the tally."""

from __future__ import annotations

import pytest

from pbp.services.noteworthy import hosted_blog


@pytest.fixture
def world(world, db_session):
    """The API world, with a second entry of Ada's that is not a challenge (a challenge
    cannot be hidden): `world.extra["entry"]`."""
    musing = hosted_blog.store_entry(
        session=db_session,
        character=world.characters["Ada"],
        title="Quiet evening",
        body_markdown="Nothing happened.",
        mood="Calm",
        now=world.challenge.first_seen_at,
    )
    db_session.commit()
    world.extra["entry"] = musing
    return world


def _hide(api, world, role="player", entry=None):
    entry = entry or world.extra["entry"]
    return api.post(f"/campaigns/{world.slug}/entries/{entry.id}/hide", token=world.tokens[role])


def test_the_author_hides_their_entry(api, world):
    answer = _hide(api, world)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["id"] == world.extra["entry"].id and body["hidden_at"]


def test_a_challenge_cannot_be_hidden(api, world):
    """Noteworthy: a withdrawn challenge "still counts as your challenge for that turn";
    hiding would free its author to challenge again."""
    answer = _hide(api, world, entry=world.challenge)
    assert answer.status_code == 422
    assert "a challenge cannot be hidden" in answer.get_data(as_text=True)


def test_another_player_cannot_hide_it(api, world):
    answer = _hide(api, world, "other_player")
    assert answer.status_code == 403
    assert "only the entry's author can hide it" in answer.get_data(as_text=True)


def test_hiding_twice_is_refused_with_the_reason(api, world):
    assert _hide(api, world).status_code == 200
    again = _hide(api, world)
    assert again.status_code == 422 and "you hid this entry" in again.get_data(as_text=True)


@pytest.mark.parametrize(
    "role,status", [("player", 200), ("referee", 200), ("other_player", 404), ("stranger", 404)]
)
def test_a_hidden_entry_is_read_by_its_author_and_the_referee_only(api, world, role, status):
    assert _hide(api, world).status_code == 200
    base = f"/campaigns/{world.slug}/entries"
    hidden = world.extra["entry"].id
    one = api.get(f"{base}/{hidden}", token=world.tokens[role])
    notes = api.get(f"{base}/{hidden}/notes", token=world.tokens[role])
    assert one.status_code == notes.status_code == status
    listed = [e["id"] for e in api.get(base, token=world.tokens[role]).get_json()["items"]]
    assert (hidden in listed) is (role == "referee")


def test_an_anonymous_caller_gets_404(api, world):
    assert _hide(api, world).status_code == 200
    url = f"/campaigns/{world.slug}/entries/{world.extra['entry'].id}"
    assert api.get(url).status_code == 404


def test_a_hidden_entry_leaves_the_public_lists(api, world):
    entries = f"/campaigns/{world.slug}/entries"
    assert "Quiet evening" in str(api.get(entries).get_json())
    assert _hide(api, world).status_code == 200
    assert "Quiet evening" not in str(api.get(entries).get_json())
    assert "Quiet evening" not in str(
        api.get(entries, token=world.tokens["other_player"]).get_json()
    )
