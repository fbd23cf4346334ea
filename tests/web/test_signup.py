"""PBP_SIGNUP: `invite` (accounts come with an invitation) or `open` (anyone signs up and
the account works once the address is confirmed through the mailed link)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.config import ConfigError, load_config
from pbp.models import OutboxMessage, User
from tests.helpers import PASSWORD

LINK = re.compile(r"http://pbp\.test(/signup/confirm/\S+)")


@pytest.fixture
def open_signup(app, clock):
    app.config["PBP_SIGNUP"] = "open"
    return clock


def sign_up(auth, email="newcomer@example.test", **kw):
    return auth.post("/signup", {"display_name": "Newcomer", "email": email, **kw})


def choose_password(auth, link, password=PASSWORD):
    """The confirmation page: the password is chosen there (issue #28 item 7)."""
    return auth.post(link, {"password": password, "confirm": password}, token_url=link)


def mails(db_session, to):
    return list(
        db_session.exec(
            select(OutboxMessage)
            .where(OutboxMessage.recipient == to, OutboxMessage.kind == "signup_confirmation")
            .order_by(OutboxMessage.id)
        )
    )


def test_the_mode_defaults_to_invite_and_refuses_anything_else(tmp_path):
    assert load_config(tmp_path, {"SECRET_KEY": "k" * 40})["PBP_SIGNUP"] == "invite"
    assert (
        load_config(tmp_path, {"SECRET_KEY": "k" * 40, "PBP_SIGNUP": "Open"})["PBP_SIGNUP"]
        == "open"
    )
    with pytest.raises(ConfigError, match="PBP_SIGNUP"):
        load_config(tmp_path, {"SECRET_KEY": "k" * 40, "PBP_SIGNUP": "everyone"})


def test_invite_mode_has_no_signup_and_the_login_page_says_how_to_get_in(client, auth, db_session):
    page = client.get("/signup")
    assert page.status_code == 404
    assert "Accounts come with an invitation" in page.get_data(as_text=True)
    before = db_session.exec(select(User)).all()
    assert sign_up(auth).status_code == 404
    assert db_session.exec(select(User)).all() == before
    login = client.get("/login").get_data(as_text=True)
    assert "ask the referee of a campaign to invite you" in login
    assert 'href="/signup"' not in login
    assert client.get("/signup/resend").status_code == 404


def test_open_signup_mails_a_link_that_makes_the_account_work(
    client, auth, db_session, open_signup
):
    login = client.get("/login").get_data(as_text=True)
    assert 'href="/signup"' in login and "Sign up" in login
    page = sign_up(auth, email="Newcomer@Example.test")
    assert page.status_code == 200
    assert "We sent a mail to <strong>newcomer@example.test</strong>" in page.get_data(as_text=True)
    user = db_session.exec(select(User).where(User.email == "newcomer@example.test")).one()
    assert user.awaiting_confirmation and user.password_hash is None

    # No password yet: nothing logs in until the link's page has set one.
    refused = auth.login("newcomer@example.test")
    assert refused.status_code == 400
    assert "Wrong email or password" in refused.get_data(as_text=True)

    (mail,) = mails(db_session, "newcomer@example.test")
    assert mail.subject == "pbp: confirm your address"
    link = LINK.search(mail.body_text).group(1)
    assert link in mail.body_html
    opened = client.get(link)  # opening it changes nothing (a mail scanner may)
    assert opened.status_code == 200
    assert "Choose a password" in opened.get_data(as_text=True)
    assert opened.headers["Referrer-Policy"] == "no-referrer"
    db_session.refresh(user)
    assert user.awaiting_confirmation

    mismatched = auth.post(link, {"password": PASSWORD, "confirm": "something else entirely"},
                           token_url=link)  # fmt: skip
    assert mismatched.status_code == 422
    confirmed = choose_password(auth, link)
    assert confirmed.status_code == 302
    db_session.refresh(user)
    assert not user.awaiting_confirmation
    assert "You are logged in as <strong>Newcomer</strong>" in client.get("/login").get_data(
        as_text=True
    )
    # The link has done its work: a second click says so, and logs nobody in.
    again = client.get(link)
    assert again.status_code == 410
    assert "newcomer@example.test is already confirmed: log in" in again.get_data(as_text=True)

    auth.logout()
    assert auth.login("newcomer@example.test").status_code == 302
    # Anyone may start a campaign once confirmed.
    made = auth.post("/campaigns/new", {"name": "First Game", "ruleset": "noteworthy"})
    assert made.status_code == 302


def test_resending_puts_a_second_mail_with_a_fresh_link_in_the_outbox(
    client, auth, db_session, open_signup
):
    sign_up(auth)
    open_signup.now += timedelta(minutes=5)
    page = auth.post("/signup/resend", {"email": "newcomer@example.test"})
    assert page.status_code == 200
    first, second = mails(db_session, "newcomer@example.test")
    assert LINK.search(first.body_text).group(1) != LINK.search(second.body_text).group(1)
    # An address without a waiting account gets the same page and no mail.
    page = auth.post("/signup/resend", {"email": "nobody@example.test"})
    assert page.status_code == 200
    assert mails(db_session, "nobody@example.test") == []
    assert client.get(LINK.search(second.body_text).group(1)).status_code == 200


def test_an_expired_or_forged_link_is_refused_and_the_account_keeps_waiting(
    client, auth, db_session, open_signup
):
    sign_up(auth)
    (mail,) = mails(db_session, "newcomer@example.test")
    link = LINK.search(mail.body_text).group(1)
    open_signup.now += timedelta(days=3)
    gone = client.get(link)
    assert gone.status_code == 410
    assert "expired" in gone.get_data(as_text=True)
    assert client.get(link[:-3] + "abc").status_code == 404
    user = db_session.exec(select(User).where(User.email == "newcomer@example.test")).one()
    assert user.awaiting_confirmation


def test_a_refused_signup_comes_back_with_what_was_typed(client, auth, db_session, open_signup):
    page = sign_up(auth, email="blank@example.test", display_name="   ")
    html = page.get_data(as_text=True)
    assert page.status_code == 422
    assert "Give the name the other players will see" in html
    assert 'value="blank@example.test"' in html
    bad = sign_up(auth, email="not an address", display_name="Bo")
    assert bad.status_code == 422
    assert 'value="Bo"' in bad.get_data(as_text=True)
    for email in ("blank@example.test", "not an address"):
        assert db_session.exec(select(User).where(User.email == email)).first() is None


def test_signup_and_resend_posts_are_rate_limited(client, auth, db_session, open_signup):
    """Each POST can send a mail: the sixth within a minute from one address is refused."""
    statuses = [
        auth.post("/signup/resend", {"email": "nobody@example.test"}).status_code for _ in range(6)
    ]
    assert statuses == [200] * 5 + [429]
    refused = [sign_up(auth, email="not an address").status_code for _ in range(6)]
    assert refused == [422] * 5 + [429]  # the sign-up form has the same limit


def test_a_password_reset_confirms_a_waiting_address(client, auth, db_session, open_signup):
    """The reset link reaches the same mailbox: it proves the address as well."""
    from pbp.services.accounts import logins as accounts

    sign_up(auth)
    user = db_session.exec(select(User).where(User.email == "newcomer@example.test")).one()
    issued = accounts.issue_reset_link(
        user=user, secret_key=client.application.secret_key, base_url="http://pbp.test",
        now=datetime.now(UTC),
    )  # fmt: skip
    path = issued.url.removeprefix("http://pbp.test")
    done = auth.post(path, {"password": "another long phrase", "confirm": "another long phrase"},
                     token_url=path)  # fmt: skip
    assert done.status_code == 302
    db_session.refresh(user)
    assert not user.awaiting_confirmation
    auth.logout()
    assert auth.login("newcomer@example.test", password="another long phrase").status_code == 302
