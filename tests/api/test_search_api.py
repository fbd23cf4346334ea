"""Issue #33 item 2: the search page's API twin, paged and as visible as the pages."""

from __future__ import annotations

from sqlmodel import select

from pbp.models.forum import Thread
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail.settings import MailSettings
from tests.helpers import API_NOW


def test_search_finds_what_the_caller_may_read_paged(api, db_session, forum_world):
    w = forum_world
    slug = w.extra["forum"]
    thread = db_session.exec(select(Thread).where(Thread.id == w.extra["thread"])).one()
    from pbp.models import Campaign

    game = db_session.exec(select(Campaign).where(Campaign.slug == slug)).one()
    mail = MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>")
    for n, audience in enumerate(["all", "all", "all", "gm"]):
        posts.create_post(
            session=db_session, campaign=game, thread=thread, author=w.users["player"],
            draft=Draft(body=f"walrus {n}", audience=audience), mail=mail, now=API_NOW,
        )  # fmt: skip
    db_session.commit()
    url = f"/campaigns/{slug}/search"
    first = api.get(url, query_string={"q": "walrus", "limit": 2}, token=w.tokens["other_player"])
    assert first.status_code == 200, first.get_data(as_text=True)
    body = first.get_json()
    assert [h["kind"] for h in body["items"]] == ["post", "post"]
    assert "<mark>walrus</mark>" in body["items"][0]["snippet_html"]
    second = api.get(
        url,
        query_string={"q": "walrus", "limit": 2, "cursor": body["next_cursor"]},
        token=w.tokens["other_player"],
    ).get_json()
    assert len(second["items"]) == 1 and second["next_cursor"] is None  # not the GM-only post
    mine = api.get(url, query_string={"q": "walrus"}, token=w.tokens["player"]).get_json()
    assert len(mine["items"]) == 4  # the author reads their GM-only post
    visitor = api.get(url, query_string={"q": "walrus", "rolls": "true"}).get_json()
    assert visitor["items"] == []
    rolled = api.get(url, query_string={"q": "wait", "rolls": "true"}).get_json()
    assert [h["rolls"] for h in rolled["items"]] == [1]


def test_a_bad_filter_is_a_problem(api, forum_world):
    url = f"/campaigns/{forum_world.extra['forum']}/search"
    assert api.get(url, query_string={"q": "x", "kind": "loud"}).status_code == 400
    assert api.get(url, query_string={"q": "x", "character": "nobody"}).status_code == 404
