"""Issue #29 item 5, "Drafts that survive": the entry, note and forum-post forms keep a
draft on the server. These are the pages without any script: the "Save draft" button
sends the same form to the draft's address (its `formaction`), the form reopens with the
draft after a logout, a closed tab or a refused submit, and posting deletes it."""

from __future__ import annotations

import html
import re

import pytest
from sqlmodel import select

from pbp.models import SavedDraft, User
from pbp.services.noteworthy import hosted_blog
from pbp.web import actions
from pbp.web import forum as forum_web
from tests.services.forum.tables import make_table, write
from tests.web import test_blog_pages as blog_tests
from tests.web.test_blog_pages import login_as

# The blog pages' game (turn 1 open, six players) and clock, shared rather than copied.
game, clock = blog_tests.game, blog_tests.clock

T_BODY = "The fog came in over the pier and I had not yet decided whether to"


def _save_button(page) -> str:
    """The "Save draft" button's address: the form is sent there, without any script."""
    text = page.get_data(as_text=True)
    button = r'<button formaction="([^"]+)" formnovalidate name="action" value="draft">'
    found = re.search(button, text)
    assert found, "the form has a Save draft button"
    return html.unescape(found.group(1))


def _drafts(db_session) -> list[SavedDraft]:
    db_session.expire_all()
    return list(db_session.exec(select(SavedDraft)).all())


def _entry_form(**typed):
    return {"title": "Fog", "mood": "Calm", "target": "", "body": T_BODY, **typed}


def test_save_draft_without_script_keeps_a_half_written_entry_across_a_logout(
    client, auth, game, db_session
):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    page = client.get(f"/c/{campaign.slug}/write")
    url = _save_button(page)
    assert url == f"/c/{campaign.slug}/drafts/entry"
    answer = auth.post(url, {**_entry_form(), "action": "draft"})
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/write")
    assert "Draft saved" in client.get(answer.headers["Location"]).get_data(as_text=True)

    auth.logout()
    login_as(auth, db_session, ada)
    text = client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)
    assert T_BODY in text and 'value="Fog"' in text and "Your draft, saved" in text


def test_posting_the_entry_deletes_its_draft(client, auth, game, db_session):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    auth.post(f"/c/{campaign.slug}/drafts/entry", _entry_form())
    assert len(_drafts(db_session)) == 1
    posted = auth.post(f"/c/{campaign.slug}/write", {**_entry_form(), "action": "post"})
    assert posted.status_code == 302
    assert _drafts(db_session) == []
    assert T_BODY not in client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)


def test_a_refused_entry_keeps_its_draft_for_the_next_visit(client, auth, game, db_session):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    auth.post(f"/c/{campaign.slug}/drafts/entry", _entry_form())
    refused = auth.post(f"/c/{campaign.slug}/write", {**_entry_form(mood=""), "action": "post"})
    assert refused.status_code == 422
    # The tab is closed on the refusal; the form opens again with the draft.
    assert [d.form for d in _drafts(db_session)] == ["entry"]
    assert T_BODY in client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)


def test_one_draft_per_member_per_form_and_none_for_anyone_else(client, auth, game, db_session):
    campaign, (ada, bram, *_) = game
    login_as(auth, db_session, ada)
    url = f"/c/{campaign.slug}/drafts/entry"
    auth.post(url, _entry_form(body="first words"))
    auth.post(url, _entry_form(body="second words"))
    (draft,) = _drafts(db_session)
    assert draft.fields["body"] == "second words" and draft.user_id == ada.user_id
    auth.logout()
    login_as(auth, db_session, bram)
    text = client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)
    assert "second words" not in text and "Your draft" not in text
    auth.post(url, _entry_form(body="bram's own"))
    assert sorted(d.fields["body"] for d in _drafts(db_session)) == ["bram's own", "second words"]


def test_the_autosave_is_answered_204_and_an_empty_form_keeps_no_draft(
    client, auth, game, db_session
):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    url = f"/c/{campaign.slug}/drafts/entry"
    answer = auth.post(url, _entry_form(), headers={"X-Draft-Autosave": "1"})
    assert answer.status_code == 204 and answer.get_data() == b""
    assert len(_drafts(db_session)) == 1
    auth.post(url, _entry_form(title="", mood="", body=""), headers={"X-Draft-Autosave": "1"})
    assert _drafts(db_session) == []


def test_discarding_the_draft_empties_the_form(client, auth, game, db_session):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    auth.post(f"/c/{campaign.slug}/drafts/entry", _entry_form())
    text = client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)
    assert f'action="/c/{campaign.slug}/drafts/entry/discard"' in text
    assert auth.post(f"/c/{campaign.slug}/drafts/entry/discard").status_code == 302
    assert _drafts(db_session) == []
    assert T_BODY not in client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)


def test_a_draft_too_long_is_refused_beside_the_form_as_typed(client, auth, game, db_session):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    long_title = "T" * 1001
    page = auth.post(f"/c/{campaign.slug}/drafts/entry", _entry_form(title=long_title))
    text = page.get_data(as_text=True)
    assert page.status_code == 422 and "at most 1000 characters" in text
    assert long_title in text and T_BODY in text
    assert _drafts(db_session) == []


