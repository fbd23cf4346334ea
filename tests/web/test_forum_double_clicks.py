"""A double click on the forum's and the card tables' forms acts once (pbp.web.actions): the
same one-time form token sent twice gets the first answer and changes nothing more."""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbp.models.cards import CardEvent, CardGame
from pbp.models.forum import Post, Roll
from tests.helpers import post_form
from tests.services.forum.tables import make_table, write
from tests.web.test_cards_web import MAX, _open_table, _seats

TOKEN = "a-forum-form-token-0001"


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, users=users)


def test_a_double_clicked_reply_posts_and_rolls_once(auth, client, db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    db_session.commit()
    auth.login(table.bram_user)
    url = f"/c/{table.campaign.slug}/forum/t/{opening.thread_id}"
    # No client_token: the one-time form token alone keeps the second press from posting.
    form = {"body": "Me too.\n/roll d6", "kind": "ooc", "audience": "all", "form_token": TOKEN}
    first = auth.post(url, form)
    second = auth.post(url, form)
    assert first.status_code == second.status_code == 302
    assert second.headers["Location"] == first.headers["Location"]
    assert second.headers.get("Form-Replayed") == "true"
    mine = db_session.exec(select(Post).where(Post.author_id == table.bram_user.id)).all()
    assert len(mine) == 1
    assert len(db_session.exec(select(Roll).where(Roll.post_id == mine[0].id)).all()) == 1
    page = client.get(first.headers["Location"]).get_data(as_text=True)
    assert "Posted." in page and "was not sent twice" in page


def test_a_preview_does_not_use_the_token_up(auth, client, db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    db_session.commit()
    auth.login(table.bram_user)
    url = f"/c/{table.campaign.slug}/forum/t/{opening.thread_id}"
    form = {"body": "Looking first.", "kind": "ooc", "audience": "all", "form_token": TOKEN}
    preview = auth.post(url, {**form, "action": "preview"})
    assert preview.status_code == 200 and "Looking first." in preview.get_data(as_text=True)
    posted = auth.post(url, {**form, "action": "post"})
    assert posted.status_code == 302 and "Form-Replayed" not in posted.headers
    assert db_session.exec(select(Post).where(Post.author_id == table.bram_user.id)).one()


def test_a_double_clicked_card_move_moves_once(app, auth, db_session):
    seats = _seats(app, auth, db_session, "sex-and-violence")
    _open_table(seats, gm_sees_hands="yes")
    url = f"{seats.base}/create_character"
    form = {**MAX, "version": "0", "form_token": TOKEN}
    first = post_form(seats.ann, url, form)
    second = post_form(seats.ann, url, form)
    assert first.status_code == second.status_code == 302
    assert second.headers.get("Form-Replayed") == "true"
    game = db_session.exec(select(CardGame)).one()
    assert game.version == 1
    moves = db_session.exec(select(CardEvent).where(CardEvent.game_id == game.id)).all()
    assert len(moves) == 2  # the GM's opening and Ann's one character
