"""Issue #27 item 2: a player hides their own entry while its turn is open. The service
holds every check; the tally reads the turn as if the entry had never been posted; its
revisions stay for the referee; the change is audited."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.errors import Forbidden, UserError
from pbp.models import AuditLog, EntryRevision, User
from pbp.services import audit_log, export
from pbp.services.noteworthy import hidden_entries, hosted_blog, play, reminders, turns
from pbp.services.noteworthy import tally as tally_service
from tests.factories import make_campaign, make_characters, make_user

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)


@pytest.fixture
def game(db_session):
    referee = make_user(db_session, "Referee")
    campaign = make_campaign(db_session, referee=referee, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign)
    turn = turns.post_event(
        session=db_session, campaign=campaign, text="Go.", actor=None, now=NOW - timedelta(hours=1)
    )
    db_session.flush()
    return campaign, referee, turn, chars


def _user(session, character) -> User:
    return session.get(User, character.user_id)


def _write(session, campaign, who, *, mood="Calm", target=None, title="Day"):
    return hosted_blog.write_entry(
        session=session,
        actor=_user(session, who),
        campaign=campaign,
        title=title,
        mood=mood,
        body="Words.",
        target_id=target.id if target else None,
        now=NOW,
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


def _hide(session, campaign, actor, entry, at=NOW + timedelta(minutes=10)):
    return hidden_entries.hide_entry(
        session=session, actor=actor, campaign=campaign, entry_id=entry.id, now=at
    )


def test_the_author_hides_their_entry_and_it_is_audited(db_session, game):
    campaign, _, turn, (ada, *_) = game
    entry = _write(db_session, campaign, ada, title="Regrets")
    hidden = _hide(db_session, campaign, _user(db_session, ada), entry)
    assert hidden.hidden_at == NOW + timedelta(minutes=10)
    row = db_session.exec(select(AuditLog).where(AuditLog.action == "entry.hidden")).one()
    assert row.actor_id == ada.user_id and row.detail["entry_id"] == entry.id
    lines = audit_log.audit_lines(session=db_session, campaign=campaign)
    (line,) = [a for a in lines if "hid" in a.sentence]
    assert line.sentence.startswith("hid Ada's entry “Regrets” in turn 1")


def test_only_the_author_may_hide_it(db_session, game):
    campaign, referee, _, (ada, bram, *_) = game
    entry = _write(db_session, campaign, ada)
    with pytest.raises(Forbidden, match="only the entry's author can hide it"):
        _hide(db_session, campaign, _user(db_session, bram), entry)
    with pytest.raises(Forbidden, match="only a player"):
        _hide(db_session, campaign, referee, entry)
    with pytest.raises(Forbidden, match="log in first"):
        _hide(db_session, campaign, None, entry)
    assert entry.hidden_at is None


def test_only_while_its_turn_is_open(db_session, game):
    campaign, _, _, (ada, *_) = game
    entry = _write(db_session, campaign, ada)
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=NOW)
    with pytest.raises(UserError, match="only while its turn is open"):
        _hide(db_session, campaign, _user(db_session, ada), entry)
    assert entry.hidden_at is None


def test_a_hidden_entry_takes_no_edit_note_or_second_hiding(db_session, game):
    campaign, _, _, (ada, bram, *_) = game
    entry = _write(db_session, campaign, ada)
    _hide(db_session, campaign, _user(db_session, ada), entry)
    with pytest.raises(UserError, match="you hid this entry"):
        _hide(db_session, campaign, _user(db_session, ada), entry)
    with pytest.raises(UserError, match="Its author hid this entry"):
        _note(db_session, campaign, bram, entry)


def test_a_challenge_cannot_be_hidden_not_even_once_withdrawn(db_session, game):
    """Noteworthy: a withdrawn challenge "still counts as your challenge for that turn".
    Hiding one would take it out of the tally and free its author to challenge again, so
    a challenge, live or withdrawn, cannot be hidden (docs/rules-notes.md)."""
    campaign, _, turn, (ada, bram, *_) = game
    duel = _write(db_session, campaign, ada, mood="Challenging", target=bram)
    with pytest.raises(UserError, match="a challenge cannot be hidden"):
        _hide(db_session, campaign, _user(db_session, ada), duel)
    hosted_blog.withdraw_entry(
        session=db_session,
        actor=_user(db_session, ada),
        campaign=campaign,
        entry_id=duel.id,
        now=NOW,
        mail=None,
    )
    with pytest.raises(UserError, match="a challenge cannot be hidden"):
        _hide(db_session, campaign, _user(db_session, ada), duel)
    option = play.challenge_option(session=db_session, campaign=campaign, character=ada, turn=turn)
    assert not option.allowed  # still this turn's challenge


def test_the_tally_reads_the_turn_as_if_it_had_never_been_posted(db_session, game):
    """docs/rules-notes.md: the notes on a hidden entry no longer count."""
    campaign, _, turn, (ada, bram, cleo, dov, *_) = game
    duel = _write(db_session, campaign, bram, mood="Challenging", target=ada)
    answer = _write(db_session, campaign, ada)
    _note(db_session, campaign, cleo, answer, stance="support")
    _note(db_session, campaign, dov, duel, stance="oppose")
    before = tally_service.load_turn(session=db_session, campaign=campaign, turn=turn)
    assert {e.id for e in before.entries} == {duel.id, answer.id} and len(before.notes) == 2

    _hide(db_session, campaign, _user(db_session, ada), answer)
    rows = tally_service.load_turn(session=db_session, campaign=campaign, turn=turn)
    assert [e.id for e in rows.entries] == [duel.id]  # its notes no longer count either
    assert len(rows.notes) == 1
    (challenge,) = tally_service.tally(session=db_session, campaign=campaign, turn=turn).challenges
    assert challenge.entry_id == duel.id and len(challenge.opposers) == 1


def test_a_character_whose_only_entry_is_hidden_has_posted_nothing(db_session, game):
    campaign, _, turn, (ada, *_) = game
    entry = _write(db_session, campaign, ada)

    def missing():
        rows = reminders.missing_posters(session=db_session, campaign=campaign, turn=turn)
        return {c.name for c, _ in rows}

    assert "Ada" not in missing()
    _hide(db_session, campaign, _user(db_session, ada), entry)
    assert "Ada" in missing()


def test_its_revisions_stay_for_the_referee(db_session, game):
    campaign, referee, _, (ada, bram, *_) = game
    entry = _write(db_session, campaign, ada, title="First")
    hosted_blog.edit_entry(
        session=db_session,
        actor=_user(db_session, ada),
        campaign=campaign,
        entry_id=entry.id,
        title="Second",
        mood="Calm",
        body="Other words.",
        now=NOW + timedelta(minutes=1),
        mail=None,
    )
    _hide(db_session, campaign, _user(db_session, ada), entry)
    kept = db_session.exec(select(EntryRevision).where(EntryRevision.entry_id == entry.id)).all()
    assert [r.title for r in kept] == ["First", "Second"]
    assert [v.title for v in hidden_entries.versions(session=db_session, entry=entry)] == [
        "First",
        "Second",
    ]
    see = {
        who: hidden_entries.may_see(session=db_session, campaign=campaign, entry=entry, user=user)
        for who, user in (
            ("referee", referee),
            ("author", _user(db_session, ada)),
            ("other", _user(db_session, bram)),
            ("visitor", None),
        )
    }
    assert see == {"referee": True, "author": True, "other": False, "visitor": False}


def test_the_archive_leaves_it_out_and_the_referees_export_keeps_it(db_session, game):
    """The archive is the story people keep; the JSON export is the referee's record."""
    campaign, _, _, (ada, bram, *_) = game
    shown = _write(db_session, campaign, ada, title="Shown")
    secret = _write(db_session, campaign, ada, title="Hidden one")
    _note(db_session, campaign, bram, secret)
    _hide(db_session, campaign, _user(db_session, ada), secret)
    archive = export.gather_archive(session=db_session, campaign=campaign)
    kept = [item.entry.id for items in archive.entries_by_author.values() for item in items]
    assert kept == [shown.id]
    data = export.export_campaign(session=db_session, campaign=campaign)
    (row,) = [e for e in data["entries"] if e["id"] == secret.id]
    assert row["hidden_at"]
