"""Noteworthy issue 17, items 4 and 6: the API's tally of a resolved turn is the stored
result, with later arrivals beside it; the tally of a final carries the final; every
challenge, position and note names the character and the entry beside the ids."""

from __future__ import annotations

from datetime import timedelta

from adapters.base import FeedNote
from pbp.services import campaigns
from pbp.services.noteworthy import hosted_blog, ingest, turns
from tests.helpers import API_NOW as NOW

HOUR = timedelta(hours=1)


def _note(session, entry, author, text, at):
    return hosted_blog.store_note(
        session=session, entry=entry, author=author, body_markdown=text, now=at
    )


def test_a_resolved_turns_tally_is_the_stored_result(api, world, db_session):
    """A note dated before the close but first seen after the resolve is listed as "arrived
    after the turn was resolved" for the referee and changes nothing: still 3-0."""
    ada, chars = world.challenge, world.characters
    for name in ("Cleo", "Dov", "Eli"):
        _note(db_session, ada, chars[name], "Support", NOW + HOUR)
    turns.close_turn(session=db_session, campaign=world.campaign, actor=None, now=NOW + 5 * HOUR)
    turns.resolve_turn(session=db_session, campaign=world.campaign, actor=None, now=NOW + 6 * HOUR)
    late = FeedNote(
        source_id="urn:test:late",
        url=None,
        parent_source_id=None,
        parent_url=None,
        author_name="Fay",
        author_uri=None,
        published=NOW + 2 * HOUR,  # before the close
        updated=None,
        body_html="<p>Oppose</p>",
        title="",
        fallback_key="urn:test:late",
    )
    ingest.upsert_note(
        session=db_session, entry=ada, item=late, author_id=chars["Fay"].id, now=NOW + 9 * HOUR
    )
    db_session.commit()

    answer = api.get(f"/campaigns/{world.slug}/turns/1/tally", token=world.tokens["referee"])
    assert answer.status_code == 200, answer.get_json()
    tally = answer.get_json()
    (challenge,) = tally["challenges"]
    assert (len(challenge["supporters"]), len(challenge["opposers"])) == (3, 0)
    assert tally["resolved"] is True
    (arrival,) = tally["arrived_after_resolution"]
    assert arrival["kind"] == "note" and arrival["entry_id"] == ada.id
    assert arrival["character_id"] == chars["Fay"].id
    assert arrival["reason"] == "arrived after the turn was resolved"
    public = api.get(f"/campaigns/{world.slug}/turns/1/challenges", token=world.tokens["player"])
    (shown,) = public.get_json()["items"]
    assert (len(shown["supporters"]), len(shown["opposers"])) == (3, 0)


def test_a_tally_names_characters_and_entries_beside_the_ids(api, world, db_session):
    """Every challenge, position and ignored note carries the character's name and the
    entry's title and URL."""
    ada, chars = world.challenge, world.characters
    _note(db_session, ada, chars["Cleo"], "Support", NOW + HOUR)
    _note(db_session, ada, chars["Bram"], "Oppose", NOW + HOUR)  # the target: ignored
    db_session.commit()
    tally = api.get(f"/campaigns/{world.slug}/turns/1/tally", token=world.tokens["referee"])
    (challenge,) = tally.get_json()["challenges"]
    url = f"/c/{world.slug}/{chars['Ada'].slug}/{ada.id}"
    assert (challenge["challenger_name"], challenge["target_name"]) == ("Ada", "Bram")
    assert (challenge["entry_title"], challenge["entry_url"]) == ("Pistols at dawn", url)
    (support,) = challenge["supporters"]
    assert support["character_name"] == "Cleo"
    assert (support["entry_id"], support["entry_title"], support["entry_url"]) == (
        ada.id,
        "Pistols at dawn",
        url,
    )
    (ignored,) = tally.get_json()["ignored_notes"]
    assert (ignored["author_name"], ignored["reason"], ignored["entry_url"]) == (
        "Bram",
        "target",
        url,
    )


def test_the_tally_of_a_final_gives_the_votes_the_ignored_votes_and_the_winner(
    api, world, db_session
):
    """Noteworthy endnotes: "After a fair interval the referee totals the votes and resolves
    the challenge normally; the winner of the challenge wins the game." The API's tally of
    the final lists the votes per finalist, the ignored votes with reasons, and the winner;
    its standings say "winner"."""
    referee = world.users["referee"]
    final = campaigns.create_campaign(
        session=db_session, referee=referee, name="Final Api", settings={"opening_turns": 0}
    )
    cast = {
        name: campaigns.add_character(session=db_session, campaign=final, name=name)
        for name in ("Ada", "Bram", "Cleo", "Dov")
    }
    for name in ("Cleo", "Dov"):
        cast[name].status = "outsider"
        db_session.add(cast[name])
    turns.post_event(session=db_session, campaign=final, text="Duel.", actor=None, now=NOW)
    mine = hosted_blog.store_entry(
        session=db_session,
        character=cast["Ada"],
        title="I take the city",
        body_markdown="Mine.",
        mood="Triumphant",
        now=NOW,
    )
    hosted_blog.store_entry(
        session=db_session,
        character=cast["Bram"],
        title="The city takes me",
        body_markdown="His.",
        mood="Grim",
        now=NOW,
    )
    _note(db_session, mine, cast["Cleo"], "Support", NOW + HOUR)
    _note(db_session, mine, cast["Dov"], "Support", NOW + HOUR)
    _note(db_session, mine, cast["Bram"], "Oppose", NOW + HOUR)  # a finalist: ignored
    turns.close_turn(session=db_session, campaign=final, actor=None, now=NOW + 5 * HOUR)
    db_session.commit()

    tally = api.get(f"/campaigns/{final.slug}/turns/1/tally", token=world.tokens["referee"])
    assert tally.status_code == 200, tally.get_json()
    body = tally.get_json()
    sides = {side["finalist_name"]: side for side in body["final"]["sides"]}
    assert [v["character_name"] for v in sides["Ada"]["votes"]] == ["Cleo", "Dov"]
    assert sides["Bram"]["votes"] == []
    assert sides["Ada"]["entries"][0]["entry_title"] == "I take the city"
    assert {v["entry_title"] for v in sides["Ada"]["votes"]} == {"I take the city"}
    (ignored,) = body["final"]["ignored"]
    assert (ignored["author_name"], ignored["reason"]) == ("Bram", "finalist")
    assert (body["final"]["winner_id"], body["final"]["winner_name"]) == (cast["Ada"].id, "Ada")
    standings = {s["name"]: s["status"] for s in body["standings"]}
    assert standings == {"Ada": "winner", "Bram": "outsider", "Cleo": "outsider", "Dov": "outsider"}
