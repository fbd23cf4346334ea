"""Issue #29 item 3, the rules reading of threaded notes: a reply takes a position in a
challenge only if it carries a stance marker itself (docs/rules-notes.md). Checked through
the built-in blog's own action and the tally, on both databases."""

from datetime import UTC, datetime, timedelta

import pytest

from pbp.models import Turn, User
from pbp.services.noteworthy import hosted_blog
from pbp.services.noteworthy import tally as tally_service
from tests.factories import make_campaign, make_characters, make_user

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)

pytestmark = pytest.mark.db


@pytest.fixture
def duel(db_session):
    """Turn 3: Ada challenges Bram; Cleo, Dov and Eli may take positions."""
    campaign = make_campaign(db_session, referee=make_user(db_session, "Referee"))
    chars = make_characters(db_session, campaign)
    turn = Turn(campaign_id=campaign.id, number=3, opened_at=NOW - timedelta(hours=1))
    db_session.add(turn)
    db_session.flush()
    ada, bram = chars[:2]
    entry = hosted_blog.write_entry(
        session=db_session,
        actor=db_session.get(User, ada.user_id),
        campaign=campaign,
        title="Bram lies",
        mood="Challenging",
        body="He lied to the guild.",
        target_id=bram.id,
        now=NOW,
        mail=None,
    )
    return campaign, turn, entry, chars


def _say(session, campaign, entry, who, body, *, reply_to=None, minutes=5, stance="none"):
    return hosted_blog.post_note(
        session=session,
        actor=session.get(User, who.user_id),
        campaign=campaign,
        entry_id=entry.id,
        body=body,
        stance=stance,
        reply_to=None if reply_to is None else reply_to.id,
        now=NOW + timedelta(minutes=minutes),
        mail=None,
    )


def _positions(session, campaign, turn, entry):
    result = tally_service.tally(session=session, campaign=campaign, turn=turn)
    challenge = result.challenge_for(entry.id)
    assert challenge is not None
    return (
        sorted(p.character_id for p in challenge.supporters),
        sorted(p.character_id for p in challenge.opposers),
    )


def test_a_reply_agreeing_with_a_supporting_note_takes_no_position(db_session, duel):
    """Each PC “may, if he or she wishes, note clear support or opposition to the
    challenge”: a reply of agreement carries no marker of its own, so it inherits nothing
    from the "Support." it answers."""
    campaign, turn, entry, (_ada, _bram, cleo, dov, *_) = duel
    backing = _say(db_session, campaign, entry, cleo, "Support. I saw the ledger.")
    reply = _say(db_session, campaign, entry, dov, "Agreed, wholeheartedly.", reply_to=backing)
    assert (backing.stance, reply.stance) == ("support", "none")
    assert reply.parent_note_id == backing.id
    assert _positions(db_session, campaign, turn, entry) == ([cleo.id], [])


def test_a_reply_quoting_a_marker_is_read_from_its_own_words(db_session, duel):
    """A quoted "Support." is the quoted writer's marker: each PC may “note clear support or
    opposition to the challenge” in their own note. The same text on the entry itself, not
    as a reply, reads as a quote always has."""
    campaign, turn, entry, (_ada, _bram, cleo, dov, eli, _fay) = duel
    backing = _say(db_session, campaign, entry, cleo, "Support.")
    quoted = "> Support.\n\nYou were not even there."
    reply = _say(db_session, campaign, entry, dov, quoted, reply_to=backing, minutes=6)
    on_entry = _say(db_session, campaign, entry, eli, quoted, minutes=7)
    assert (reply.stance, on_entry.stance) == ("none", "support")
    assert _positions(db_session, campaign, turn, entry) == (sorted([cleo.id, eli.id]), [])


def test_a_reply_with_its_own_marker_takes_a_position_and_the_latest_holds(db_session, duel):
    """“If a PC notes both support and opposition to the challenge, the PC's most recent
    note holds sway.” A reply that carries a marker of its own is such a note, wherever it
    sits in a thread."""
    campaign, turn, entry, (_ada, _bram, cleo, dov, *_) = duel
    backing = _say(db_session, campaign, entry, cleo, "Support.")
    doubt = _say(db_session, campaign, entry, dov, "Are you sure?", reply_to=backing, minutes=6)
    change = _say(
        db_session, campaign, entry, cleo, "No.", reply_to=doubt, minutes=7, stance="oppose"
    )
    assert change.stance == "oppose"
    assert change.body_html.startswith("<p>Oppose.</p>")
    assert _positions(db_session, campaign, turn, entry) == ([], [cleo.id])
