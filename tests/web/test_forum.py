"""The forum's pages and forms: posting with rolls, previews that roll nothing, bad input
(a 400 page, nothing half-saved), forged forms, strangers, double submits, edits, the GM's
start and end, sheets."""

from __future__ import annotations

import re

import pytest
from sqlmodel import select

from pbp.models.forum import CampaignSecret, Post, Roll, Sheet, Thread
from pbp.web import forum as forum_web
from tests.helpers import csrf_token
from tests.services.forum.tables import ONE_STATS, make_table, write


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, users=users)


def _base(table) -> str:
    return f"/c/{table.campaign.slug}"


def _client_token(page) -> str:
    return re.search(r'name="client_token" value="([^"]+)"', page.get_data(as_text=True)).group(1)


def _new_thread(auth, client, table, body, **fields):
    form_page = client.get(f"{_base(table)}/forum/new")
    assert form_page.status_code == 200
    data = {
        "title": "The docks",
        "body": body,
        "kind": "ic",
        "audience": "all",
        "roll_visibility": "public",
        "character_id": str(table.ada.id),
        "client_token": _client_token(form_page),
        "action": "post",
        **fields,
    }
    return auth.post(f"{_base(table)}/forum/new", data), data


def test_a_player_opens_a_scene_and_rolls(auth, client, db_session, table):
    auth.login(table.ada_user)
    page, _ = _new_thread(auth, client, table, "I wait.\n/roll 3d6 # patience")
    assert page.status_code == 302
    thread_page = client.get(page.headers["Location"])
    html = thread_page.get_data(as_text=True)
    roll = db_session.exec(select(Roll)).one()
    assert "I wait." in html and "Roll #1" in html and roll.result["text"] in html
    assert html.count('class="die"') == 3  # every face shown
    assert f"/c/{table.campaign.slug}/rolls/{roll.id}" in html
    roll_page = client.get(f"{_base(table)}/rolls/{roll.id}")
    assert roll_page.status_code == 200 and roll.result["text"] in roll_page.get_data(as_text=True)


def test_the_same_form_posted_twice_makes_one_post(auth, client, db_session, table):
    auth.login(table.ada_user)
    first, data = _new_thread(auth, client, table, "Once only.\n/roll d6")
    second = auth.post(f"{_base(table)}/forum/new", data)
    assert first.status_code == second.status_code == 302
    assert first.headers["Location"] == second.headers["Location"]
    assert len(db_session.exec(select(Post)).all()) == 1
    assert len(db_session.exec(select(Roll)).all()) == 1


