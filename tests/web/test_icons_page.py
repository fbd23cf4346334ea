"""Issue #33 item 1: a player keeps their characters' icons; pbp serves each icon itself,
cached for a year."""

from __future__ import annotations

import base64
import io
import re

import pytest
from PIL import Image

from pbp.web import forum as forum_web
from tests.api import conftest as api_fixtures
from tests.helpers import make_token, post_form
from tests.services.forum.tables import make_table
from tests.services.icons.pictures import bomb, picture

world = api_fixtures.world  # the API tests' Noteworthy campaign, shared rather than copied


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    api_fixtures.wire(app)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, users=users)


def _upload(client, table, keyword="smile", data=None, character="ada"):
    url = f"/c/{table.campaign.slug}/me/icons"
    form = {
        "character": character,
        "keyword": keyword,
        "alt": "Ada, smiling",
        "picture": (io.BytesIO(data or picture("JPEG")), "face.jpg"),
    }
    return post_form(client, url, form, content_type="multipart/form-data")


def test_a_player_uploads_an_icon_and_it_is_served_cached(auth, client, table):
    auth.login(table.ada_user)
    answer = _upload(client, table)
    assert answer.status_code == 302
    page = client.get(f"/c/{table.campaign.slug}/me/icons").get_data(as_text=True)
    src = re.search(r'<img class="icon" src="(/icons/[^"]+)" alt="Ada, smiling"', page).group(1)
    auth.logout()
    served = client.get(src)
    assert served.status_code == 200 and served.mimetype == "image/png"
    assert "immutable" in served.headers["Cache-Control"]
    assert Image.open(io.BytesIO(served.get_data())).size == (100, 100)
    assert client.get(src.replace("-", "-0")).status_code == 404  # another picture's address


def test_a_bomb_is_refused_on_the_page_with_the_reason(auth, client, table):
    auth.login(table.ada_user)
    answer = _upload(client, table, data=bomb())
    assert answer.status_code == 422
    assert "decompression bomb" in answer.get_data(as_text=True)


def test_no_one_else_keeps_ada_s_icons(auth, client, table):
    auth.login(table.cleo_user)
    answer = _upload(client, table)
    assert answer.status_code == 403


def test_default_and_remove(auth, client, db_session, table):
    from pbp.services import icons

    auth.login(table.ada_user)
    _upload(client, table, "one")
    _upload(client, table, "two")
    kept = icons.icons_of(session=db_session, character=table.ada)
    assert [i.is_default for i in kept] == [True, False]
    base = f"/c/{table.campaign.slug}/me/icons/{kept[1].id}"
    assert post_form(client, base + "/default").status_code == 302
    assert [i.is_default for i in icons.icons_of(session=db_session, character=table.ada)] == [
        False,
        True,
    ]
    assert post_form(client, base + "/remove").status_code == 302
    left = icons.icons_of(session=db_session, character=table.ada)
    assert [(i.keyword, i.is_default) for i in left] == [("one", True)]


def test_the_api_manages_icons_too(api, db_session, table):
    token = make_token(db_session, table.ada_user)
    db_session.commit()
    url = f"/campaigns/{table.campaign.slug}/characters/ada/icons"
    body = {"keyword": "grin", "alt": "Ada grins", "data": base64.b64encode(picture()).decode()}
    made = api.post(url, token=token, json=body)
    assert made.status_code == 201, made.get_data(as_text=True)
    icon = made.get_json()
    assert icon["is_default"] and icon["url"].startswith("/icons/")
    listed = api.get(url).get_json()["items"]
    assert [i["keyword"] for i in listed] == ["grin"]
    again = api.post(url, token=token, json=body)
    assert again.status_code == 422 and "already has an icon" in again.get_data(as_text=True)
    bad = api.post(url, token=token, json={**body, "keyword": "x", "data": "%%%"})
    assert bad.status_code == 422
    gone = api.call("DELETE", f"/campaigns/{table.campaign.slug}/icons/{icon['id']}", token=token)
    assert gone.status_code == 200 and api.get(url).get_json()["items"] == []


def _faces(db_session, world) -> dict:
    """Ada's icons "calm" (her default) and "MKPICKED", Bram's "MKBRAMDEFAULT"; Cleo has
    none. Each icon's alt text is "alt <keyword>"."""
    from pbp.services import icons

    made = {}
    for name, owner, keyword in (("Ada", "player", "calm"), ("Ada", "player", "MKPICKED"),
                                 ("Bram", "other_player", "MKBRAMDEFAULT")):  # fmt: skip
        made[keyword] = icons.add_icon(
            session=db_session, campaign=world.campaign, actor=world.users[owner],
            character_slug=world.characters[name].slug, keyword=keyword, alt=f"alt {keyword}",
            data=picture(), now=world.turn.opened_at,
        )  # fmt: skip
    db_session.commit()
    return made


