"""Issue #27 item 3: "An invited forum player with no character is stuck." Invited without a
character into a Noir campaign, the player sees a "Make your character" form on the Sheets
page and above the scene's post form, makes one with its sheet, and posts as them; the GM
can make one for them from the dashboard instead."""

from __future__ import annotations

import re

import pytest
from sqlmodel import select

from pbp.models import Character
from pbp.models.forum import Post, Roll
from pbp.services.accounts import logins as accounts
from tests.services.forum.tables import T0, make_table, write
from tests.web.test_refused_forms import fields

SECRET = "test-secret-key-" + "x" * 32  # tests/conftest.py's app
TOKEN = "make-a-character-token-01"
MAKE = "Make your character"


@pytest.fixture
def noir(auth, db_session):
    """A Noir table, its opening scene, and Pip, who joined by an invitation that named
    no character."""
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset="noir", users=users)
    opening = write(db_session, table, table.gm, "Rain on Water Street.")
    pip = auth.create_user(display_name="Pip")
    issued = accounts.create_invite(
        session=db_session, campaign=table.campaign, created_by=table.gm, secret_key=SECRET,
        base_url="http://pbp.test", now=T0,
    )  # fmt: skip
    accounts.accept_invite(
        session=db_session, token=issued.token, secret_key=SECRET, now=T0, user=pip
    )
    db_session.commit()
    return table, opening.thread_id, pip


def _urls(table, thread_id):
    base = f"/c/{table.campaign.slug}"
    return base, f"{base}/forum/t/{thread_id}"


def _pips(db_session, pip):
    return db_session.exec(select(Character).where(Character.user_id == pip.id)).all()


def test_a_player_with_no_character_makes_one_and_posts_as_them(auth, client, db_session, noir):
    table, thread_id, pip = noir
    base, scene = _urls(table, thread_id)
    auth.login(pip)
    sheets_page = client.get(f"{base}/sheets/").get_data(as_text=True)
    assert MAKE in sheets_page and 'name="sheet"' in sheets_page
    before = client.get(scene).get_data(as_text=True)
    assert MAKE in before and 'id="mc-name"' in before
    assert 'name="character_id"' not in before  # nobody to post as yet

    made = auth.post(
        f"{base}/sheets/",
        {"name": "Dash Riley", "sheet": '{"skills": {"Drive": 7}}', "thread_id": str(thread_id)},
    )
    assert made.status_code == 302 and made.headers["Location"].endswith(
        f"/t/{thread_id}#reply-title"
    )
    (dash,) = _pips(db_session, pip)
    after = client.get(scene).get_data(as_text=True)
    assert MAKE not in after and "Dash Riley is yours" in after
    assert re.search(rf'<option value="{dash.id}" selected>Dash Riley</option>', after)

    body = 'At the wheel.\n/roll noir difficulty skill="Drive"'
    posted = auth.post(scene, {"body": body, "character_id": str(dash.id), "action": "post"})
    assert posted.status_code == 302
    post = db_session.exec(select(Post).where(Post.author_id == pip.id)).one()
    assert post.character_id == dash.id
    roll = db_session.exec(select(Roll).where(Roll.post_id == post.id)).one()
    assert "Drive 7 from Dash Riley's sheet" in (roll.note or "")  # the sheet counts


def test_a_refused_sheet_comes_back_as_typed_beside_its_form(auth, client, db_session, noir):
    table, thread_id, pip = noir
    base, _ = _urls(table, thread_id)
    auth.login(pip)
    typed = '{"skills": {"Drive": "seven"}}'
    page = auth.post(
        f"{base}/sheets/", {"name": "Dash Riley", "sheet": typed, "thread_id": str(thread_id)}
    )
    assert page.status_code == 422
    html = page.get_data(as_text=True)
    form = html[html.index('id="make-character"') :]
    assert "skill Drive must be a whole number" in form[: form.index("</form>")]
    assert fields(page)["mc-name"] == "Dash Riley" and fields(page)["mc-sheet"].strip() == typed
    assert _pips(db_session, pip) == []


def test_a_double_click_makes_one_character(auth, client, db_session, noir):
    table, thread_id, pip = noir
    base, _ = _urls(table, thread_id)
    auth.login(pip)
    form = {"name": "Dash Riley", "sheet": "{}", "form_token": TOKEN}
    first, second = auth.post(f"{base}/sheets/", form), auth.post(f"{base}/sheets/", form)
    assert first.status_code == second.status_code == 302
    assert second.headers.get("Form-Replayed") == "true"
    assert len(_pips(db_session, pip)) == 1
    sheet_page = client.get(first.headers["Location"]).get_data(as_text=True)
    assert "Dash Riley" in sheet_page and MAKE not in client.get(f"{base}/sheets/").get_data(True)


def test_the_gm_makes_a_character_for_the_player(auth, client, db_session, noir):
    table, thread_id, pip = noir
    base, scene = _urls(table, thread_id)
    auth.login(table.gm)
    board = client.get(f"{base}/referee/").get_data(as_text=True)
    assert "Players with no character yet" in board and "A character for Pip" in board
    made = auth.post(f"{base}/sheets/for-player", {"player_id": str(pip.id), "name": "Dash"})
    assert made.status_code == 302
    (dash,) = _pips(db_session, pip)
    assert "A character for Pip" not in client.get(f"{base}/referee/").get_data(as_text=True)
    refused = auth.post(f"{base}/sheets/for-player", {"player_id": str(pip.id), "name": "Dot"})
    assert refused.status_code == 409 and "Pip already plays Dash" in refused.get_data(True)
    auth.login(pip)
    page = client.get(scene).get_data(as_text=True)
    assert MAKE not in page and f'<option value="{dash.id}" selected>Dash</option>' in page


def test_the_form_is_only_for_players_without_one(auth, client, db_session, noir):
    table, thread_id, _pip = noir
    base, scene = _urls(table, thread_id)
    for who in (table.ada_user, table.gm):
        auth.login(who)
        assert MAKE not in client.get(scene).get_data(as_text=True)
        assert MAKE not in client.get(f"{base}/sheets/").get_data(as_text=True)
    refused = auth.post(f"{base}/sheets/", {"name": "Second", "sheet": "{}"})
    assert refused.status_code == 403  # the GM is not a player
    assert db_session.exec(select(Character).where(Character.name == "Second")).all() == []
