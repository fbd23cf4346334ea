"""services.noteworthy.play_mail: which stored notes and entries cause mail (the promise tests in
tests/web/test_mail_promises.py drive it through the pages and the API)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.models import Note, OutboxMessage
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
