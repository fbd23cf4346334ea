"""A player's actions on the built-in blog hold every check themselves: called directly,
with no page or API in front, they refuse what the rules refuse (#18 item 1)."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.errors import Forbidden, UserError
from pbp.models import Membership, Turn, User
from pbp.services.noteworthy import hosted_blog
from tests.factories import make_campaign, make_characters, make_user

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)


def _game(session, turn_number: int):
    campaign = make_campaign(session, referee=make_user(session, "Referee"))
    chars = make_characters(session, campaign)
    session.add(
        Turn(campaign_id=campaign.id, number=turn_number, opened_at=NOW - timedelta(hours=1))
    )
    session.flush()
    return campaign, chars


def _user(session, character) -> User:
    return session.get(User, character.user_id)


def _write(session, campaign, who, *, mood="Calm", target=None, at=NOW):
    return hosted_blog.write_entry(
        session=session,
        actor=_user(session, who),
        campaign=campaign,
        title="Day",
        mood=mood,
        body="Words.",
        target_id=target.id if target else None,
        now=at,
        mail=None,
    )


def _note(session, campaign, who, entry, stance="none"):
    return hosted_blog.post_note(
        session=session,
        actor=_user(session, who),
        campaign=campaign,
        entry_id=entry.id,
        body="So.",
        stance=stance,
        now=NOW + timedelta(minutes=5),
        mail=None,
    )


def test_a_note_on_an_earlier_turns_entry_is_refused(db_session):
    """Noteworthy: "notes are permitted only on the current turn's entries"."""
    campaign, (ada, bram, *_) = _game(db_session, 3)
    before = _write(db_session, campaign, ada, at=NOW - timedelta(hours=2))
    with pytest.raises(UserError, match="only on the current turn's entries"):
        _note(db_session, campaign, bram, before)


def test_the_challenger_and_the_target_cannot_take_a_position_but_may_comment(db_session):
    """Noteworthy: "Each PC still in the game (except the challenger and target) may ...
    note clear support or opposition to the challenge"."""
    campaign, (ada, bram, cleo, *_) = _game(db_session, 3)
    duel = _write(db_session, campaign, ada, mood="Challenging", target=bram)
    with pytest.raises(UserError, match="The challenger cannot take a position"):
        _note(db_session, campaign, ada, duel, stance="support")
    with pytest.raises(UserError, match="The target cannot take a position"):
        _note(db_session, campaign, bram, duel, stance="oppose")
    assert _note(db_session, campaign, bram, duel).author_character_id == bram.id
    backed = _note(db_session, campaign, cleo, duel, stance="support")
    assert backed.body_html.startswith("<p>Support.</p>")


def test_an_outsider_cannot_take_a_position(db_session):
    """Noteworthy: "An outsider ... cannot support or oppose challenges"."""
    campaign, (ada, bram, cleo, *_) = _game(db_session, 3)
    duel = _write(db_session, campaign, ada, mood="Challenging", target=bram)
    cleo.status = "outsider"
    db_session.add(cleo)
    db_session.flush()
    with pytest.raises(UserError, match="An outsider cannot support or oppose"):
        _note(db_session, campaign, cleo, duel, stance="support")


def test_a_stance_that_is_no_position_is_refused(db_session):
    campaign, (ada, bram, *_) = _game(db_session, 3)
    entry = _write(db_session, campaign, ada)
    with pytest.raises(UserError, match="Support, Oppose or No position"):
        _note(db_session, campaign, bram, entry, stance="both")


def test_no_challenge_in_the_opening_turns(db_session):
    """Noteworthy: "No challenges are permitted in the first two turns of the game"."""
    campaign, (ada, bram, *_) = _game(db_session, 2)
    with pytest.raises(UserError, match="first 2 turns"):
        _write(db_session, campaign, ada, mood="Challenging", target=bram)


def test_a_challenge_names_one_target_and_one_a_turn(db_session):
    """Noteworthy: "you may challenge one PC per turn" and "You cannot challenge
    yourself"."""
    campaign, (ada, bram, *_) = _game(db_session, 3)
    with pytest.raises(UserError, match="exactly one target"):
        _write(db_session, campaign, ada, mood="Challenging")
    with pytest.raises(UserError, match="exactly one target"):
        _write(db_session, campaign, ada, mood="Challenging", target=ada)
    duel = _write(db_session, campaign, ada, mood="Challenging", target=bram)
    assert duel.body_html.startswith("<p>Target: Bram</p>")
    with pytest.raises(UserError, match="already challenged this turn"):
        _write(db_session, campaign, ada, mood="Challenging", target=bram)


def test_only_a_player_with_a_character_writes(db_session):
    campaign, _ = _game(db_session, 3)
    referee = db_session.exec(
        select(User)
        .join(Membership)
        .where(Membership.campaign_id == campaign.id, Membership.role == "referee")
    ).one()
    outsider = User(email="visitor@example.org", display_name="Visitor")
    db_session.add(outsider)
    db_session.flush()
    for who in (outsider, referee, None):
        with pytest.raises(Forbidden, match="only a player"):
            hosted_blog.write_entry(
                session=db_session,
                actor=who,
                campaign=campaign,
                title="t",
                mood="Calm",
                body="b",
                now=NOW,
                mail=None,
            )


def test_editing_anothers_entry_or_into_a_second_challenge_is_refused(db_session):
    """Editing to Challenging makes a challenge at the edit's time: one a turn still."""
    campaign, (ada, bram, *_) = _game(db_session, 3)
    calm = _write(db_session, campaign, ada)
    _write(db_session, campaign, ada, mood="Challenging", target=bram)

    def edit(who, mood):
        return hosted_blog.edit_entry(
            session=db_session,
            actor=_user(db_session, who),
            campaign=campaign,
            entry_id=calm.id,
            title="Day",
            mood=mood,
            body="Words.",
            now=NOW + timedelta(minutes=1),
            mail=None,
        )

    with pytest.raises(Forbidden, match="only the entry's author"):
        edit(bram, "Calm")
    with pytest.raises(UserError, match="already challenged this turn"):
        edit(ada, "Challenging")
    assert edit(ada, "Sly") == "changed"


def test_withdrawing_needs_ones_own_challenge(db_session):
    """Noteworthy: "You may withdraw your challenge ... but that still counts as your
    challenge for that turn"."""
    campaign, (ada, bram, *_) = _game(db_session, 3)
    calm = _write(db_session, campaign, ada)
    duel = _write(db_session, campaign, ada, mood="Challenging", target=bram)

    def withdraw(who, entry):
        return hosted_blog.withdraw_entry(
            session=db_session,
            actor=_user(db_session, who),
            campaign=campaign,
            entry_id=entry.id,
            now=NOW + timedelta(minutes=1),
            mail=None,
        )

    with pytest.raises(UserError, match="not a challenge"):
        withdraw(ada, calm)
    with pytest.raises(Forbidden, match="only the challenger"):
        withdraw(bram, duel)
    assert withdraw(ada, duel) == "changed"
    db_session.refresh(duel)
    assert duel.mood_raw == "Withdrawn" and "Target: Bram" in duel.body_html
    with pytest.raises(UserError, match="already challenged this turn"):
        _write(db_session, campaign, ada, mood="Challenging", target=bram)
