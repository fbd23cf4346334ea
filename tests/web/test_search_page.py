"""Issue #33 item 2: the search page of a campaign, linked from its navigation."""

from __future__ import annotations

import re

import pytest

from pbp.models.forum import Thread
from pbp.web import forum as forum_web
from tests.services.forum.tables import make_table, write


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, users=users)
    opening = write(db_session, table, table.gm, "The <b>tapir</b> waits by the docks.")
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.ada_user, "tapir whisper", thread=thread, audience="whisper",
          recipient_ids=(table.bram_user.id,))  # fmt: skip
    for n in range(23):
        write(db_session, table, table.cleo_user, f"tapir {n}", thread=thread, minutes=n + 1)
    db_session.commit()
    table.thread = thread  # type: ignore[attr-defined]
    return table


def hits(page) -> int:
    return int(re.search(r'data-hits="(\d+)"', page.get_data(as_text=True)).group(1))


def test_the_navigation_links_the_search_page(client, table):
    page = client.get(f"/c/{table.campaign.slug}/forum/")
    assert f'href="/c/{table.campaign.slug}/search"' in page.get_data(as_text=True)


def test_a_search_shows_linked_highlighted_hits_and_pages(client, table):
    url = f"/c/{table.campaign.slug}/search"
    page = client.get(url, query_string={"q": "docks"})
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and hits(page) == 1
    assert "<mark>docks</mark>" in text and "<b>" not in text.split('data-hits="1"')[1]
    assert f'href="/c/{table.campaign.slug}/forum/t/{table.thread.id}#post-' in text
    assert 'aria-current="page"' in text and ">Search<" in text
    first = client.get(url, query_string={"q": "tapir"})
    assert hits(first) == 20
    more = re.search(r'<a rel="next" href="([^"]+)"', first.get_data(as_text=True)).group(1)
    second = client.get(more.replace("&amp;", "&"))
    assert hits(second) == 4  # 1 + 23, the whisper left out for a visitor
    assert 'rel="next"' not in second.get_data(as_text=True)


def test_the_whisper_is_found_by_its_recipient_only(auth, client, table):
    url = f"/c/{table.campaign.slug}/search"
    for user, expected in ((table.bram_user, 1), (table.cleo_user, 0)):
        auth.login(user)
        assert hits(client.get(url, query_string={"q": "whisper"})) == expected


def test_a_filter_naming_nothing_is_refused_with_the_reason(client, table):
    page = client.get(
        f"/c/{table.campaign.slug}/search", query_string={"q": "tapir", "character": "zed"}
    )
    assert page.status_code == 400
    assert "there is no character" in page.get_data(as_text=True)


def test_an_empty_search_shows_the_form_only(client, table):
    page = client.get(f"/c/{table.campaign.slug}/search")
    assert page.status_code == 200 and "data-hits" not in page.get_data(as_text=True)
