"""Password reset through the pages: request, mailed link, new password, link used."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pbp.services.accounts import logins as accounts

SECRET = "test-secret-key-" + "x" * 32
NEW = "my brand new passphrase"


def reset_path(user, now=None) -> str:
    issued = accounts.issue_reset_link(
        user=user, secret_key=SECRET, base_url="http://pbp.test", now=now or datetime.now(UTC)
    )
    return issued.url.removeprefix("http://pbp.test")


def test_request_page_says_the_same_for_any_address(client, auth, sent_mail):
    user = auth.create_user()
    for email in (user.email, "nobody@example.test"):
        page = auth.post("/reset", {"email": email})
        assert page.status_code == 200
        assert "If there is an account for" in page.get_data(as_text=True)
        assert "/reset/" not in page.get_data(as_text=True)  # the link goes by mail only
    assert [(m["kind"], m["user"].id) for m in sent_mail] == [("password_reset", user.id)]


def test_mailed_link_sets_a_new_password_once(client, auth, sent_mail):
    user = auth.create_user()
    auth.post("/reset", {"email": user.email})
    link = sent_mail[0]["url"].removeprefix("http://pbp.test")
    page = client.get(link)
    assert page.status_code == 200 and page.headers["Referrer-Policy"] == "no-referrer"
    assert user.email in page.get_data(as_text=True)
    response = auth.post(link, {"password": NEW, "confirm": NEW})
    assert response.status_code == 302
    auth.logout()
    assert auth.login(user, password=auth.password).status_code == 400
    assert auth.login(user, password=NEW).status_code == 302
    again = client.get(link)
    assert again.status_code == 410
    assert "already used" in again.get_data(as_text=True)


def test_expired_reset_link_is_refused(client, auth):
    user = auth.create_user()
    page = client.get(reset_path(user, now=datetime.now(UTC) - timedelta(hours=3)))
    assert page.status_code == 410
    assert "has expired; ask for a new one" in page.get_data(as_text=True)


def test_short_new_password_is_shown_on_the_form(client, auth):
    user = auth.create_user()
    link = reset_path(user)
    page = auth.post(link, {"password": "short", "confirm": "short"})
    assert page.status_code == 422
    assert "The password must have at least 10 characters." in page.get_data(as_text=True)
    assert client.get(link).status_code == 200  # still usable


def test_reset_requests_are_rate_limited(client, auth):
    from tests.helpers import csrf_token

    token = csrf_token(client, "/reset")
    statuses = [
        client.post("/reset", data={"email": "x@example.test", "csrf_token": token}).status_code
        for _ in range(6)
    ]
    assert statuses == [200] * 5 + [429]
