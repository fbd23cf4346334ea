"""The security checks the issue asks for: CSRF on every form, and clear refusals."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlmodel import select

from pbp.models import AuditLog, Invite
from pbp.services.accounts import logins as accounts
from tests.factories import make_campaign

SECRET = "test-secret-key-" + "x" * 32


def assert_csrf_refused(response):
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "this form could not be accepted" in html and "reload the page" in html


@pytest.mark.parametrize("token", [None, "", "not-a-token"])
def test_login_without_a_valid_csrf_token_is_refused(client, auth, db_session, token):
    user = auth.create_user()
    data = {"email": user.email, "password": auth.password}
    if token is not None:
        data["csrf_token"] = token
    assert_csrf_refused(client.post("/login", data=data))
    assert db_session.exec(select(AuditLog).where(AuditLog.action == "login")).all() == []


def test_token_from_another_session_is_refused(app, client, auth):
    user = auth.create_user()
    from tests.helpers import csrf_token

    other = app.test_client()
    token = csrf_token(other)
    data = {"email": user.email, "password": auth.password, "csrf_token": token}
    assert_csrf_refused(client.post("/login", data=data))


def test_invite_creation_needs_the_token(client, auth, db_session):
    referee = auth.create_user()
    campaign = make_campaign(db_session, referee=referee)
    db_session.commit()
    auth.login(referee)
    response = client.post(f"/c/{campaign.slug}/invites", data={"role": "player", "days": "7"})
    assert_csrf_refused(response)
    assert db_session.exec(select(Invite)).all() == []


def test_invite_acceptance_needs_the_token(client, auth, db_session):
    referee = auth.create_user()
    campaign = make_campaign(db_session, referee=referee)
    issued = accounts.create_invite(
        session=db_session, campaign=campaign, created_by=referee, secret_key=SECRET,
        base_url="http://pbp.test", now=datetime.now(UTC),
    )  # fmt: skip
    db_session.commit()
    form = {
        "display_name": "N",
        "email": "n@example.test",
        "password": "p" * 12,
        "confirm": "p" * 12,
    }
    assert_csrf_refused(client.post(f"/invite/{issued.token}", data=form))
    db_session.refresh(issued.invite)
    assert issued.invite.used_at is None


def test_logout_needs_the_token(client, auth):
    auth.login(auth.create_user(display_name="Still Here"))
    assert_csrf_refused(client.post("/logout"))
    assert "Still Here" in client.get("/login").get_data(as_text=True)


def test_reset_forms_need_the_token(client, auth, sent_mail):
    user = auth.create_user()
    assert_csrf_refused(client.post("/reset", data={"email": user.email}))
    assert sent_mail == []
    link = accounts.issue_reset_link(
        user=user, secret_key=SECRET, base_url="", now=datetime.now(UTC)
    ).url
    assert_csrf_refused(client.post(link, data={"password": "x" * 12, "confirm": "x" * 12}))
    assert auth.login(user).status_code == 302  # the old password still works
