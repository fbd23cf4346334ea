"""One status per refusal on both faces (issue #35 item 5): each game's refusals, made once on
its page and once through the API, answer the same status, the one pbp.errors.REFUSAL_STATUSES
gives it (422 refused for what it asks, 409 the state forbids it now, 400 unreadable), and
docs/api.md and the OpenAPI document say what each status means in the same words."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from pbp.api.openapi import document
from pbp.errors import REFUSAL_STATUSES
from pbp.models.forum import Thread
from pbp.web import cards as cards_web
from pbp.web import forum as forum_web
from tests.helpers import API_NOW, PASSWORD, make_token, post_form
from tests.services.forum.tables import make_table, write

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(app):
    for bp in (forum_web.bp, cards_web.bp):
        if bp.name not in app.blueprints:
            app.register_blueprint(bp)
    return app


def test_the_docs_and_the_document_say_what_each_status_means():
    docs = " ".join((ROOT / "docs" / "api.md").read_text(encoding="utf-8").split())
    responses = document()["paths"]["/campaigns/{slug}/forum/threads/{thread_id}/posts"]["post"]
    for status, meaning in REFUSAL_STATUSES.items():
        assert " ".join(meaning.split()) in docs, status
        assert responses["responses"][str(status)]["description"] == meaning


@dataclass
class Faces:
    """One person of a forum game, on the pages (a logged-in client) and in the API."""

    page: object
    token: str


def _faces(app, db_session, auth, ruleset: str):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset=ruleset, users=users)
    opening = write(db_session, table, table.gm, "The rain on Water Street.")
    db_session.commit()
    thread = db_session.get(Thread, opening.thread_id)
    people = {}
    for role, user in (("gm", table.gm), ("ann", table.ada_user), ("ben", table.bram_user)):
        client = app.test_client()
        login = post_form(client, "/login", {"email": user.email, "password": PASSWORD})
        assert login.status_code == 302
        people[role] = Faces(client, make_token(db_session, user))
    db_session.commit()
    return table, thread, people


def _both(api, faces: Faces, page_url: str, form: dict, api_url: str, body: dict) -> tuple:
    page = post_form(faces.page, page_url, form)
    answer = api.post(api_url, token=faces.token, json=body)
    return page.status_code, answer.status_code, answer.get_json().get("detail", "")


def _table(api, people, table, thread):
    base = f"/campaigns/{table.campaign.slug}/forum/threads/{thread.id}/cards"
    assert api.post(base, token=people["gm"].token, json={}).status_code == 201
    page = f"/c/{table.campaign.slug}/forum/t/{thread.id}/cards"
    return page, base + "/moves"


def test_sex_and_violence_refusals(app, api, db_session, auth):
    table, thread, people = _faces(app, db_session, auth, "sex-and-violence")
    page, moves = _table(api, people, table, thread)
    four = {
        "name": "Max",
        "archetype": "warrior",
        "criminal_background": "Enforcer",
        "redeeming_quality": "Loyal",
        "angle": "bodyguard",
        "fields": ["C", "D", "H", "S"],
    }
    # The rules refuse it (all four fields): 422 on both faces.
    statuses = _both(
        api, people["ann"], f"{page}/create_character", {**four, "version": "0"},
        moves, {"action": "create_character", "params": four, "version": 0},
    )  # fmt: skip
    assert statuses[:2] == (422, 422), statuses
    # A move on a table changed since it was read: 409 on both faces.
    statuses = _both(
        api, people["gm"], f"{page}/end_scene", {"version": "7"},
        moves, {"action": "end_scene", "version": 7},
    )  # fmt: skip
    assert statuses[:2] == (409, 409), statuses


def test_one_can_have_her_refusals(app, api, db_session, auth):
    table, thread, people = _faces(app, db_session, auth, "one-can-have-her")
    page, moves = _table(api, people, table, thread)
    # The rules refuse to start with no character sheets: 422 on both faces.
    statuses = _both(
        api, people["gm"], f"{page}/start_game", {"version": "0"},
        moves, {"action": "start_game", "version": 0},
    )  # fmt: skip
    assert statuses[:2] == (422, 422), statuses
    statuses = _both(
        api, people["ben"], f"{page}/hand_in_note", {"rat": "yes", "version": "3"},
        moves, {"action": "hand_in_note", "params": {"rat": True}, "version": 3},
    )  # fmt: skip
    assert statuses[:2] == (409, 409), statuses


@pytest.mark.parametrize("ruleset", ["one", "noir"])
def test_forum_refusals(app, api, db_session, auth, ruleset):
    from pbp.services.forum import gm

    table, thread, people = _faces(app, db_session, auth, ruleset)
    slug = table.campaign.slug
    page = f"/c/{slug}/forum/t/{thread.id}"
    posts = f"/campaigns/{slug}/forum/threads/{thread.id}/posts"
    # A roll command that cannot be rolled: 422 on both faces.
    bad = "Here goes.\n/roll 2d"
    statuses = _both(api, people["ben"], page, {"body": bad}, posts, {"body": bad})
    assert statuses[:2] == (422, 422), statuses
    # The campaign has ended: its forum is read-only, 409 on both faces.
    gm.end_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=API_NOW)
    db_session.commit()
    statuses = _both(api, people["ben"], page, {"body": "Late."}, posts, {"body": "Late."})
    assert statuses[:2] == (409, 409), statuses


def test_noteworthy_refusals(app, api, db_session, auth):
    from pbp.services import campaigns
    from pbp.services.noteworthy import turns

    referee = auth.create_user(display_name="Rita Referee")
    game = campaigns.create_campaign(
        session=db_session, referee=referee, name="Refusals", settings={"opening_turns": 0}
    )
    turns.post_event(session=db_session, campaign=game, text="Go.", actor=None, now=API_NOW)
    client = app.test_client()
    assert post_form(client, "/login", {"email": referee.email, "password": PASSWORD}).status_code
    faces = Faces(client, make_token(db_session, referee))
    db_session.commit()
    # An event while turn 1 is open: the state forbids it now, 409 on both faces.
    statuses = _both(
        api, faces, f"/c/{game.slug}/referee/event", {"text": "More.", "expected_number": "2"},
        f"/campaigns/{game.slug}/turns", {"text": "More."},
    )  # fmt: skip
    assert statuses[:2] == (409, 409), statuses
    # A body that cannot be read is 400 in the API (a page's form is always readable).
    unreadable = api.post(
        f"/campaigns/{game.slug}/turns",
        token=faces.token,
        data="{not json",
        headers={"Content-Type": "application/json"},
    )
    assert unreadable.status_code == 400
