"""Issue #16, item 8: sessions end for good, a reset locks out tokens, limits that one
attacker cannot turn against everyone, proxies trusted only when configured."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pbp.config import load_config
from pbp.services.accounts import logins as accounts
from tests.helpers import auth_for
from tests.web.test_auth_reset import NEW, reset_path

PRIVATE_PAGE = "/account/tokens/"  # any page that needs a login


def _logged_in(client) -> bool:
    return client.get(PRIVATE_PAGE).status_code == 200


def test_a_session_cookie_copied_before_logout_no_longer_works(app, client, auth):
    user = auth.create_user()
    auth.login(user)
    copied = client.get_cookie("session").value
    assert _logged_in(client)
    auth.logout()

    thief = app.test_client()
    thief.set_cookie("session", copied)
    page = thief.get(PRIVATE_PAGE)
    assert page.status_code == 302 and "/login" in page.headers["Location"]


def test_logging_out_on_one_device_ends_the_others(app, client, auth):
    user = auth.create_user()
    auth.login(user)
    phone = app.test_client()
    auth_for(phone, None).login(user)
    assert _logged_in(client) and _logged_in(phone)
    auth.logout()
    assert not _logged_in(phone)
    assert auth_for(phone, None).login(user).status_code == 302  # logging in again works
    assert _logged_in(phone)


def test_a_password_change_ends_copied_sessions(app, client, auth, db_session):
    user = auth.create_user()
    auth.login(user)
    copied = client.get_cookie("session").value
    accounts.set_password(session=db_session, user=user, password=NEW, now=datetime.now(UTC))
    db_session.commit()
    thief = app.test_client()
    thief.set_cookie("session", copied)
    assert not _logged_in(thief)


def test_a_password_reset_revokes_the_accounts_api_tokens(app, client, auth, api, db_session):
    from tests.helpers import make_token

    user = auth.create_user()
    other = auth.create_user()
    token, others_token = make_token(db_session, user), make_token(db_session, other)
    db_session.commit()
    assert api.get("/me", token=token).status_code == 200

    link = reset_path(user)
    assert auth.post(link, {"password": NEW, "confirm": NEW}).status_code == 302

    refused = api.get("/me", token=token)
    assert refused.status_code == 401
    assert "unknown or revoked" in refused.get_json()["detail"]
    assert api.get("/me", token=others_token).status_code == 200  # nobody else's


# --- login limits ----------------------------------------------------------------------


def _fail_logins(client, db_session, user, times: int, address: str, **headers) -> list[int]:
    auth = auth_for(client, db_session)
    client.environ_base["REMOTE_ADDR"] = address
    return [
        auth.post(
            "/login", {"email": user.email, "password": "wrong password!"}, headers=headers
        ).status_code
        for _ in range(times)
    ]


def test_guessing_one_account_does_not_lock_out_others_behind_the_same_address(
    app_with, db_session
):
    app = app_with(PBP_LOGIN_LIMIT="3 per minute")
    client = app.test_client()
    auth = auth_for(client, db_session)
    victim, colleague = auth.create_user(), auth.create_user()

    assert _fail_logins(client, db_session, victim, 4, "198.51.100.7") == [400] * 3 + [429]
    # The colleague behind the same proxy logs in as usual ...
    assert auth.login(colleague).status_code == 302
    # ... while the guessed account stays limited from that address.
    assert _fail_logins(client, db_session, victim, 1, "198.51.100.7") == [429]


def test_a_guessed_accounts_owner_elsewhere_can_still_log_in(app_with, db_session):
    app = app_with(PBP_LOGIN_LIMIT="3 per minute")
    attacker, owner = app.test_client(), app.test_client()
    user = auth_for(attacker, db_session).create_user()
    assert _fail_logins(attacker, db_session, user, 4, "198.51.100.7")[-1] == 429
    owner.environ_base["REMOTE_ADDR"] = "203.0.113.9"
    assert auth_for(owner, db_session).login(user).status_code == 302


def test_the_limit_per_address_bounds_guesses_over_many_accounts(app_with, db_session):
    app = app_with(PBP_LOGIN_LIMIT="3 per minute", PBP_LOGIN_ADDRESS_LIMIT="5 per minute")
    client = app.test_client()
    auth = auth_for(client, db_session)
    users = [auth.create_user() for _ in range(3)]
    statuses = [s for u in users for s in _fail_logins(client, db_session, u, 2, "192.0.2.1")]
    assert statuses == [400] * 5 + [429]


def test_forwarded_for_is_ignored_without_trusted_proxies(app_with, db_session):
    """Otherwise anyone could pick a fresh address per guess with a header."""
    app = app_with(PBP_LOGIN_LIMIT="3 per minute")
    client = app.test_client()
    user = auth_for(client, db_session).create_user()
    statuses = []
    for n in range(4):
        forged = {"X-Forwarded-For": f"10.9.0.{n}"}
        statuses += _fail_logins(client, db_session, user, 1, "192.0.2.1", **forged)
    assert statuses == [400] * 3 + [429]


def test_trusted_proxies_give_the_clients_own_address(app_with, db_session):
    app = app_with(PBP_LOGIN_LIMIT="3 per minute", PBP_TRUSTED_PROXIES=1)
    client = app.test_client()
    user = auth_for(client, db_session).create_user()
    proxy = "10.0.0.2"
    first = {"X-Forwarded-For": "198.51.100.7"}
    assert _fail_logins(client, db_session, user, 4, proxy, **first)[-1] == 429
    # The same account from another client behind the same proxy is not limited.
    second = {"X-Forwarded-For": "203.0.113.9"}
    assert _fail_logins(client, db_session, user, 1, proxy, **second) == [400]


def test_proxy_and_storage_settings_come_from_the_environment(tmp_path):
    env = {
        "SECRET_KEY": "k" * 40,
        "PBP_TRUSTED_PROXIES": "2",
        "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/0",
    }
    config = load_config(tmp_path, env)
    assert config["PBP_TRUSTED_PROXIES"] == 2
    assert config["RATELIMIT_STORAGE_URI"] == "redis://127.0.0.1:6379/0"
    defaults = load_config(tmp_path, {"SECRET_KEY": "k" * 40})
    assert defaults["PBP_TRUSTED_PROXIES"] == 0
    assert defaults["RATELIMIT_STORAGE_URI"] == "memory://"


# --- content limits ----------------------------------------------------------------------


def test_invites_are_limited_per_account(app_with, db_session):
    from tests.factories import make_campaign

    app = app_with(PBP_CONTENT_LIMIT="2 per minute")
    client = app.test_client()
    auth = auth_for(client, db_session)
    referee = auth.create_user()
    campaign = make_campaign(db_session, referee=referee)
    db_session.commit()
    auth.login(referee)
    url = f"/c/{campaign.slug}/invites"
    statuses = [auth.post(url, {"role": "player", "days": "7"}).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    page = auth.post(url, {"role": "player", "days": "7"})
    assert "posting faster than pbp allows" in page.get_data(as_text=True)


@pytest.fixture
def limited_api(app_with, world):
    from tests.helpers import Api

    return Api(app_with(PBP_CONTENT_LIMIT="2 per minute").test_client())


def test_api_notes_are_limited_per_account_with_problem_json(limited_api, world):
    path = f"/campaigns/{world.slug}/entries/{world.challenge.id}/notes"
    statuses = []
    for n in range(3):
        answer = limited_api.post(
            path, token=world.tokens["other_player"], json={"body": f"Stance: oppose ({n})"}
        )
        statuses.append(answer.status_code)
    assert statuses == [201, 201, 429]
    assert answer.mimetype == "application/problem+json"
    assert "posting faster than pbp allows" in answer.get_json()["detail"]
    # Another account has its own budget.
    other = limited_api.post(path, token=world.tokens["referee"], json={"body": "Noted."})
    assert other.status_code != 429
