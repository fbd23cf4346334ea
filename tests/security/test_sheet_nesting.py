"""Issue #16, item 11: a character sheet nested too deep gets a 400 with the reason, on
the page and through the service every caller uses; the API's JSON bodies likewise."""

from __future__ import annotations

import json

import pytest

from pbp.errors import UserError
from pbp.services import campaigns
from pbp.services.forum import sheets
from tests.services.forum.tables import T0, make_table


def _nested(levels: int) -> str:
    return '{"gear": ' + "[" * levels + "]" * levels + "}"


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, ruleset="noir", users=users)


@pytest.mark.parametrize("levels", [50, 5_000, 100_000])
def test_a_deeply_nested_sheet_gets_a_422_page_with_the_reason(auth, client, table, levels):
    auth.login(table.ada_user)
    url = f"/c/{table.campaign.slug}/sheets/{table.ada.slug}/edit"
    page = auth.post(url, {"sheet": _nested(levels)})
    assert page.status_code == 422
    assert "more than 20 levels deep" in page.get_data(as_text=True)


def test_a_sheet_of_reasonable_depth_is_saved(auth, client, table):
    auth.login(table.ada_user)
    url = f"/c/{table.campaign.slug}/sheets/{table.ada.slug}/edit"
    page = auth.post(url, {"sheet": _nested(10)})
    assert page.status_code == 302
    assert client.get(f"/c/{table.campaign.slug}/sheets/{table.ada.slug}").status_code == 200


def test_the_service_refuses_deep_data_from_any_caller(db_session, table):
    deep: dict = {}
    for _ in range(2_000):
        deep = {"inner": deep}
    member = campaigns.membership(session=db_session, campaign=table.campaign, user=table.ada_user)
    with pytest.raises(UserError, match="more than 20 levels deep"):
        sheets.save_sheet(
            session=db_session,
            campaign=table.campaign,
            character=table.ada,
            data=deep,
            actor=table.ada_user,
            membership=member,
            now=T0,
        )


def test_a_deeply_nested_api_body_gets_a_400_problem(api, forum_world):
    body = json.dumps({"body": "x"})[:-1] + ', "extra": ' + "[" * 100_000 + "]" * 100_000 + "}"
    answer = api.post(
        f"/campaigns/{forum_world.extra['forum']}/forum/threads/{forum_world.extra['thread']}/posts",
        token=forum_world.tokens["player"],
        data=body,
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert answer.mimetype == "application/problem+json"
    assert "recursion limit" in answer.get_json()["detail"]
