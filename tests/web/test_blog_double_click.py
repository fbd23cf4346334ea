"""The built-in blog's forms on the declared path (pbp.web.actions): a double click posts
one entry and one note, a preview leaves the form's token unused, and an edit sent twice
keeps one revision."""

from __future__ import annotations

import re

import pytest
from sqlmodel import select

from pbp.models import Entry, EntryRevision, Note
from pbp.services.noteworthy import hosted_blog, turns
from tests.factories import make_campaign, make_characters
from tests.web.test_blog_pages import T0, _players, login_as, write

TOKEN = "a-one-time-blog-form-token-01"


@pytest.fixture
def clock(app):
    state = {"now": T0}
    app.config["PBP_CLOCK"] = lambda: state["now"]
    return state


@pytest.fixture
def game(db_session, clock):
    campaign = make_campaign(db_session, settings={"opening_turns": 1})
    chars = make_characters(db_session, campaign)
    _players(db_session, chars)
    turns.post_event(session=db_session, campaign=campaign, text="Turn one.", actor=None, now=T0)
    db_session.commit()
    return campaign, chars


def _entry(db_session, character, clock, title="T"):
    entry = hosted_blog.store_entry(
        session=db_session,
        character=character,
        title=title,
        body_markdown="b",
        mood="Calm",
        now=clock["now"],
    )
    db_session.commit()
    return entry


def test_a_double_click_posts_one_entry(client, auth, game, db_session):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    first = write(auth, campaign, title="Once", form_token=TOKEN)
    second = write(auth, campaign, title="Once", form_token=TOKEN)
    assert first.status_code == second.status_code == 302
    assert second.headers["Location"] == first.headers["Location"]
    assert second.headers.get("Form-Replayed") == "true"
    assert len(db_session.exec(select(Entry).where(Entry.title == "Once")).all()) == 1
    page = client.get(first.headers["Location"]).get_data(as_text=True)
    assert "Entry posted." in page and "was not sent twice" in page


def test_a_double_click_posts_one_note(client, auth, game, db_session, clock):
    campaign, (ada, bram, *_) = game
    entry = _entry(db_session, ada, clock)
    login_as(auth, db_session, bram)
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/notes"
    first = auth.post(url, {"body": "Well said.", "form_token": TOKEN})
    second = auth.post(url, {"body": "Well said.", "form_token": TOKEN})
    assert first.status_code == second.status_code == 302
    assert second.headers.get("Form-Replayed") == "true"
    assert len(db_session.exec(select(Note).where(Note.entry_id == entry.id)).all()) == 1


def test_two_notes_with_their_own_tokens_are_two_notes(client, auth, game, db_session, clock):
    """The token tells a double click from a second note that says the same."""
    campaign, (ada, bram, *_) = game
    entry = _entry(db_session, ada, clock)
    login_as(auth, db_session, bram)
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/notes"
    assert auth.post(url, {"body": "Again."}).status_code == 302
    assert auth.post(url, {"body": "Again."}).status_code == 302
    assert len(db_session.exec(select(Note).where(Note.entry_id == entry.id)).all()) == 2


def test_a_preview_leaves_the_token_for_the_post(client, auth, game, db_session):
    """The preview answers with the page, saving nothing; "Post" with the same form (and
    token) then posts once, and a second press of it is a replay."""
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    form = {"title": "Seen first", "body": "*Soft* steps", "form_token": TOKEN}
    preview = write(auth, campaign, action="preview", **form)
    html = preview.get_data(as_text=True)
    assert preview.status_code == 200 and "<em>Soft</em> steps" in html
    assert 'value="Seen first"' in html  # the form as typed, below the preview
    assert db_session.exec(select(Entry)).all() == []
    posted = write(auth, campaign, action="post", **form)
    assert posted.status_code == 302 and posted.headers.get("Form-Replayed") is None
    again = write(auth, campaign, action="post", **form)
    assert again.headers.get("Form-Replayed") == "true"
    assert len(db_session.exec(select(Entry).where(Entry.title == "Seen first")).all()) == 1


def test_an_edit_preview_saves_nothing_and_a_double_save_keeps_one_revision(
    client, auth, game, db_session, clock
):
    campaign, (ada, *_) = game
    entry = _entry(db_session, ada, clock, title="Before")
    login_as(auth, db_session, ada)
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/edit"
    form = {"title": "After", "mood": "Calm", "body": "New words", "form_token": TOKEN}
    preview = auth.post(url, {**form, "action": "preview"})
    assert preview.status_code == 200 and "New words" in preview.get_data(as_text=True)
    assert re.search(r'id="title"[^>]*value="After"', preview.get_data(as_text=True))
    db_session.refresh(entry)
    assert entry.title == "Before"
    assert auth.post(url, {**form, "action": "save"}).status_code == 302
    assert auth.post(url, {**form, "action": "save"}).headers.get("Form-Replayed") == "true"
    revisions = db_session.exec(
        select(EntryRevision).where(EntryRevision.entry_id == entry.id)
    ).all()
    assert len(revisions) == 2  # as stored, then the one edit
