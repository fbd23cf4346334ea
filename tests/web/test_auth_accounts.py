"""pbp.services.accounts.logins on its own: invites, passwords, logins, resets (fixed `now`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import select

from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.models import AuditLog, Character, Invite, Membership, OutboxMessage, User
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from tests.factories import make_campaign, make_user

NOW = datetime(2030, 5, 1, 12, 0, tzinfo=UTC)
KEY = "service-test-secret-" + "k" * 32
BASE = "https://pbp.example"
PASSWORD = "a long enough passphrase"


def invite(session, campaign, **kw):
    referee = kw.pop("referee", None) or referee_of(session, campaign)
    return accounts.create_invite(
        session=session,
        campaign=campaign,
        created_by=referee,
        secret_key=KEY,
        base_url=BASE,
        now=kw.pop("now", NOW),
        **kw,
    )


def referee_of(session, campaign):
    member = session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.role == "referee"
        )
    ).first()
    return session.get(User, member.user_id)


def accept(session, token, now=NOW, **kw):
    kw.setdefault("user", None)
    if kw["user"] is None:
        kw.setdefault("email", "newcomer@example.test")
        kw.setdefault("display_name", "Newcomer")
        kw.setdefault("password", PASSWORD)
    return accounts.accept_invite(session=session, token=token, secret_key=KEY, now=now, **kw)


def actions(session, user=None):
    query = select(AuditLog.action).order_by(AuditLog.id)
    if user is not None:
        query = query.where(AuditLog.actor_id == user.id)
    return list(session.exec(query))


def role_in(session, campaign, user):
    member = campaigns.membership(session=session, campaign=campaign, user=user)
    return member.role if member else None


# --- invites -------------------------------------------------------------------------


def test_invite_link_is_signed_under_the_base_url(db_session):
    campaign = make_campaign(db_session)
    issued = invite(db_session, campaign)
    assert issued.url == f"{BASE}/invite/{issued.token}"
    assert issued.invite.expires_at == NOW + accounts.INVITE_TTL
    assert issued.invite.used_at is None
    assert actions(db_session)[-1] == "invite.created"
    details = accounts.check_invite(session=db_session, token=issued.token, secret_key=KEY, now=NOW)
    assert details.invite.id == issued.invite.id and details.campaign.id == campaign.id


def test_only_the_referee_can_invite(db_session):
    campaign = make_campaign(db_session)
    stranger = make_user(db_session)
    with pytest.raises(Forbidden, match="only the referee"):
        invite(db_session, campaign, referee=stranger)
    assert db_session.exec(select(Invite)).all() == []


def test_invite_character_must_be_free_and_in_the_campaign(db_session):
    campaign, other = make_campaign(db_session), make_campaign(db_session)
    free = campaigns.add_character(session=db_session, campaign=campaign, name="Free")
    taken = campaigns.add_character(
        session=db_session, campaign=campaign, name="Taken", user=make_user(db_session)
    )
    elsewhere = campaigns.add_character(session=db_session, campaign=other, name="Far")
    with pytest.raises(Conflict, match="Taken already has a player"):
        invite(db_session, campaign, character=taken)
    with pytest.raises(UserError, match="not a character in"):
        invite(db_session, campaign, character=elsewhere)
    with pytest.raises(UserError, match="only a player invite"):
        invite(db_session, campaign, character=free, role="referee")
    assert invite(db_session, campaign, character=free).invite.character_id == free.id
    assert accounts.unclaimed_characters(session=db_session, campaign=campaign) == [free]


@pytest.mark.parametrize("ttl", [timedelta(minutes=5), timedelta(days=91)])
def test_invite_lifetime_is_bounded(db_session, ttl):
    with pytest.raises(UserError, match="an invite can last"):
        invite(db_session, make_campaign(db_session), ttl=ttl)


def test_tampered_or_foreign_invite_link_is_not_found(db_session):
    issued = invite(db_session, make_campaign(db_session))
    for token in (issued.token[:-2] + "xx", "garbage", issued.token.replace(".", "", 1)):
        with pytest.raises(NotFound, match="not valid"):
            accounts.check_invite(session=db_session, token=token, secret_key=KEY, now=NOW)
    with pytest.raises(NotFound):
        accounts.check_invite(
            session=db_session, token=issued.token, secret_key="another-key" * 4, now=NOW
        )


def test_invite_link_expires_at_its_time(db_session):
    issued = invite(db_session, make_campaign(db_session), ttl=timedelta(days=2))
    end = NOW + timedelta(days=2)
    check = accounts.check_invite
    assert check(session=db_session, token=issued.token, secret_key=KEY, now=end - timedelta(1e-6))
    with pytest.raises(accounts.LinkGone, match="expired on") as refused:
        check(session=db_session, token=issued.token, secret_key=KEY, now=end)
    assert refused.value.status == 410


def test_accept_creates_the_player_with_membership_and_character(db_session):
    campaign = make_campaign(db_session)
    vance = campaigns.add_character(session=db_session, campaign=campaign, name="Lady Vance")
    issued = invite(db_session, campaign, character=vance)
    user = accept(db_session, issued.token, email=" Newcomer@Example.TEST ")
    assert user.email == "newcomer@example.test"
    assert user.password_hash.startswith("scrypt:") and PASSWORD not in user.password_hash
    assert role_in(db_session, campaign, user) == "player"
    assert vance.user_id == user.id
    db_session.refresh(issued.invite)
    assert (issued.invite.used_at, issued.invite.used_by) == (NOW, user.id)
    assert actions(db_session, user) == ["account.created", "invite.accepted"]


def test_an_invite_works_once(db_session):
    issued = invite(db_session, make_campaign(db_session))
    accept(db_session, issued.token)
    with pytest.raises(accounts.LinkGone, match="already used"):
        accept(db_session, issued.token, email="second@example.test")
    assert db_session.exec(select(User).where(User.email == "second@example.test")).first() is None


def test_a_concurrent_claim_is_refused(db_session):
    """Someone else used the link between our check and our claim."""
    campaign = make_campaign(db_session)
    issued = invite(db_session, campaign)
    db_session.execute(
        sa.update(Invite)
        .where(Invite.id == issued.invite.id)
        .values(used_at=NOW)
        .execution_options(synchronize_session=False)
    )
    assert issued.invite.used_at is None  # our copy is stale, as in a race
    with pytest.raises(accounts.LinkGone, match="a moment ago"):
        accept(db_session, issued.token)


def test_one_person_referees_one_game_and_plays_in_another(db_session):
    mine = make_campaign(db_session, name="Mine")
    referee = referee_of(db_session, mine)
    theirs = make_campaign(db_session, name="Theirs")
    accept(db_session, invite(db_session, theirs).token, user=referee)
    assert role_in(db_session, mine, referee) == "referee"
    assert role_in(db_session, theirs, referee) == "player"
    assert "account.created" not in actions(db_session, referee)


def test_a_member_cannot_join_again_and_the_invite_stays_usable(db_session):
    campaign = make_campaign(db_session)
    referee = referee_of(db_session, campaign)
    issued = invite(db_session, campaign)
    with pytest.raises(Conflict, match=r"already in .* \(as referee\)"):
        accept(db_session, issued.token, user=referee)
    assert issued.invite.used_at is None


def test_existing_address_must_log_in_first(db_session):
    existing = make_user(db_session)
    issued = invite(db_session, make_campaign(db_session))
    with pytest.raises(Conflict, match="log in, then open"):
        accept(db_session, issued.token, email=existing.email.upper())
    assert existing.password_hash is None
    assert issued.invite.used_at is None


def test_a_character_claimed_meanwhile_is_refused(db_session):
    campaign = make_campaign(db_session)
    pip = campaigns.add_character(session=db_session, campaign=campaign, name="Pip")
    first, second = (
        invite(db_session, campaign, character=pip),
        invite(db_session, campaign, character=pip),
    )
    accept(db_session, first.token)
    with pytest.raises(Conflict, match="Pip already has a player"):
        accept(db_session, second.token, email="late@example.test")


def test_a_character_claimed_concurrently_is_refused(db_session):
    campaign = make_campaign(db_session)
    pip = campaigns.add_character(session=db_session, campaign=campaign, name="Pip")
    issued = invite(db_session, campaign, character=pip)
    rival = make_user(db_session)
    db_session.execute(
        sa.update(Character)
        .where(Character.id == pip.id)
        .values(user_id=rival.id)
        .execution_options(synchronize_session=False)
    )
    with pytest.raises(Conflict, match="Pip got a player a moment ago"):
        accept(db_session, issued.token)


def test_new_account_needs_a_decent_password(db_session):
    issued = invite(db_session, make_campaign(db_session))
    with pytest.raises(UserError, match="at least 10 characters"):
        accept(db_session, issued.token, password="short")
    with pytest.raises(UserError, match="cannot be your email"):
        accept(db_session, issued.token, email="longenough@example.test",
               password="LongEnough@example.test")  # fmt: skip
    assert issued.invite.used_at is None


def test_invite_with_address_is_queued_by_mail_when_configured(db_session, sent_mail):
    campaign = make_campaign(db_session)
    invite(db_session, campaign)  # no address: nothing to send
    issued = invite(db_session, campaign, email="Ada@Example.test", mail_from="pbp <p@x.test>")
    invite(db_session, campaign, email="bo@example.test")  # no mail_from: mail is off
    assert len(sent_mail) == 1
    sent = sent_mail[0]
    assert sent["kind"] == "invite" and sent["invite"] is issued.invite
    assert sent["url"] == issued.url and sent["now"] == NOW
    assert sent["settings"].mail_from == "pbp <p@x.test>"
    assert issued.invite.email == "ada@example.test"


def test_invite_mail_lands_in_the_real_outbox(db_session):
    issued = invite(db_session, make_campaign(db_session), email="ada@example.test",
                    mail_from="pbp <pbp@example.test>")  # fmt: skip
    rows = db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "invite")).all()
    assert [(row.recipient, issued.url in row.body_text) for row in rows] == [
        ("ada@example.test", True)
    ]


# --- passwords and logins ------------------------------------------------------------


def with_password(session, password=PASSWORD):
    user = make_user(session)
    accounts.set_password(session=session, user=user, password=password, now=NOW)
    return user


def test_authenticate_checks_the_hash_and_audits(db_session):
    user = with_password(db_session)
    found = accounts.authenticate(
        session=db_session, email=user.email.upper(), password=PASSWORD, now=NOW
    )
    assert found.id == user.id
    with pytest.raises(accounts.LoginFailed, match="wrong email or password"):
        accounts.authenticate(session=db_session, email=user.email, password="nope", now=NOW)
    for email in ("nobody@example.test", "not-an-address"):
        with pytest.raises(accounts.LoginFailed, match="wrong email or password"):
            accounts.authenticate(session=db_session, email=email, password=PASSWORD, now=NOW)
    assert actions(db_session, user) == ["password.set", "login", "login.failed"]


def test_account_without_password_cannot_log_in(db_session):
    user = make_user(db_session)
    with pytest.raises(accounts.LoginFailed):
        accounts.authenticate(session=db_session, email=user.email, password="", now=NOW)


def test_session_id_dies_with_the_password(db_session):
    user = with_password(db_session)
    old = accounts.session_id(user)
    assert accounts.user_for_session_id(session=db_session, value=old) is user
    accounts.set_password(session=db_session, user=user, password="another passphrase", now=NOW)
    assert accounts.user_for_session_id(session=db_session, value=old) is None
    for junk in ("", "x.y", f"{user.id}", "999999.abc"):
        assert accounts.user_for_session_id(session=db_session, value=junk) is None


# --- password reset ------------------------------------------------------------------


def reset_link(session, user, now=NOW, **kw):
    return accounts.request_password_reset(
        session=session, email=user.email, secret_key=KEY, base_url=BASE, now=now, **kw
    )


def test_reset_for_unknown_address_sends_nothing(db_session, sent_mail):
    assert (
        accounts.request_password_reset(
            session=db_session,
            email="ghost@example.test",
            secret_key=KEY,
            base_url=BASE,
            now=NOW,
            mail_from="pbp <p@x.test>",
        )  # fmt: skip
        is None
    )
    assert sent_mail == []


def test_reset_link_is_mailed_and_works_once(db_session, sent_mail):
    user = with_password(db_session)
    issued = reset_link(db_session, user, mail_from="pbp <p@x.test>")
    assert issued.url == f"{BASE}/reset/{issued.token}"
    assert [(m["kind"], m["user"], m["url"]) for m in sent_mail] == [
        ("password_reset", user, issued.url)
    ]
    assert (
        accounts.check_reset_token(session=db_session, token=issued.token, secret_key=KEY, now=NOW)
        is user
    )
    accounts.reset_password(
        session=db_session, token=issued.token, secret_key=KEY, password="brand new phrase",
        now=NOW + timedelta(minutes=5),
    )  # fmt: skip
    assert accounts.authenticate(
        session=db_session, email=user.email, password="brand new phrase", now=NOW
    )
    with pytest.raises(accounts.LinkGone, match="already used"):
        accounts.reset_password(
            session=db_session, token=issued.token, secret_key=KEY, password="third phrase!",
            now=NOW + timedelta(minutes=6),
        )  # fmt: skip
    assert actions(db_session, user) == [
        "password.set",
        "password.reset_requested",
        "password.reset",
        "login",
    ]


def test_reset_link_expires(db_session):
    user = with_password(db_session)
    issued = reset_link(db_session, user)
    assert issued.expires_at == NOW + accounts.RESET_TTL
    with pytest.raises(accounts.LinkGone, match="expired"):
        accounts.check_reset_token(
            session=db_session, token=issued.token, secret_key=KEY, now=issued.expires_at
        )


def test_reset_link_is_refused_when_tampered(db_session):
    user = with_password(db_session)
    issued = reset_link(db_session, user)
    with pytest.raises(NotFound, match="not valid"):
        accounts.check_reset_token(
            session=db_session, token=issued.token + "x", secret_key=KEY, now=NOW
        )
    # An invite token is not a reset token, though both are signed with the same key.
    other = invite(db_session, make_campaign(db_session))
    with pytest.raises(NotFound):
        accounts.check_reset_token(session=db_session, token=other.token, secret_key=KEY, now=NOW)


def test_reset_keeps_the_password_rules(db_session):
    user = with_password(db_session)
    issued = reset_link(db_session, user)
    with pytest.raises(UserError, match="at least"):
        accounts.reset_password(
            session=db_session, token=issued.token, secret_key=KEY, password="short", now=NOW
        )
