"""Outsiders vote in the final through the API and the note form, and their votes count.

Noteworthy: “Each outsider may now post a note supporting one side or the other (but not
both sides). Post the note to the entry of the PC you support.”
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from pbp.services import campaigns
from pbp.services.noteworthy import hosted_blog, turns
from pbp.services.noteworthy import tally as tally_service
from tests.web.test_mail_promises import NOW, Game, app, make_game  # noqa: F401  (fixture)


@pytest.fixture
def final(db_session, client) -> tuple[Game, dict]:
    """Ada and Bram are the last two active characters when turn 2 opens (the final);
    Cleo, Dov and Eli are outsiders. Each finalist has posted their final entry."""
    game = make_game(db_session, client, names=("Ada", "Bram", "Cleo", "Dov", "Eli"))
    campaign = campaigns.get_campaign(session=db_session, slug=game.slug)
    for name in ("Cleo", "Dov", "Eli"):
        game.characters[name].status = "outsider"
        db_session.add(game.characters[name])
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=NOW)
    turns.resolve_turn(session=db_session, campaign=campaign, actor=None, now=NOW)
    turn = turns.post_event(
        session=db_session, campaign=campaign, text="The final.", actor=None, now=NOW
    )
    entries = {
        name: hosted_blog.store_entry(
            session=db_session,
            character=game.characters[name],
            title=f"{name}'s last stand",
            body_markdown="How it ends.",
            mood="Determined",
            now=NOW + timedelta(minutes=10),
        )
        for name in ("Ada", "Bram")
    }
    db_session.commit()
    assert len(turn.start_standings) == 5
    return game, entries


def _vote(game: Game, voter: str, entry, stance: str):
    path = f"/campaigns/{game.slug}/entries/{entry.id}/notes"
    return game.call(voter, "POST", path, json={"body": "My vote.", "stance": stance})


def _final(db_session, game: Game):
    db_session.expire_all()
    campaign = campaigns.get_campaign(session=db_session, slug=game.slug)
    turn = turns.latest_turn(session=db_session, campaign=campaign)
    return tally_service.tally(session=db_session, campaign=campaign, turn=turn).final


def test_an_outsiders_vote_through_the_api_counts_in_the_final(db_session, final):
    game, entries = final
    answer = _vote(game, "Cleo", entries["Ada"], "support")
    assert answer.status_code == 201, answer.get_json()
    # "Oppose" on Bram's entry backs his rival (docs/rules-notes.md: "The final").
    assert _vote(game, "Dov", entries["Bram"], "oppose").status_code == 201
    result = _final(db_session, game)
    votes = {s.finalist_id: [p.character_id for p in s.votes] for s in result.sides}
    ada, cleo, dov = (game.characters[n].id for n in ("Ada", "Cleo", "Dov"))
    assert sorted(votes[ada]) == sorted([cleo, dov])
    assert result.winner_id == ada


def test_an_outsiders_vote_on_the_note_form_counts_in_the_final(db_session, final):
    game, entries = final
    game.login("Eli")
    url = f"/c/{game.slug}/{game.characters['Bram'].slug}/{entries['Bram'].id}/notes"
    page = game.auth.post(url, {"body": "For Bram.", "stance": "support"})
    assert page.status_code == 302, page.get_data(as_text=True)[:400]
    result = _final(db_session, game)
    bram = game.characters["Bram"].id
    (side,) = [s for s in result.sides if s.finalist_id == bram]
    assert [p.character_id for p in side.votes] == [game.characters["Eli"].id]


def test_the_entry_page_offers_the_outsider_a_vote(db_session, final):
    game, entries = final
    game.login("Cleo")
    url = f"/c/{game.slug}/{game.characters['Ada'].slug}/{entries['Ada'].id}"
    html = game.auth._client.get(url).get_data(as_text=True)
    assert "An outsider cannot support or oppose" not in html
    assert "Your vote in the final" in html and 'value="support"' in html
    assert "fieldset disabled" not in html


def test_a_finalist_cannot_vote_in_the_final(db_session, final):
    game, entries = final
    answer = _vote(game, "Ada", entries["Bram"], "oppose")
    assert answer.status_code == 422
    assert "finalist" in answer.get_json()["detail"]


def test_outside_the_final_an_outsider_still_cannot_take_a_position(db_session, client):
    """Noteworthy: “An outsider still posts entries and notes normally, but cannot support
    or oppose challenges.”"""
    game = make_game(db_session, client, names=("Ada", "Bram", "Cleo", "Dov"))
    game.characters["Dov"].status = "outsider"
    db_session.add(game.characters["Dov"])
    challenge = hosted_blog.store_entry(
        session=db_session,
        character=game.characters["Ada"],
        title="Duel",
        body_markdown="Target: Bram",
        mood="Challenging",
        now=NOW + timedelta(minutes=5),
    )
    db_session.commit()
    answer = _vote(game, "Dov", challenge, "support")
    assert answer.status_code == 422
    assert answer.get_json()["detail"] == "An outsider cannot support or oppose challenges."


def test_the_target_cannot_take_a_position_on_an_open_challenge(db_session, client):
    """The target is read from the live tally: no challenge row exists before the turn
    is resolved, and the check used to miss it."""
    game = make_game(db_session, client)
    challenge = hosted_blog.store_entry(
        session=db_session,
        character=game.characters["Ada"],
        title="Duel",
        body_markdown="Target: Bram",
        mood="Challenging",
        now=NOW + timedelta(minutes=5),
    )
    db_session.commit()
    answer = _vote(game, "Bram", challenge, "oppose")
    assert answer.status_code == 422
    assert "target" in answer.get_json()["detail"]
