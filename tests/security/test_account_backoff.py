"""Issue #28, item 8: a limit per account over every client address.

Before, 50 wrong passwords for one account from 5 addresses in 5.5 s were all checked,
and the right password worked right after: each address stayed under its own limit. Now
the failures for one address (email) count wherever they come from; past a few, each makes
the next attempt wait, doubling; a browser that logged in to the account before does not
wait; the owner is mailed once per window. The count lives in the database, so two web
processes (two apps here, each with its own in-memory rate limiter) share it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.config import load_config
from pbp.models import OutboxMessage, utcnow
from tests.helpers import Clock, auth_for

WRONG = "wrong password!"


@pytest.fixture
def clock():
    return Clock(utcnow().replace(microsecond=0))


@pytest.fixture
def make_site(app_with, clock):
    def make(**settings):
        return app_with(PBP_CLOCK=clock, **settings)

    return make


def _from(site, db_session, address):
    client = site.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client, auth_for(client, db_session)


def _attack(site, db_session, email, addresses=5, each=10) -> list[int]:
    """`each` wrong passwords from each of `addresses` client addresses, at one moment."""
    statuses = []
    for n in range(addresses):
        _client, auth = _from(site, db_session, f"198.51.100.{n + 1}")
        statuses += [auth.login(email, password=WRONG).status_code for _ in range(each)]
    return statuses


def _failure_mails(db_session, email):
    query = select(OutboxMessage).where(
        OutboxMessage.recipient == email, OutboxMessage.kind == "login_failures"
    )
    return list(db_session.exec(query))


def test_guesses_from_many_addresses_slow_down_but_not_the_owners_browser(
    make_site, db_session, clock
):
    site = make_site()
    owner_client, owner = _from(site, db_session, "203.0.113.9")
    user = owner.create_user()
    assert owner.login(user).status_code == 302  # this browser is now known to the account
    owner.logout()

    statuses = _attack(site, db_session, user.email)
    # Five failures are free, the sixth makes the next attempt wait: the other 44 are
    # refused without their password being looked at.
    assert statuses == [400] * 6 + [429] * 44
    _client, newcomer = _from(site, db_session, "192.0.2.77")
    early = newcomer.login(user)  # the right password, from a browser never used
    assert early.status_code == 429
    assert "wait 1 second" in early.get_data(as_text=True)

    # The owner's own browser is not made to wait.
    assert owner.login(user).status_code == 302

    # A wait, not a lock: once it is over, the right password works from anywhere.
    clock.now += timedelta(seconds=1)
    assert newcomer.login(user).status_code == 302


def test_the_waits_double_up_to_the_longest(make_site, db_session, clock):
    site = make_site(
        PBP_LOGIN_ACCOUNT_FREE=2,
        PBP_LOGIN_ACCOUNT_MAX_WAIT_SECONDS=5,
        PBP_LOGIN_LIMIT="1000 per minute",  # the per-address limit is not what is measured
    )
    _client, auth = _from(site, db_session, "198.51.100.1")
    user = auth.create_user()
    waits = []  # seconds each failure had to wait for before its password was checked
    for _ in range(8):
        waited = 0
        while (status := auth.login(user, password=WRONG).status_code) == 429:
            clock.now += timedelta(seconds=1)
            waited += 1
        assert status == 400
        waits.append(waited)
    assert waits == [0, 0, 0, 1, 2, 4, 5, 5]


def test_an_address_without_an_account_is_answered_the_same(make_site, db_session):
    """Otherwise the first 429 would tell who has an account."""
    site = make_site()
    user = auth_for(site.test_client(), db_session).create_user()
    known = _attack(site, db_session, user.email, addresses=2, each=5)
    unknown = _attack(site, db_session, "nobody-here@example.test", addresses=2, each=5)
    assert known == unknown == [400] * 6 + [429] * 4


def test_the_owner_is_mailed_once_per_window(make_site, db_session, clock):
    site = make_site(PBP_LOGIN_ACCOUNT_MAIL_AFTER=3)
    user = auth_for(site.test_client(), db_session).create_user()
    for _ in range(3):  # 30 failures, a minute apart from each other address
        _attack(site, db_session, user.email, addresses=5, each=2)
        clock.now += timedelta(minutes=15)
    (mail,) = _failure_mails(db_session, user.email)  # one mail, not one per attempt
    assert mail.subject == "pbp: wrong passwords for your account"
    assert "3 times" in mail.body_text and "http://pbp.test/reset" in mail.body_text

    clock.now += timedelta(hours=24)  # a day without failures: they are forgotten
    _attack(site, db_session, user.email, addresses=3, each=1)
    assert len(_failure_mails(db_session, user.email)) == 2


def test_two_web_processes_count_the_same_failures(make_site, db_session):
    """Two apps, each with its own in-memory rate limiter, stand for two web workers."""
    first, second = make_site(), make_site()
    user = auth_for(first.test_client(), db_session).create_user()
    assert _attack(first, db_session, user.email, addresses=3, each=2) == [400] * 6
    assert _attack(second, db_session, user.email, addresses=1, each=1) == [429]


def test_the_numbers_come_from_the_environment(tmp_path):
    env = {
        "SECRET_KEY": "k" * 40,
        "PBP_LOGIN_ACCOUNT_FREE": "8",
        "PBP_LOGIN_ACCOUNT_WAIT_SECONDS": "2",
        "PBP_LOGIN_ACCOUNT_MAX_WAIT_SECONDS": "600",
        "PBP_LOGIN_ACCOUNT_WINDOW_HOURS": "12",
        "PBP_LOGIN_ACCOUNT_MAIL_AFTER": "20",
    }
    config = load_config(tmp_path, env)
    assert [config[name] for name in env if name != "SECRET_KEY"] == [8, 2, 600, 12, 20]
    defaults = load_config(tmp_path, {"SECRET_KEY": "k" * 40})
    assert defaults["PBP_LOGIN_ACCOUNT_FREE"] == 5
    assert defaults["PBP_LOGIN_ACCOUNT_MAIL_AFTER"] == 10
