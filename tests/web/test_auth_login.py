"""Logging in and out through the pages; cookie flags; the login rate limit."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from flask import render_template
from sqlmodel import select

from pbp import create_app
from pbp.models import AuditLog
from pbp.services.accounts import logins as accounts
from pbp.web.auth import cookie_settings
from tests.helpers import csrf_token


def logged_in_as(client) -> str | None:
    page = client.get("/login").get_data(as_text=True)
    match = re.search(r"You are logged in as <strong>([^<]+)</strong>", page)
    return match.group(1) if match else None


def test_login_page_is_an_accessible_form(client):
    page = client.get("/login")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert '<label for="email">' in html and '<label for="password">' in html
    assert 'autocomplete="current-password"' in html
    assert 'name="csrf_token"' in html


def test_login_and_logout(client, auth, db_session):
    user = auth.create_user(display_name="Ada Quill")
    response = auth.login(user)
    assert response.status_code == 302 and response.headers["Location"] == "/"
    assert logged_in_as(client) == "Ada Quill"
    response = auth.logout()
    assert response.status_code == 302
    assert logged_in_as(client) is None
    actions = db_session.exec(
        select(AuditLog.action).where(AuditLog.actor_id == user.id).order_by(AuditLog.id)
    ).all()
    assert actions == ["login", "logout"]


def test_login_follows_a_local_next_only(client, auth):
    user = auth.create_user()
    assert auth.login(user, next="/c/some-game/").headers["Location"] == "/c/some-game/"
    auth.logout()
    assert auth.login(user, next="https://evil.example/").headers["Location"] == "/"


def test_login_page_carries_next_into_the_form(client):
    html = client.get("/login?next=/c/x/invites").get_data(as_text=True)
    assert re.search(r'name="next" type="hidden" value="/c/x/invites"', html)


def test_wrong_password_is_refused_without_saying_which_part(client, auth):
    user = auth.create_user()
    for email, password in ((user.email, "wrong password!"), ("nobody@example.test", "x" * 12)):
        page = auth.login(email, password)
        assert page.status_code == 400
        assert "Wrong email or password." in page.get_data(as_text=True)
    assert logged_in_as(client) is None


def test_incomplete_login_form_shows_field_errors(client, auth):
    page = auth.post("/login", {"email": "not an address", "password": ""})
    html = page.get_data(as_text=True)
    assert page.status_code == 422
    assert "This is not an email address." in html
    assert 'aria-invalid="true"' in html and 'aria-describedby="email-errors"' in html


def test_logout_is_post_only(client, auth):
    auth.login(auth.create_user(display_name="Stays"))
    assert client.get("/logout").status_code == 405
    assert logged_in_as(client) == "Stays"


def test_changing_the_password_ends_other_sessions(app, client, auth, db_session):
    user = auth.create_user(display_name="Bram")
    auth.login(user)
    assert logged_in_as(client) == "Bram"
    accounts.set_password(
        session=db_session, user=user, password="a different phrase", now=datetime.now(UTC)
    )
    db_session.commit()
    assert logged_in_as(client) is None


def test_session_cookie_is_httponly_and_lax(client, auth):
    response = auth.login(auth.create_user())
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("session="))
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "Secure" not in cookie  # the test site is http://


@pytest.mark.parametrize(
    ("base_url", "secure"),
    [("https://pbp.example", True), ("HTTPS://pbp.example", True), ("http://pbp.test", False)],
)
def test_cookie_settings_follow_the_base_url(base_url, secure):
    settings = cookie_settings(base_url)
    assert settings["SESSION_COOKIE_SECURE"] is secure
    assert settings["SESSION_COOKIE_HTTPONLY"] is True
    assert settings["SESSION_COOKIE_SAMESITE"] == "Lax"


def test_https_site_sets_secure_cookies(engine, database_url, tmp_path):
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path / "instance",
            "SECRET_KEY": "https-test-secret-" + "x" * 32,
            "DATABASE_URL": database_url,
            "ENGINE": engine,
            "PBP_BASE_URL": "https://pbp.example",
        }
    )
    response = app.test_client().get("/login", base_url="https://pbp.example")
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("session="))
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_failed_logins_are_rate_limited(app, client, auth):
    # The limit per address and account; the one per account over every address (issue
    # #28 item 8, tests/security/test_account_backoff.py) would answer 429 first.
    app.config["PBP_LOGIN_ACCOUNT_FREE"] = 100
    user = auth.create_user()
    token = csrf_token(client)
    form = {"email": user.email, "password": "wrong password!", "csrf_token": token}
    statuses = [client.post("/login", data=form).status_code for _ in range(11)]
    assert statuses == [400] * 10 + [429]
    page = client.post("/login", data={**form, "password": auth.password})
    assert page.status_code == 429
    assert "too many attempts" in page.get_data(as_text=True)


def test_successful_logins_do_not_use_up_the_limit(client, auth):
    user = auth.create_user()
    for _ in range(12):
        assert auth.login(user).status_code == 302


def test_account_nav_partial_logs_in_and_out(app, client, auth):
    user = auth.create_user(display_name="Nav User")
    with app.test_request_context("/c/x/?turn=2"):
        html = render_template("auth/_account_nav.html")
    assert 'href="/login?next=/c/x/?turn%3D2"' in html
    auth.login(user)
    with client:
        client.get("/login")  # keeps this request's context, logged in, for rendering
        html = render_template("auth/_account_nav.html")
    assert "Nav User" in html and 'action="/logout"' in html and 'name="csrf_token"' in html
