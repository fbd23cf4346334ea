"""Saved drafts through the API (issue #29 item 5), the twin of the pages' "Save draft",
their autosave and "Discard the draft": save, read, replace, delete one's own draft; the
page shows what the API saved; posting deletes it; nobody reads another's draft."""

from __future__ import annotations

from sqlmodel import select

from pbp.models import SavedDraft


def _drafts(db_session) -> list[SavedDraft]:
    db_session.expire_all()
    return list(db_session.exec(select(SavedDraft)).all())


def test_save_read_replace_and_delete_ones_draft(api, world, db_session):
    base = f"/campaigns/{world.campaign.slug}/drafts"
    token = world.tokens["player"]
    assert api.get(f"{base}/entry", token=token).status_code == 404
    saved = api.put(
        f"{base}/entry", token=token, json={"fields": {"title": "Fog", "body": "Half of it"}}
    )
    assert saved.status_code == 200, saved.get_data(as_text=True)
    body = saved.get_json()
    assert body["key"] == "entry" and body["fields"] == {"title": "Fog", "body": "Half of it"}
    assert body["saved_at"]
    api.put(f"{base}/entry", token=token, json={"fields": {"body": "All of it"}})
    assert api.get(f"{base}/entry", token=token).get_json()["fields"] == {"body": "All of it"}
    assert len(_drafts(db_session)) == 1
    deleted = api.call("DELETE", f"{base}/entry", token=token)
    assert deleted.status_code == 200 and deleted.get_json()["saved_at"] is None
    assert _drafts(db_session) == []


def test_a_draft_is_read_by_its_writer_only(api, world, db_session):
    base = f"/campaigns/{world.campaign.slug}/drafts"
    key = f"note-{world.challenge.id}"
    saved = api.put(
        f"{base}/{key}", token=world.tokens["player"], json={"fields": {"body": "MKAPIDRAFT"}}
    )
    assert saved.status_code == 200
    for role in ("other_player", "referee"):
        answer = api.get(f"{base}/{key}", token=world.tokens[role])
        assert answer.status_code == 404 and "MKAPIDRAFT" not in answer.get_data(as_text=True)
        # Deleting "theirs" deletes nothing of the writer's.
        assert api.call("DELETE", f"{base}/{key}", token=world.tokens[role]).status_code == 200
    assert [d.fields for d in _drafts(db_session)] == [{"body": "MKAPIDRAFT"}]
    assert api.get(f"{base}/{key}", token=world.tokens["stranger"]).status_code == 403
    assert api.get(f"{base}/{key}", token=None).status_code == 401


def test_posting_the_note_deletes_its_draft(api, world, db_session):
    slug, entry_id = world.campaign.slug, world.challenge.id
    token = world.tokens["other_player"]
    api.put(
        f"/campaigns/{slug}/drafts/note-{entry_id}",
        token=token,
        json={"fields": {"body": "Not yet.", "stance": "oppose"}},
    )
    assert len(_drafts(db_session)) == 1
    posted = api.post(
        f"/campaigns/{slug}/entries/{entry_id}/notes",
        token=token,
        json={"body": "Bram will not duel.", "stance": "none"},
    )
    assert posted.status_code == 201, posted.get_data(as_text=True)
    assert _drafts(db_session) == []


def test_a_draft_with_fields_its_form_lacks_or_a_key_that_names_nothing_is_refused(
    api, world, db_session
):
    base = f"/campaigns/{world.campaign.slug}/drafts"
    token = world.tokens["player"]
    wrong = api.put(f"{base}/entry", token=token, json={"fields": {"password": "x"}})
    assert wrong.status_code == 422 and "no field 'password'" in wrong.get_json()["detail"]
    for key in ("entry-3", "note-0", "post-99999", "drafts", "note-99999999999"):
        answer = api.put(f"{base}/{key}", token=token, json={"fields": {"body": "x"}})
        assert answer.status_code == 404, key
    too_long = api.put(f"{base}/entry", token=token, json={"fields": {"title": "t" * 1001}})
    assert too_long.status_code == 422 and "at most 1000" in too_long.get_json()["detail"]
    assert _drafts(db_session) == []


def test_the_page_opens_with_the_draft_the_api_saved(api, world, client, auth, db_session):
    from pbp.models import User
    from pbp.services.accounts import logins as accounts
    from tests.helpers import PASSWORD

    player = db_session.get(User, world.users["player"].id)
    player.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    api.put(
        f"/campaigns/{world.campaign.slug}/drafts/entry",
        token=world.tokens["player"],
        json={"fields": {"title": "From a script", "body": "Typed elsewhere."}},
    )
    auth.login(player)
    text = client.get(f"/c/{world.campaign.slug}/write").get_data(as_text=True)
    assert 'value="From a script"' in text and "Typed elsewhere." in text
