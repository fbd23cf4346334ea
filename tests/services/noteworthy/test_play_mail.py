"""services.noteworthy.play_mail: which stored notes and entries cause mail (the promise tests in
tests/web/test_mail_promises.py drive it through the pages and the API)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.models import Note, OutboxMessage, User
from pbp.services.noteworthy import play_mail
from tests.factories import make_campaign, make_characters
from tests.services.mail.test_outbox import NOW, SETTINGS, _entry, post_event


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, name="Salon of Knives")
    return campaign, make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo"))


def _note(session, entry, author, source):
    note = Note(entry_id=entry.id, source_id=source, author_character_id=author.id, body_html="x")
    session.add(note)
    session.flush()
    return note


def test_notes_on_entries_outside_the_game_mail_nobody(db_session, game):
    """A blog's first read brings its old posts (no turn) with their comments."""
    _campaign, (ada, bram, _cleo) = game
    old = _entry(db_session, ada, "Before the game", NOW - timedelta(days=400))
    note = _note(db_session, old, bram, "old-1")
    assert play_mail.notes_arrived(session=db_session, mail=SETTINGS, notes=[note], now=NOW) == []


def test_notes_on_two_entries_make_one_mail_each(db_session, game):
    campaign, (ada, bram, cleo) = game
    turn = post_event(db_session, campaign)
    first, second = (_entry(db_session, who, f"{who.name}'s", NOW) for who in (ada, bram))
    for entry in (first, second):
        entry.turn_id = turn.id
    notes = [
        _note(db_session, first, bram, "a"),
        _note(db_session, first, cleo, "b"),
        _note(db_session, second, cleo, "c"),
        _note(db_session, second, bram, "d"),  # Bram's own: left out of his mail
    ]
    rows = play_mail.notes_arrived(session=db_session, mail=SETTINGS, notes=notes, now=NOW)
    assert [r.subject.split("] ")[1] for r in rows] == [
        "2 notes on Ada's entry",
        "Cleo left a note on Bram's entry",
    ]
    again = play_mail.notes_arrived(session=db_session, mail=SETTINGS, notes=notes, now=NOW)
    assert [r.id for r in again] == [r.id for r in rows]  # a retry queues nothing twice
    kinds = db_session.exec(select(OutboxMessage.kind).where(OutboxMessage.kind == "note")).all()
    assert len(kinds) == 2


# -- notes read from a feed as a character's --------------------------------------------------


def _stanced(session, entry, author, source, stance, body="<p>Well said.</p>"):
    note = _note(session, entry, author, source)
    note.stance, note.body_html = stance, body
    session.add(note)
    session.flush()
    return note


def _email(session, character) -> str:
    return session.get(User, character.user_id).email


def _credited(session, notes):
    return play_mail.notes_credited(session=session, mail=SETTINGS, notes=notes, now=NOW)


def test_notes_read_as_a_characters_tell_their_player_how_they_were_read(db_session, game):
    """A blog's owner can edit what its comments say, the commenter's profile address
    included: the player whose character a note is credited to hears of it, with the
    stance pbp read, so a note they did not write does not count unseen."""
    campaign, (ada, bram, cleo) = game
    turn = post_event(db_session, campaign)
    on_ada, on_cleo = (_entry(db_session, who, f"{who.name}'s", NOW) for who in (ada, cleo))
    for entry in (on_ada, on_cleo):
        entry.turn_id = turn.id
    notes = [
        _stanced(db_session, on_ada, bram, "a", "support"),
        _stanced(db_session, on_cleo, bram, "b", "oppose", "<p>Never.</p>"),
        _stanced(db_session, on_ada, cleo, "c", "ambiguous"),
    ]
    rows = _credited(db_session, notes)
    assert [(r.recipient, r.subject.split("] ")[1]) for r in rows] == [
        (_email(db_session, bram), "2 notes count as Bram's"),
        (_email(db_session, cleo), "Your note on Ada's entry counts as Cleo's"),
    ]
    assert "read as support: Well said." in rows[0].body_text
    assert "read as opposition: Never." in rows[0].body_text
    assert "read as both ways: the referee will rule" in rows[1].body_text
    assert "Tell the referee" in rows[0].body_text
    assert [r.id for r in _credited(db_session, notes)] == [r.id for r in rows]  # no twice


def test_no_word_of_own_blog_unmapped_or_out_of_game_notes(db_session, game):
    campaign, (ada, bram, _cleo) = game
    turn = post_event(db_session, campaign)
    game_entry = _entry(db_session, ada, "Ada's", NOW)
    game_entry.turn_id = turn.id
    old = _entry(db_session, bram, "Before the game", NOW - timedelta(days=400))
    anonymous = _stanced(db_session, game_entry, bram, "x", "support")
    anonymous.author_character_id = None
    notes = [
        _stanced(db_session, game_entry, ada, "own", "support"),  # Ada on her own blog
        anonymous,  # mapped to nobody
        _stanced(db_session, old, ada, "old", "support"),  # no turn: nobody's news
    ]
    assert _credited(db_session, notes) == []


def test_a_player_who_switched_it_off_gets_none(db_session, game):
    from pbp.services import campaigns
    from pbp.services.mail import preferences

    campaign, (ada, bram, _cleo) = game
    turn = post_event(db_session, campaign)
    entry = _entry(db_session, ada, "Ada's", NOW)
    entry.turn_id = turn.id
    user = db_session.get(User, bram.user_id)
    member = campaigns.require_member(session=db_session, campaign=campaign, user=user)
    preferences.set_preference(
        session=db_session, membership=member, preference="notes_as_mine", on=False
    )
    assert _credited(db_session, [_stanced(db_session, entry, bram, "a", "support")]) == []
