"""Issue 16, item 7: a referee's ruling note is the referee's until the turn is resolved.

The public challenges (API `GET .../turns/<n>/challenges`, open to every member) explain
each challenge; a ruling's explanation there must not carry the referee's note while the
turn is in play. The referee's tally keeps it.
"""

from __future__ import annotations

from datetime import timedelta

from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import hosted_blog, turns
from tests.helpers import API_NOW as NOW
from tests.helpers import PASSWORD

SECRET = "Cleo told me privately that Bram cheated."
HOUR = timedelta(hours=1)


def _rule(session, world, kind, value, reason=SECRET):
    turns.add_ruling(
        session=session,
        campaign=world.campaign,
        turn=world.turn,
        kind=kind,
        subject_id=world.challenge.id,
        value=value,
        reason=reason,
        actor=None,
        now=NOW + HOUR,
    )


def _everything(payload) -> str:
    return repr(payload)


def test_ruling_notes_stay_out_of_the_public_challenges_until_resolved(api, world, db_session):
    chars = world.characters
    note = hosted_blog.store_note(
        session=db_session,
        entry=world.challenge,
        author=chars["Cleo"],
        body_markdown="Support",
        now=NOW + HOUR,
    )
    _rule(db_session, world, "target", chars["Bram"].id)
    _rule(db_session, world, "validity", "valid", reason="Valid: " + SECRET)
    turns.add_ruling(
        session=db_session,
        campaign=world.campaign,
        turn=world.turn,
        kind="note_validity",
        subject_id=note.id,
        value="ignore",
        reason="Ignored: " + SECRET,
        actor=None,
        now=NOW + HOUR,
    )
    db_session.commit()
    path = f"/campaigns/{world.slug}/turns/1/challenges"
    for role in ("player", "other_player", "anonymous"):
        answer = api.get(path, token=world.tokens[role])
        if answer.status_code != 200:
            continue  # a caller who cannot read the campaign sees nothing at all
        (challenge,) = answer.get_json()["items"]
        assert SECRET not in _everything(challenge), role
        assert "The referee ruled the target is Bram." in challenge["explanation"][0]
        assert "The referee ruled the challenge valid." in challenge["explanation"]
    referee = api.get(f"/campaigns/{world.slug}/turns/1/tally", token=world.tokens["referee"])
    assert SECRET in _everything(referee.get_json()["challenges"])


def test_ruling_notes_are_public_once_the_turn_is_resolved(api, world, db_session):
    _rule(db_session, world, "target", world.characters["Bram"].id)
    turns.close_turn(session=db_session, campaign=world.campaign, actor=None, now=NOW + 5 * HOUR)
    turns.resolve_turn(session=db_session, campaign=world.campaign, actor=None, now=NOW + 6 * HOUR)
    db_session.commit()
    answer = api.get(f"/campaigns/{world.slug}/turns/1/challenges", token=world.tokens["player"])
    (challenge,) = answer.get_json()["items"]
    assert SECRET in challenge["explanation"][0]


def test_ruling_notes_stay_off_the_turn_page_until_resolved(client, auth, world, db_session):
    """The turn page shows every member the live challenges' explanations: without the
    referee's notes while the turn is in play."""
    _rule(db_session, world, "target", world.characters["Bram"].id)
    player = world.users["player"]
    player.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    auth.login(player)
    page = client.get(f"/c/{world.slug}/turns/1").get_data(as_text=True)
    assert "The referee ruled the target is Bram." in page
    assert SECRET not in page
