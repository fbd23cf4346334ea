"""A signed-in person changes their password (`/account/password`): the current one first,
every other session ends, this one goes on; the service `logins.change_password` is the
page's only caller of `set_password` outside the tests."""

from __future__ import annotations

from tests.helpers import PASSWORD, post_form

NEW = "a brand new passphrase"


def _change(auth, current=PASSWORD, password=NEW, confirm=NEW):
    return auth.post(
        "/account/password", {"current": current, "password": password, "confirm": confirm}
    )


def test_the_password_changes_and_other_sessions_end(app, client, auth):
    user = auth.create_user()
    other = app.test_client()
    assert (
        post_form(other, "/login", {"email": user.email, "password": PASSWORD}).status_code == 302
    )
    auth.login(user)
    changed = _change(auth)
    assert changed.status_code == 302 and changed.headers["Location"].endswith("/account/tokens/")
    assert client.get("/account/password").status_code == 200  # this session goes on
    assert other.get("/account/password").status_code == 302  # the other one is logged out
    auth.logout()
    assert auth.login(user, password=PASSWORD).status_code != 302
    assert auth.login(user, password=NEW).status_code == 302


def test_a_wrong_current_password_changes_nothing_and_says_why(client, auth):
    user = auth.create_user()
    auth.login(user)
    refused = _change(auth, current="not my password at all")
    text = refused.get_data(as_text=True)
    assert refused.status_code == 422 and "the current password is not the one you typed" in text
    auth.logout()
    assert auth.login(user, password=PASSWORD).status_code == 302


def test_the_new_password_is_checked_like_every_password(client, auth):
    auth.login(auth.create_user())
    short = _change(auth, password="short", confirm="short")
    assert short.status_code == 422 and "at least 10 characters" in short.get_data(as_text=True)
    differ = _change(auth, confirm="something else entirely")
    assert differ.status_code == 422 and "The two passwords differ." in differ.get_data(
        as_text=True
    )


def test_a_visitor_is_sent_to_log_in(client):
    assert client.get("/account/password").status_code == 302
