"""pbp.services.saved_drafts (issue #29 item 5): one draft per member per form, only the
form's own fields within its limits, deleted by posting in the posting transaction."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlmodel import select

from pbp.errors import NotFound, UserError
from pbp.models import Character, SavedDraft, User
from pbp.services import saved_drafts
from pbp.services.noteworthy import hosted_blog, turns
from tests.factories import make_campaign, make_characters

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 1})
    chars = make_characters(db_session, campaign)
    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=NOW)
    db_session.commit()
    return campaign, [db_session.get(User, c.user_id) for c in chars]


def _save(db_session, campaign, user, form="entry", target_id=0, **fields):
    return saved_drafts.save_draft(
        session=db_session,
        user=user,
        campaign=campaign,
        form=form,
        target_id=target_id,
        fields=fields,
        now=NOW,
    )


@pytest.mark.parametrize(
    ("key", "form", "target"),
    [("entry", "entry", 0), ("scene", "scene", 0), ("note-12", "note", 12), ("post-7", "post", 7)],
)
def test_a_drafts_key_names_its_form_and_target(key, form, target):
    assert saved_drafts.parse_key(key) == (form, target)
    assert saved_drafts.key_of(form, target) == key


@pytest.mark.parametrize("key", ["", "note", "note-0", "note-012", "entry-1", "post-x", "x"])
def test_a_key_that_names_no_form_is_not_found(key):
    with pytest.raises(NotFound):
        saved_drafts.parse_key(key)


def test_saving_again_replaces_and_an_empty_form_deletes(db_session, game):
    campaign, (ada, *_) = game
    _save(db_session, campaign, ada, title="One", body="first")
    _save(db_session, campaign, ada, title="One", body="second")
    (draft,) = db_session.exec(select(SavedDraft)).all()
    assert draft.fields == {"title": "One", "body": "second"} and draft.saved_at == NOW
    # The choices a form starts with are not something typed: nothing is kept.
    assert _save(db_session, campaign, ada, title=" ", body="", target="") is None
    assert db_session.exec(select(SavedDraft)).all() == []


def test_only_the_forms_fields_are_kept_each_within_its_limit(db_session, game):
    campaign, (ada, *_) = game
    with pytest.raises(UserError, match="no field 'password'"):
        _save(db_session, campaign, ada, body="x", password="hunter2")
    with pytest.raises(UserError, match="at most 20000"):
        _save(db_session, campaign, ada, body="x" * 20_001)
    with pytest.raises(UserError, match="one text, not a list"):
        _save(db_session, campaign, ada, body=["a", "b"])


def test_posting_the_note_deletes_only_its_own_draft(db_session, game):
    campaign, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=_character(db_session, campaign, ada),
        title="Harbour",
        body_markdown="Boats.",
        mood="Calm",
        now=NOW,
    )
    _save(db_session, campaign, bram, form="note", target_id=entry.id, body="half")
    _save(db_session, campaign, bram, body="an entry of bram's")
    _save(db_session, campaign, ada, form="note", target_id=entry.id, body="ada's own")
    hosted_blog.post_note(
        session=db_session,
        actor=bram,
        campaign=campaign,
        entry_id=entry.id,
        body="A whole note.",
        now=NOW,
        mail=None,
    )
    left = {(d.user_id, d.form) for d in db_session.exec(select(SavedDraft))}
    assert left == {(bram.id, "entry"), (ada.id, "note")}


def _character(db_session, campaign, user):
    return db_session.exec(
        select(Character).where(Character.campaign_id == campaign.id, Character.user_id == user.id)
    ).one()
