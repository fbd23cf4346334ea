"""The API's HTTP contract: cursor pages, ETags, problem details, tokens and scopes."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from pbp.services import campaigns
from tests.helpers import make_token

# -- pagination ------------------------------------------------------------------------------


def _add_characters(db_session, world, count):
    for n in range(count):
        campaigns.add_character(session=db_session, campaign=world.campaign, name=f"Extra {n}")
    db_session.commit()


def test_pages_follow_the_cursor_to_the_end_without_repeats(api, world, db_session):
    _add_characters(db_session, world, 5)  # 11 characters in all
    seen, url, pages = [], f"/campaigns/{world.slug}/characters?limit=4", 0
    while url:
        response = api.get(url)
        assert response.status_code == 200
        page = response.get_json()
        seen += [c["id"] for c in page["items"]]
        pages += 1
        if page["next_cursor"]:
            link = response.headers["Link"]
            assert link.endswith('rel="next"') and page["next_cursor"] in link
            url = f"/campaigns/{world.slug}/characters?limit=4&cursor={page['next_cursor']}"
        else:
            assert "Link" not in response.headers
            url = None
    assert pages == 3
    assert seen == sorted(seen) and len(seen) == len(set(seen)) == 11


def test_a_page_sees_rows_added_while_paging_once(api, world, db_session):
    first = api.get(f"/campaigns/{world.slug}/characters?limit=3").get_json()
    _add_characters(db_session, world, 1)
    rest, cursor = [], first["next_cursor"]
    while cursor:
        page = api.get(f"/campaigns/{world.slug}/characters?limit=3&cursor={cursor}").get_json()
        rest += [c["name"] for c in page["items"]]
        cursor = page["next_cursor"]
    names = [c["name"] for c in first["items"]] + rest
    assert len(names) == len(set(names)) == 7 and names[-1] == "Extra 0"


def test_the_link_header_keeps_the_filters(api, world):
    for _ in range(3):
        api.post(
            f"/campaigns/{world.slug}/entries",
            token=world.tokens["player"],
            json={"title": "Note to self", "mood": "Content"},
        )
    response = api.get(f"/campaigns/{world.slug}/entries?character=ada&limit=2")
    link = response.headers["Link"]
    query = parse_qs(urlsplit(link.split(";")[0].strip("<>")).query)
    assert query["character"] == ["ada"] and query["limit"] == ["2"] and query["cursor"]
    nxt = api.get(link.split(";")[0].strip("<>")).get_json()
    assert {e["character_slug"] for e in nxt["items"]} == {"ada"}


@pytest.mark.parametrize("query", ["cursor=nonsense", "cursor=YWZ0ZXI6LTE", "limit=0", "limit=x"])
def test_bad_paging_parameters_are_problems(api, world, query):
    response = api.get(f"/campaigns/{world.slug}/characters?{query}")
    assert response.status_code == 400
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["errors"][0]["location"].startswith("query.")


# -- ETag ------------------------------------------------------------------------------------


def test_an_unchanged_resource_answers_304_and_a_changed_one_200(api, world):
    url = f"/campaigns/{world.slug}/turns/1"
    first = api.get(url)
    etag = first.headers["ETag"]
    assert first.status_code == 200 and etag.startswith('"')
    same = api.get(url, headers={"If-None-Match": etag})
    assert same.status_code == 304 and same.data == b"" and same.headers["ETag"] == etag
    assert api.get(url, headers={"If-None-Match": f'"other", W/{etag}'}).status_code == 304
    api.post(f"/campaigns/{world.slug}/turns/1/close", token=world.tokens["referee"])
    changed = api.get(url, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag
    assert changed.get_json()["status"] == "closed"


def test_the_etag_depends_on_what_the_caller_may_see(api, world, db_session):
    from pbp.services.noteworthy import turns

    turns.close_turn(
        session=db_session, campaign=world.campaign, actor=None, now=world.turn.opened_at
    )
    turns.resolve_turn(
        session=db_session, campaign=world.campaign, actor=None, now=world.turn.opened_at
    )
    turns.post_event(
        session=db_session,
        campaign=world.campaign,
        text="A storm.",
        actor=None,
        now=world.turn.opened_at,
        tailored=[turns.Tailored(world.characters["Bram"].id, "addition", "You hear a shot.")],
    )
    db_session.commit()
    url = f"/campaigns/{world.slug}/turns/2"
    seen = {role: api.get(url, token=world.tokens[role]) for role in world.tokens}
    assert [t["text"] for t in seen["other_player"].get_json()["tailored"]] == ["You hear a shot."]
    assert seen["player"].get_json()["tailored"] == [] == seen["anonymous"].get_json()["tailored"]
    assert len(seen["referee"].get_json()["tailored"]) == 1
    assert seen["player"].headers["ETag"] != seen["other_player"].headers["ETag"]


def test_writes_are_not_cached(api, world):
    response = api.post(f"/campaigns/{world.slug}/turns/1/close", token=world.tokens["referee"])
    assert response.headers["Cache-Control"] == "no-store" and "ETag" not in response.headers


# -- problem details -------------------------------------------------------------------------


def _problem(response, status):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body


def test_a_body_that_is_not_json(api, world):
    response = api.post(
        f"/campaigns/{world.slug}/entries",
        token=world.tokens["player"],
        data="{not json",
        content_type="application/json",
    )
    assert "not valid JSON" in _problem(response, 400)["detail"]


def test_a_body_of_another_type(api, world):
    response = api.post(
        f"/campaigns/{world.slug}/entries", token=world.tokens["player"], data={"title": "x"}
    )
    assert "Content-Type: application/json" in _problem(response, 415)["detail"]


def test_each_invalid_field_is_named(api, world):
    response = api.post(
        f"/campaigns/{world.slug}/entries",
        token=world.tokens["player"],
        json={"title": "", "mood": "x" * 201, "colour": "red"},
    )
    body = _problem(response, 422)
    locations = {e["location"] for e in body["errors"]}
    assert locations == {"body.title", "body.mood", "body.colour"}
    assert "body.title" in body["detail"]


def test_nul_characters_are_refused_before_the_database(api, world):
    response = api.post(
        f"/campaigns/{world.slug}/entries",
        token=world.tokens["player"],
        json={"title": "a\x00b", "mood": "Content"},
    )
    assert "NUL" in _problem(response, 422)["errors"][0]["message"]


def test_a_service_refusal_keeps_its_message_and_status(api, world):
    response = api.post(
        f"/campaigns/{world.slug}/turns", token=world.tokens["referee"], json={"text": "Again"}
    )
    assert "close and resolve it before posting the next event" in _problem(response, 409)["detail"]


def test_a_rules_refusal_reads_as_the_form_does(api, world):
    response = api.post(
        f"/campaigns/{world.slug}/entries",
        token=world.tokens["player"],
        json={"title": "Again!", "mood": "Challenging", "target_id": world.characters["Cleo"].id},
    )
    assert "already challenged this turn" in _problem(response, 422)["detail"]


@pytest.mark.parametrize(
    "path", ["/nowhere", "/campaigns/no-such-game", "/campaigns/x/entries/99999999999"]
)
def test_unknown_addresses_are_problems(api, path):
    _problem(api.get(path), 404)


def test_a_method_not_allowed_is_a_problem_with_allow(api, world):
    response = api.call("DELETE", f"/campaigns/{world.slug}")
    _problem(response, 405)
    assert "GET" in response.headers["Allow"]


def test_pages_outside_the_api_keep_their_html_errors(client):
    response = client.get("/no/such/page")
    assert response.status_code == 404 and response.mimetype == "text/html"


# -- tokens and scopes -----------------------------------------------------------------------


def test_an_unknown_token_is_refused_even_where_anyone_may_read(api, world):
    body = _problem(api.get("/campaigns", token="pbp_not-a-token"), 401)
    assert "/account/tokens" in body["detail"]


def test_a_malformed_authorization_header(api, world):
    response = api.get("/me", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert "Bearer" in _problem(response, 401)["detail"]
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_a_read_token_reads_but_cannot_write(api, world, db_session):
    token = make_token(db_session, world.users["referee"], scope="read")
    db_session.commit()
    assert api.get(f"/campaigns/{world.slug}/roster", token=token).status_code == 200
    response = api.post(f"/campaigns/{world.slug}/turns/1/close", token=token)
    assert "may only read" in _problem(response, 403)["detail"]
    assert 'error="insufficient_scope"' in response.headers["WWW-Authenticate"]


def test_the_login_cookie_does_not_authenticate_the_api(app, api, world, db_session):
    """The API's POSTs skip CSRF checks, so a browser session must not count there."""
    from tests.helpers import AuthActions

    auth = AuthActions(api.client, db_session)
    referee = auth.create_user()
    campaign = campaigns.create_campaign(session=db_session, referee=referee, name="Cookie game")
    db_session.commit()
    assert auth.login(referee).status_code == 302
    response = api.post(f"/campaigns/{campaign.slug}/turns", json={"text": "Forged"})
    _problem(response, 401)
    assert api.get(f"/campaigns/{campaign.slug}").get_json()["role"] is None


def test_me_names_the_token(api, world):
    body = api.get("/me", token=world.tokens["player"]).get_json()
    assert body["display_name"] == "Player" and body["token"]["scope"] == "write"
    assert body["token"]["last_used_at"] is not None
