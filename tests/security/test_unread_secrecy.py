"""Issue #29 item 2: "N new" is a channel too. A whisper or a GM-only post is new only to
those who may read it: its existence reaches nobody else through a count, a "new" mark or
a "Jump to the first unread" link, on the pages (the campaign bar, the scenes, the home
page) or in the API (the campaign, its scenes, the board)."""

from __future__ import annotations

import re

import pytest

from pbp.models.forum import Thread
from pbp.web import forum as forum_web
from tests.helpers import Api, make_token, wire
from tests.services.forum.tables import make_table, write
from tests.web import conftest as web_fixtures

auth = web_fixtures.auth


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    wire(app)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    found = make_table(db_session, users=users)
    opening = write(db_session, found, found.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    found_posts = {
        "opening": opening,
        "whisper": write(
            db_session,
            found,
            found.ada_user,
            "Ben: the key.",
            thread=thread,
            audience="whisper",
            recipient_ids=(found.bram_user.id,),
        ),
        "gm": write(db_session, found, found.ada_user, "To the GM.", thread=thread, audience="gm"),
        "secret scene": write(
            db_session, found, found.ada_user, "Alone.", title="Hidden", audience="gm"
        ),
    }
    db_session.commit()
    return found, thread, found_posts


def _api_counts(client, db_session, table, thread, user) -> dict:
    api = Api(client)
    token = make_token(db_session, user)
    db_session.commit()
    slug = table.campaign.slug
    scenes = api.get(f"/campaigns/{slug}/forum/threads", token=token).get_json()["items"]
    board = api.get("/me/board", token=token).get_json()["campaigns"]
    return {
        "campaign": api.get(f"/campaigns/{slug}", token=token).get_json()["unread"],
        "scenes": {t["id"]: t["unread"] for t in scenes},
        "board": next(c["unread"] for c in board if c["campaign"] == slug),
    }


@pytest.mark.parametrize(
    "who, expected",
    [("other player", 1), ("whisper recipient", 2), ("gm", 3)],  # the GM wrote the opening
)
def test_hidden_posts_count_only_for_those_who_may_read_them(
    auth, client, db_session, table, who, expected
):
    found, thread, made = table
    user = {"other player": found.cleo_user, "whisper recipient": found.bram_user}.get(
        who, found.gm
    )
    counts = _api_counts(client, db_session, found, thread, user)
    assert counts["campaign"] == counts["board"] == expected
    assert sum(counts["scenes"].values()) == expected
    if who != "gm":
        assert made["secret scene"].thread_id not in counts["scenes"]
    auth.login(user)
    slug = found.campaign.slug
    home = client.get("/").get_data(as_text=True)
    assert f'<span class="news">{expected} new</span>' in home
    scenes = client.get(f"/c/{slug}/forum/").get_data(as_text=True)
    assert f'<span class="news">{expected} new</span>' in scenes.split("</nav>")[0]
    page = client.get(f"/c/{slug}/forum/t/{thread.id}").get_data(as_text=True)
    marked = re.findall(r'id="by-(\d+)"><span class="new-mark">', page)
    readable = {"other player": ["opening"], "whisper recipient": ["opening", "whisper"]}
    names = readable.get(who, ["whisper", "gm"])
    assert sorted(int(m) for m in marked) == sorted(made[n].id for n in names)
    jump = re.search(r'<a href="#post-(\d+)">Jump to the first unread</a>', page)
    assert jump is not None and int(jump.group(1)) == made[names[0]].id
