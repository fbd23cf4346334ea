"""Issue #28, items 1, 6 and 7: open sign-up (PBP_SIGNUP=open) through the real pages.

1. A confirmation link works once, within its lifetime, and never outlives a password
   change; after use it says "already confirmed: log in" and logs nobody in.
6. Sign-up answers an address that has an account as it answers a new one ("check your
   mail", one mail queued), and mails the owner instead.
7. Whoever types an address at sign-up cannot choose the password that opens its
   account (the confirmation page asks for it), and a waiting sign-up never blocks an
   invitation to that address.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.models import OutboxMessage, User, utcnow
from pbp.services.accounts import logins as accounts
from tests.factories import make_campaign
from tests.helpers import Clock, auth_for

LINK = re.compile(r"http://pbp\.test(/signup/confirm/\S+)")
ATTACKER_PASSWORD = "the attacker's own passphrase"
VICTIM_PASSWORD = "the victim's chosen passphrase"
PRIVATE_PAGE = "/account/tokens/"  # any page that needs a login


@pytest.fixture
def clock():
    return Clock(utcnow().replace(microsecond=0))  # the pages' clock, moved by the tests


@pytest.fixture
def site(app_with, clock):
    return app_with(PBP_SIGNUP="open", PBP_CLOCK=clock)


def _client(site, db_session, address="192.0.2.10"):
    client = site.test_client()
    client.environ_base["REMOTE_ADDR"] = address  # each person their own sign-up limit
    return client, auth_for(client, db_session)


def _sign_up(auth, email, name="Newcomer", password=ATTACKER_PASSWORD):
    # The password fields are what a form before item 7 asked for: sent, and ignored.
    fields = {"display_name": name, "email": email, "password": password, "confirm": password}
    return auth.post("/signup", fields)


def _mails(db_session, to, kind=None):
    query = select(OutboxMessage).where(OutboxMessage.recipient == to)
    if kind:
        query = query.where(OutboxMessage.kind == kind)
    return list(db_session.exec(query.order_by(OutboxMessage.id)))


def _link(db_session, to) -> str:
    *_, mail = _mails(db_session, to, "signup_confirmation")
    return LINK.search(mail.body_text).group(1)


def _choose_password(auth, link, password=VICTIM_PASSWORD):
    # The form's token from /login: a used link's page has no form to take it from.
    return auth.post(link, {"password": password, "confirm": password})


def _logged_in(client) -> bool:
    return client.get(PRIVATE_PAGE).status_code == 200


# --- item 1: a link works once, within its lifetime -------------------------------------


@pytest.mark.parametrize("after", ["logout", "30 days", "password reset"])
def test_a_used_confirmation_link_never_logs_in_again(site, db_session, clock, after):
    client, auth = _client(site, db_session)
    _sign_up(auth, "once@example.test")
    link = _link(db_session, "once@example.test")
    # Used once, by its owner (before item 7 the link logged in on GET; either way counts).
    client.get(link)
    _choose_password(auth, link)
    assert _logged_in(client)
    auth.logout()
    if after == "30 days":
        clock.now += timedelta(days=30)
    elif after == "password reset":
        user = db_session.exec(select(User).where(User.email == "once@example.test")).one()
        reset = accounts.issue_reset_link(
            user=user, secret_key=site.secret_key, base_url="http://pbp.test", now=clock.now
        )
        path = reset.url.removeprefix("http://pbp.test")
        new = {"password": "a brand new passphrase", "confirm": "a brand new passphrase"}
        changed = auth.post(path, new, token_url=path)
        assert changed.status_code == 302
        auth.logout()

    stranger = site.test_client()  # whoever finds the old mail
    again = stranger.get(link)
    assert again.status_code == 410
    assert "once@example.test is already confirmed: log in" in again.get_data(as_text=True)
    assert not _logged_in(stranger)
    # Nor can the used link set a password.
    retry = _choose_password(auth_for(stranger, db_session), link, "a takeover passphrase")
    assert retry.status_code == 410
    assert not _logged_in(stranger)
    assert auth.login("once@example.test", password="a takeover passphrase").status_code == 400


def test_a_link_past_its_two_days_is_refused(site, db_session, clock):
    client, auth = _client(site, db_session)
    _sign_up(auth, "late@example.test")
    link = _link(db_session, "late@example.test")
    clock.now += timedelta(days=2, seconds=1)
    late = _choose_password(auth, link)
    assert late.status_code == 410
    assert "expired" in late.get_data(as_text=True)
    assert not _logged_in(client)


# --- item 6: the same answer for every address -----------------------------------------


def test_signup_answers_the_same_whether_or_not_the_address_has_an_account(site, db_session, clock):
    client, auth = _client(site, db_session)
    owner = auth.create_user(email="taken@example.test", display_name="Owner")
    taken = _sign_up(auth, "taken@example.test", name="Someone Else")
    fresh = _sign_up(auth, "fresh@example.test", name="Someone Else")

    assert taken.status_code == fresh.status_code == 200
    body = taken.get_data(as_text=True).replace("taken@example.test", "ADDRESS")
    assert body == fresh.get_data(as_text=True).replace("fresh@example.test", "ADDRESS")
    assert "There is already an account" not in body

    # One mail each way, with different texts: the owner hears that someone tried.
    (told,) = _mails(db_session, "taken@example.test")
    (link,) = _mails(db_session, "fresh@example.test")
    assert told.kind == "signup_existing" and link.kind == "signup_confirmation"
    assert "already has an account" in told.body_text and "/reset" in told.body_text
    assert told.body_text != link.body_text and not LINK.search(told.body_text)
    # The account is as it was.
    db_session.refresh(owner)
    assert owner.display_name == "Owner" and not owner.awaiting_confirmation
    assert auth.login(owner).status_code == 302


# --- item 7: no pre-registration -----------------------------------------------------------


def test_the_password_typed_at_signup_never_opens_the_account(site, db_session):
    attacker_client, attacker = _client(site, db_session, "198.51.100.66")
    assert 'name="password"' not in attacker_client.get("/signup").get_data(as_text=True)
    _sign_up(attacker, "victim@example.test", name="Victim")

    victim_client, victim = _client(site, db_session, "203.0.113.5")
    link = _link(db_session, "victim@example.test")  # in the victim's mailbox
    assert _choose_password(victim, link).status_code == 302
    assert _logged_in(victim_client)

    assert attacker.login("victim@example.test", password=ATTACKER_PASSWORD).status_code == 400
    assert not _logged_in(attacker_client)
    victim.logout()
    assert victim.login("victim@example.test", password=VICTIM_PASSWORD).status_code == 302


def test_a_waiting_signup_never_blocks_an_invitation(site, db_session, clock):
    attacker_client, attacker = _client(site, db_session, "198.51.100.66")
    _sign_up(attacker, "invited@example.test", name="Squatter")
    stale_link = _link(db_session, "invited@example.test")

    rita = attacker.create_user(display_name="Rita")
    campaign = make_campaign(db_session, referee=rita)
    issued = accounts.create_invite(
        session=db_session, campaign=campaign, created_by=rita, secret_key=site.secret_key,
        base_url="http://pbp.test", now=clock.now, email="invited@example.test",
    )  # fmt: skip
    db_session.commit()
    path = issued.url.removeprefix("http://pbp.test")

    invitee_client, invitee = _client(site, db_session, "203.0.113.5")
    fields = {"display_name": "Ines", "email": "invited@example.test"}
    fields |= {"password": VICTIM_PASSWORD, "confirm": VICTIM_PASSWORD}
    joined = invitee.post(path, fields, token_url=path)
    assert joined.status_code == 302, joined.get_data(as_text=True)
    assert _logged_in(invitee_client)

    user = db_session.exec(select(User).where(User.email == "invited@example.test")).one()
    db_session.refresh(user)
    assert user.display_name == "Ines" and not user.awaiting_confirmation
    # The squatter's password and the sign-up's link are dead.
    assert attacker.login("invited@example.test", password=ATTACKER_PASSWORD).status_code == 400
    assert attacker_client.get(stale_link).status_code == 410
    assert not _logged_in(attacker_client)