def test_a_visitor_and_a_stranger_keep_no_draft(client, auth, game, db_session):
    campaign, (ada, *_) = game
    visitor = auth.post(f"/c/{campaign.slug}/drafts/entry", _entry_form())
    assert visitor.status_code == 302 and "/login" in visitor.headers["Location"]
    auth.login(auth.create_user(display_name="Stranger"))
    assert auth.post(f"/c/{campaign.slug}/drafts/entry", _entry_form()).status_code == 403
    auth.logout()
    login_as(auth, db_session, ada)
    for key in ("gossip", "note-999999", "post-1", "entry-1", "note-0"):
        assert auth.post(f"/c/{campaign.slug}/drafts/{key}", _entry_form()).status_code == 404
    assert _drafts(db_session) == []


def test_the_draft_action_is_declared_without_a_one_time_token(app):
    """Saved every 10 s from the same form: not `creates=True`, which would answer the
    second save with the first's answer and save nothing."""
    assert actions.DECLARED["drafts.save"].creates is False
    assert actions.DECLARED["drafts.save"].role == "member"


def test_drafts_are_rate_limited_per_account(client, auth, game, db_session, app):
    app.config["PBP_DRAFT_LIMIT"] = "2 per minute"
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    url = f"/c/{campaign.slug}/drafts/entry"
    codes = [auth.post(url, _entry_form(body=f"v{n}")).status_code for n in range(3)]
    assert codes == [302, 302, 429]


def test_a_note_draft_reopens_on_its_entry_and_goes_when_posted(client, auth, game, db_session):
    campaign, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Harbour",
        body_markdown="Boats.",
        mood="Calm",
        now=blog_tests.T0,
    )
    db_session.commit()
    login_as(auth, db_session, bram)
    entry_url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}"
    url = _save_button(client.get(entry_url))
    assert url == f"/c/{campaign.slug}/drafts/note-{entry.id}"
    answer = auth.post(url, {"body": "Half a thought about boats", "fate": "", "stance": "none"})
    assert answer.status_code == 302 and answer.headers["Location"].endswith("#notes")
    assert "Half a thought about boats" in client.get(entry_url).get_data(as_text=True)
    note = auth.post(f"{entry_url}/notes", {"body": "A whole thought about boats."})
    assert note.status_code == 302
    assert _drafts(db_session) == []


# -- the forum's forms ---------------------------------------------------------------------


@pytest.fixture
def table(app, auth, db_session):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, users=users)


def _post_form(**typed):
    return {"body": "I follow the tail", "kind": "ic", "audience": "all",
            "roll_visibility": "public", **typed}  # fmt: skip


def test_a_reply_draft_reopens_in_its_scene_and_goes_when_posted(auth, client, db_session, table):
    opening = write(db_session, table, table.gm, "The rain on Water Street.")
    db_session.commit()
    base = f"/c/{table.campaign.slug}/forum/t/{opening.thread_id}"
    auth.login(table.ada_user)
    url = _save_button(client.get(base))
    assert url == f"/c/{table.campaign.slug}/drafts/post-{opening.thread_id}"
    typed = _post_form(audience="whisper", recipients=[str(table.bram_user.id)])
    assert auth.post(url, typed).status_code == 302
    text = client.get(base).get_data(as_text=True)
    assert "I follow the tail" in text
    assert re.search(r'id="audience-whisper" name="audience" value="whisper" checked', text)
    assert re.search(rf'name="recipients" value="{table.bram_user.id}" checked', text)
    # Another member's reply form in the same scene is their own.
    auth.logout()
    auth.login(table.cleo_user)
    assert "I follow the tail" not in client.get(base).get_data(as_text=True)
    auth.logout()
    auth.login(table.ada_user)
    posted = auth.post(base, {**_post_form(), "action": "post"})
    assert posted.status_code == 302
    assert _drafts(db_session) == []


def test_a_new_scene_draft_keeps_its_title(auth, client, db_session, table):
    auth.login(table.ada_user)
    base = f"/c/{table.campaign.slug}/forum/new"
    url = _save_button(client.get(base))
    assert auth.post(url, _post_form(title="The docks at dawn")).status_code == 302
    assert 'value="The docks at dawn"' in client.get(base).get_data(as_text=True)
    posted = auth.post(base, {**_post_form(title="The docks at dawn"), "action": "post"})
    assert posted.status_code == 302
    assert _drafts(db_session) == []


def test_a_draft_belongs_to_its_owner_even_when_the_ids_are_guessed(
    auth, client, db_session, table
):
    """Drafts are keyed by the signed-in member: nobody can name another's draft."""
    opening = write(db_session, table, table.gm, "The rain.")
    db_session.commit()
    auth.login(table.ada_user)
    auth.post(f"/c/{table.campaign.slug}/drafts/post-{opening.thread_id}", _post_form())
    auth.logout()
    auth.login(table.bram_user)
    discarded = auth.post(f"/c/{table.campaign.slug}/drafts/post-{opening.thread_id}/discard")
    assert discarded.status_code == 302
    (kept,) = _drafts(db_session)
    assert kept.user_id == table.ada_user.id
    assert db_session.get(User, kept.user_id) is not None
