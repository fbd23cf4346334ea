"""pbp.web.access: roles per campaign, login_required, and safe redirects."""

from __future__ import annotations

import pytest
from flask_login import login_user

from pbp.errors import Forbidden
from pbp.services import campaigns
from pbp.web.access import (
    LoginUser,
    current_account,
    current_membership,
    login_required,
    require_member,
    require_player,
    require_referee,
    safe_next,
)
from tests.factories import make_campaign, make_user


@pytest.fixture
def cast(db_session):
    """A referee, a player and a stranger around one campaign."""
    referee, player, stranger = (make_user(db_session, n) for n in ("Ref", "Ply", "Str"))
    campaign = make_campaign(db_session, name="Access Game", referee=referee)
    campaigns.add_character(session=db_session, campaign=campaign, name="Ada", user=player)
    db_session.commit()
    return campaign, {"referee": referee, "player": player, "stranger": stranger, "visitor": None}


def as_user(app, user):
    context = app.test_request_context("/")
    context.push()
    if user is not None:
        login_user(LoginUser(user))
    return context


@pytest.mark.parametrize(
    ("who", "check", "allowed"),
    [
        ("referee", require_referee, True),
        ("referee", require_player, False),
        ("referee", require_member, True),
        ("player", require_referee, False),
        ("player", require_player, True),
        ("player", require_member, True),
        ("stranger", require_referee, False),
        ("stranger", require_player, False),
        ("stranger", require_member, False),
        ("visitor", require_member, False),
    ],
)
def test_role_checks(app, cast, who, check, allowed):
    campaign, people = cast
    context = as_user(app, people[who])
    try:
        if allowed:
            assert check(campaign).role == who
        else:
            with pytest.raises(Forbidden, match="of Access Game can do this") as refused:
                check(campaign)
            assert refused.value.status == 403
            hint = "log in first" if who == "visitor" else "you are not"
            assert hint in str(refused.value)
    finally:
        context.pop()


def test_roles_are_per_campaign(app, cast, db_session):
    campaign, people = cast
    elsewhere = make_campaign(db_session, name="Player's Own Game", referee=people["player"])
    db_session.commit()
    context = as_user(app, people["player"])
    try:
        assert require_referee(elsewhere).role == "referee"
        assert require_player(campaign).role == "player"
        assert current_account().id == people["player"].id
    finally:
        context.pop()


def test_visitor_has_no_account_or_membership(app, cast):
    campaign, _ = cast
    with app.test_request_context("/"):
        assert current_account() is None
        assert current_membership(campaign) is None


def test_login_required_redirects_with_next(app, client, auth):
    app.add_url_rule("/private/", "private", login_required(lambda: "secret"))
    response = client.get("/private/?page=2")
    assert response.status_code == 302
    assert response.headers["Location"] == "/login?next=/private/?page%3D2"
    auth.login(auth.create_user())
    assert client.get("/private/").get_data(as_text=True) == "secret"


def test_wrong_role_gets_a_403_page(client, auth, db_session):
    referee, player = auth.create_user(), auth.create_user()
    campaign = make_campaign(db_session, name="Forbidden Game", referee=referee)
    campaigns.add_character(session=db_session, campaign=campaign, name="P", user=player)
    db_session.commit()
    auth.login(player)
    page = client.get(f"/c/{campaign.slug}/invites")
    assert page.status_code == 403
    assert "only the referee of Forbidden Game can do this" in page.get_data(as_text=True)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/c/game/", "/c/game/"),
        ("/c/game/?turn=2#x", "/c/game/?turn=2#x"),
        (None, "/"),
        ("", "/"),
        ("c/game", "/"),
        ("//evil.example/", "/"),
        ("/\\evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("javascript:alert(1)", "/"),
        ("/ok\r\nSet-Cookie: x=1", "/"),
    ],
)
def test_safe_next(target, expected):
    assert safe_next(target) == expected