def test_a_double_submitted_reply_makes_one_post(auth, client, db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    db_session.commit()
    auth.login(table.bram_user)
    url = f"{_base(table)}/forum/t/{opening.thread_id}"
    token = _client_token(client.get(url))
    data = {"body": "Me too.", "kind": "ooc", "audience": "all", "client_token": token}
    assert auth.post(url, data).status_code == 302
    assert auth.post(url, data).status_code == 302
    assert len(db_session.exec(select(Post).where(Post.author_id == table.bram_user.id)).all()) == 1


def test_unknown_roll_syntax_is_a_422_page_and_nothing_is_saved(auth, client, db_session, table):
    auth.login(table.ada_user)
    page, _ = _new_thread(auth, client, table, "Words before.\n/roll 2x6 + banana")
    assert page.status_code == 422
    html = page.get_data(as_text=True)
    assert (
        'role="alert"' in html and "Line 2: could not read" in html and "Nothing was posted" in html
    )
    assert "Words before." in html  # the text is kept for the fix
    assert db_session.exec(select(Post)).all() == []
    assert db_session.exec(select(Thread)).all() == []
    assert db_session.exec(select(Roll)).all() == []


def test_preview_shows_the_commands_and_rolls_nothing(auth, client, db_session, table):
    auth.login(table.ada_user)
    before = [(s.seed, s.created_at) for s in db_session.exec(select(CampaignSecret))]
    page, _ = _new_thread(auth, client, table, "**Look**\n/roll 2d6+1", action="preview")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "<strong>Look</strong>" in html and "<code>/roll 2d6+1</code>" in html
    assert db_session.exec(select(Roll)).all() == []
    assert db_session.exec(select(Post)).all() == []
    # The seed made with the campaign (#35 item 1) is untouched: a preview uses no seed.
    assert [(s.seed, s.created_at) for s in db_session.exec(select(CampaignSecret))] == before


def test_a_form_without_or_with_a_forged_csrf_token_is_refused(auth, client, db_session, table):
    auth.login(table.ada_user)
    url = f"{_base(table)}/forum/new"
    data = {"title": "T", "body": "/roll d6", "action": "post"}
    assert client.post(url, data=data).status_code == 400
    assert client.post(url, data={**data, "csrf_token": "forged"}).status_code == 400
    other = csrf_token(client)  # a real token, but for a session that is about to end
    client.set_cookie("session", "", expires=0)
    auth.login(table.ada_user)
    assert client.post(url, data={**data, "csrf_token": other}).status_code == 400
    assert db_session.exec(select(Post)).all() == []


def test_posting_where_you_are_not_a_member_is_forbidden(auth, client, db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    db_session.commit()
    auth.login(table.stranger)
    assert client.get(f"{_base(table)}/forum/new").status_code == 403
    page = auth.post(
        f"{_base(table)}/forum/t/{opening.thread_id}", {"body": "Let me play.", "kind": "ooc"}
    )
    assert page.status_code == 403
    assert auth.post(f"{_base(table)}/forum/new", {"title": "x", "body": "y"}).status_code == 403
    assert len(db_session.exec(select(Post)).all()) == 1


def test_visitors_are_sent_to_log_in_before_posting(client, db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    db_session.commit()
    page = client.get(f"{_base(table)}/forum/new")
    assert page.status_code == 302 and "/login" in page.headers["Location"]
    assert client.get(f"{_base(table)}/forum/t/{opening.thread_id}").status_code == 200


def test_edit_shows_edited_and_the_gm_reads_the_history(auth, client, db_session, table):
    post = write(db_session, table, table.ada_user, "Frist post.")
    db_session.commit()
    auth.login(table.ada_user)
    edit_url = f"{_base(table)}/forum/posts/{post.id}/edit"
    assert "Frist post." in client.get(edit_url).get_data(as_text=True)
    assert auth.post(edit_url, {"body": "First post."}).status_code == 302
    thread_html = client.get(f"{_base(table)}/forum/t/{post.thread_id}").get_data(as_text=True)
    assert "First post." in thread_html and "edited" in thread_html
    history_url = f"{_base(table)}/forum/posts/{post.id}/history"
    assert client.get(history_url).status_code == 403
    bad = auth.post(edit_url, {"body": "Now I roll.\n/roll d20"})
    assert bad.status_code == 422 and "new post" in bad.get_data(as_text=True)
    auth.logout()
    auth.login(table.gm)
    history = client.get(history_url).get_data(as_text=True)
    assert "Frist post." in history and "First post." in history


def test_someone_elses_post_cannot_be_edited_or_deleted(auth, client, db_session, table):
    post = write(db_session, table, table.ada_user, "Mine.")
    db_session.commit()
    auth.login(table.cleo_user)
    edit_url = f"{_base(table)}/forum/posts/{post.id}/edit"
    assert auth.post(edit_url, {"body": "Yours."}).status_code == 403
    assert auth.post(f"{_base(table)}/forum/posts/{post.id}/delete").status_code == 403
    db_session.refresh(post)
    assert post.body == "Mine." and post.deleted_at is None


def test_deleting_keeps_the_roll_on_the_page(auth, client, db_session, table):
    post = write(db_session, table, table.ada_user, "Oops.\n/roll d20")
    db_session.commit()
    roll = db_session.exec(select(Roll)).one()
    auth.login(table.ada_user)
    assert auth.post(f"{_base(table)}/forum/posts/{post.id}/delete").status_code == 302
    html = client.get(f"{_base(table)}/forum/t/{post.thread_id}").get_data(as_text=True)
    assert "This post was deleted" in html and "Oops." not in html
    assert roll.result["text"] in html
    assert client.get(f"{_base(table)}/rolls/{roll.id}").status_code == 200


def test_watching_a_thread_from_its_page(auth, client, db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    db_session.commit()
    auth.login(table.cleo_user)
    url = f"{_base(table)}/forum/t/{opening.thread_id}"
    assert "Watch this scene" in client.get(url).get_data(as_text=True)
    auth.post(f"{url}/watch", {"watch": "on"})
    assert "Stop watching" in client.get(url).get_data(as_text=True)


def test_the_gm_starts_and_ends_the_campaign(auth, client, db_session, table):
    write(db_session, table, table.ada_user, "/roll d6")
    db_session.commit()
    auth.login(table.ada_user)
    assert auth.post(f"{_base(table)}/forum/end").status_code == 403
    auth.logout()
    auth.login(table.gm)
    front = f"{_base(table)}/forum/fairness"
    secret = db_session.exec(select(CampaignSecret)).one()
    html = client.get(front).get_data(as_text=True)
    assert secret.commitment in html and secret.seed not in html
    assert auth.post(f"{_base(table)}/forum/start").status_code == 302
    assert auth.post(f"{_base(table)}/forum/end").status_code == 302
    html = client.get(front).get_data(as_text=True)
    assert secret.seed in html and "pbp verify-rolls" in html
    export = client.get(f"{_base(table)}/forum/export.json").get_json()
    assert export["fairness"]["seed"] == secret.seed
    thread = db_session.exec(select(Thread)).one()
    late = auth.post(f"{_base(table)}/forum/t/{thread.id}", {"body": "One more.", "kind": "ic"})
    assert late.status_code == 409 and "ended" in late.get_data(as_text=True)


def test_noteworthy_campaigns_have_no_forum_pages(auth, client, db_session):
    users = [auth.create_user() for _ in range(5)]
    table = make_table(db_session, ruleset="noteworthy", users=users)
    assert client.get(f"{_base(table)}/forum/").status_code == 404
    assert client.get(f"{_base(table)}/sheets/").status_code == 404


def test_sheets_are_public_and_edited_by_their_owner(auth, client, db_session, table):
    sheet_url = f"{_base(table)}/sheets/{table.ada.slug}"
    assert "No sheet yet" in client.get(sheet_url).get_data(as_text=True)
    auth.login(table.ada_user)
    form = {
        **{k: str(v) for k, v in ONE_STATS.items()},
        "skills": "Short Blade: 4",
        "hit_points_lost": "0",
        "notes": "Scar over the eye.",
    }
    assert auth.post(f"{sheet_url}/edit", form).status_code == 302
    html = client.get(sheet_url).get_data(as_text=True)
    assert "Short Blade" in html and ">7<" in html  # DEX 9: Base 3 + 4
    bad = auth.post(f"{sheet_url}/edit", {**form, "STR": "13"})
    assert bad.status_code == 422 and "STR is 13" in bad.get_data(as_text=True)
    auth.logout()
    auth.login(table.cleo_user)
    assert client.get(f"{sheet_url}/edit").status_code == 403
    assert auth.post(f"{sheet_url}/edit", form).status_code == 403
    auth.logout()
    assert client.get(f"{_base(table)}/sheets/").status_code == 200
    assert db_session.exec(select(Sheet)).one().data["skills"] == {"Short Blade": 4}


def test_a_named_skill_rolls_from_the_sheet_through_the_form(auth, client, db_session, table):
    auth.login(table.ada_user)
    form = {**{k: str(v) for k, v in ONE_STATS.items()}, "skills": "Short Blade: 4"}
    auth.post(f"{_base(table)}/sheets/{table.ada.slug}/edit", form)
    page, _ = _new_thread(auth, client, table, '/roll one skill="Short Blade" mod=-2')
    assert page.status_code == 302
    roll = db_session.exec(select(Roll)).one()
    assert "score=7 mod=-2" in roll.command
    assert "Short Blade 7 from Ada" in client.get(page.headers["Location"]).get_data(as_text=True)


def test_the_feed_carries_public_posts_and_public_rolls_only(client, db_session, table):
    opening = write(db_session, table, table.gm, "Public words.\n/roll d6 # open")
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.ada_user, "Hidden words.", thread=thread, audience="gm")
    write(
        db_session,
        table,
        table.ada_user,
        "/roll d12 # quiet",
        thread=thread,
        roll_visibility="gm",
        minutes=1,
    )
    db_session.commit()
    page = client.get(f"{_base(table)}/forum/feed.atom")
    assert page.status_code == 200 and page.content_type.startswith("application/atom+xml")
    xml = page.get_data(as_text=True)
    public, quiet = (
        db_session.exec(select(Roll).where(Roll.command.contains(word))).one()
        for word in ("open", "quiet")
    )
    assert "Public words." in xml and "Hidden words." not in xml
    assert public.result["text"] in xml and quiet.result["text"] not in xml
    assert "a hidden roll" in xml


def test_a_post_the_apis_model_refuses_comes_back_with_its_text(auth, client, db_session, table):
    """The post form is read with the API's PostIn (#18 item 2): an audience it does not
    know is refused with 422, as the API answers, and nothing is rolled or stored."""
    auth.login(table.ada_user)
    page, _ = _new_thread(auth, client, table, "Hidden plans.\n/roll d6", audience="everyone")
    assert page.status_code == 422
    html = page.get_data(as_text=True)
    assert "Audience is one of" in html and "Hidden plans." in html
    assert db_session.exec(select(Post)).all() == [] and db_session.exec(select(Roll)).all() == []