@pytest.fixture
def api(client):
    from tests.helpers import Api

    return Api(client)


def test_entries_and_notes_show_the_icon_picked_or_the_default(api, client, db_session, world):
    """Issue #33 item 1: "The player picks one per entry, note or forum post; a default is
    used otherwise." Through the API; the entry's page shows them."""
    slug = world.campaign.slug
    made = _faces(db_session, world)
    entry = {"title": "A walk", "mood": "Calm", "body": "I walk.", "icon_id": made["MKPICKED"].id}
    written = api.post(f"/campaigns/{slug}/entries", token=world.tokens["player"], json=entry)
    assert written.status_code == 201, written.get_data(as_text=True)
    entry_id = written.get_json()["id"]
    wrong = {**entry, "title": "Another", "icon_id": made["MKBRAMDEFAULT"].id}
    refused = api.post(f"/campaigns/{slug}/entries", token=world.tokens["player"], json=wrong)
    assert refused.status_code == 422 and "your character's own icons" in refused.get_data(
        as_text=True
    )
    noted = api.post(
        f"/campaigns/{slug}/entries/{entry_id}/notes",
        token=world.tokens["other_player"],
        json={"body": "Nice walk."},
    )
    assert noted.status_code == 201, noted.get_data(as_text=True)
    page = client.get(f"/c/{slug}/{world.characters['Ada'].slug}/{entry_id}")
    text = page.get_data(as_text=True)
    assert 'alt="alt MKPICKED"' in text  # the one picked, not Ada's default "calm"
    assert 'alt="alt calm"' not in text
    assert 'alt="alt MKBRAMDEFAULT"' in text  # Bram's note: his default


def _card(page: str, entry_id: int) -> str:
    """One entry's card on the planet or the turn page, its notes included."""
    start = page.index(f'id="entry-{entry_id}"')
    return page[start : page.index("</article>", start)]


def _alts(html: str) -> list[str]:
    return re.findall(r'<img class="icon" src="/icons/\d+-[0-9a-f]{16}\.png" alt="([^"]*)"', html)


def test_the_planet_shows_each_card_s_icon_with_no_query_per_card(
    app, client, db_session, engine, world
):
    """Issue #33 item 1 on the planet and the turn page (their cards are one template):
    each entry and note shows its picked icon or its character's default, as on the
    entry's page. The icons are read with the characters the page reads anyway, so it
    sends as many SELECTs with icons as without, and for one card as for several."""
    from pbp.services.noteworthy import hosted_blog
    from tests.bench.test_bench_pages import count_selects

    app.config["PBP_PAGE_CACHE_SECONDS"] = 0  # every view builds the page: each is counted
    chars, url = world.characters, f"/c/{world.campaign.slug}/"
    client.get(url)  # once first: per-process checks (the schema version) happen here
    with count_selects(engine) as no_icons:
        page = client.get(url).get_data(as_text=True)
    assert _alts(page) == []
    made = _faces(db_session, world)
    with count_selects(engine) as one_card:
        page = client.get(url).get_data(as_text=True)
    assert _alts(_card(page, world.challenge.id)) == ["alt calm"]  # Ada's default

    walk = hosted_blog.store_entry(
        session=db_session, character=chars["Ada"], title="A walk", body_markdown="I walk.",
        mood="Calm", now=world.turn.opened_at,
    )  # fmt: skip
    walk.icon_id = made["MKPICKED"].id
    db_session.add(walk)
    for who, on in (("Bram", walk), ("Cleo", walk), ("Bram", world.challenge)):
        hosted_blog.store_note(
            session=db_session, entry=on, author=chars[who], body_markdown=f"{who} saw it.",
            now=world.turn.opened_at,
        )  # fmt: skip
    hosted_blog.store_entry(
        session=db_session, character=chars["Cleo"], title="Quiet", body_markdown="Hush.",
        mood="Calm", now=world.turn.opened_at,
    )  # fmt: skip
    db_session.commit()
    with count_selects(engine) as more_cards:
        planet = client.get(url).get_data(as_text=True)
    turn_page = client.get(f"{url}turns/{world.turn.number}").get_data(as_text=True)
    for page in (planet, turn_page):
        # The picked icon, then Bram's default beside his note; Cleo has none.
        assert _alts(_card(page, walk.id)) == ["alt MKPICKED", "alt MKBRAMDEFAULT"]
        assert _alts(_card(page, world.challenge.id)) == ["alt calm", "alt MKBRAMDEFAULT"]
        assert page.count('<img class="icon"') == 4  # Cleo's entry and note: none
    # The icons are read with the characters the page reads anyway: no query more.
    assert len(one_card) == len(no_icons), "\n".join(one_card)
    assert len(more_cards) == len(one_card), "\n".join(more_cards)
