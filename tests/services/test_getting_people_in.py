"""Getting people in (issue 15, item 3): invitations under the invited address, re-sent
invitations, and the referee's changes to a character (pbp.services.invites / roster)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.models import Blog, Character, Invite, OutboxMessage, User
from pbp.services import audit_log, campaigns, invites, roster
from pbp.services.accounts import logins as accounts
from tests.factories import make_campaign, make_characters, make_user

NOW = datetime(2030, 5, 1, 12, 0, tzinfo=UTC)
KEY = "service-test-secret-" + "k" * 32
BASE = "https://pbp.example"
FROM = "pbp <pbp@example.test>"
PASSWORD = "a long enough passphrase"


@pytest.fixture
def game(db_session):
    referee = make_user(db_session, "Rhea")
    campaign = make_campaign(db_session, referee=referee, name="Salon")
    chars = {c.name: c for c in make_characters(db_session, campaign, names=("Ada", "Bram"))}
    vance = campaigns.add_character(session=db_session, campaign=campaign, name="Lady Vance")
    db_session.flush()
    return campaign, referee, chars | {"Lady Vance": vance}


def invite(session, campaign, referee, **kw):
    return accounts.create_invite(
        session=session,
        campaign=campaign,
        created_by=referee,
        secret_key=KEY,
        base_url=BASE,
        now=kw.pop("now", NOW),
        mail_from=FROM,
        **kw,
    )


def invite_mails(session, invite_row):
    return list(
        session.exec(
            select(OutboxMessage)
            .where(OutboxMessage.kind == "invite", OutboxMessage.dedupe_key.startswith(
                f"invite:{invite_row.id}"
            ))
            .order_by(OutboxMessage.id)
        )
    )  # fmt: skip


def sentences(session, campaign):
    return [line.sentence for line in audit_log.audit_lines(session=session, campaign=campaign)]


# -- the invited address -------------------------------------------------------------------


def test_an_invitation_naming_an_address_cannot_register_another(db_session, game):
    campaign, referee, _ = game
    issued = invite(db_session, campaign, referee, email="pip@example.test")
    with pytest.raises(UserError, match="this invitation is for pip@example.test"):
        accounts.accept_invite(
            session=db_session, token=issued.token, secret_key=KEY, now=NOW,
            email="thief@example.test", display_name="Thief", password=PASSWORD,
        )  # fmt: skip
    assert accounts.find_user(session=db_session, email="thief@example.test") is None
    assert db_session.get(Invite, issued.invite.id).used_at is None
    # Without an address, or the same one in other letters, the account is the invited one.
    user = accounts.accept_invite(
        session=db_session, token=issued.token, secret_key=KEY, now=NOW,
        email=" PIP@Example.test", display_name="Pip", password=PASSWORD,
    )  # fmt: skip
    assert user.email == "pip@example.test"
    second = invite(db_session, campaign, referee, email="quin@example.test")
    quin = accounts.accept_invite(
        session=db_session, token=second.token, secret_key=KEY, now=NOW,
        display_name="Quin", password=PASSWORD,
    )  # fmt: skip
    assert quin.email == "quin@example.test"


# -- re-sending ----------------------------------------------------------------------------


def resend(session, campaign, referee, invite_id, now=NOW):
    return invites.resend_invite(
        session=session, campaign=campaign, invite_id=invite_id, actor=referee,
        secret_key=KEY, base_url=BASE, mail_from=FROM, now=now,
    )  # fmt: skip


def test_a_resent_invitation_is_a_second_mail_with_the_same_link(db_session, game):
    campaign, referee, chars = game
    issued = invite(db_session, campaign, referee, email="pip@example.test",
                    character=chars["Lady Vance"])  # fmt: skip
    again = resend(db_session, campaign, referee, issued.invite.id, now=NOW + timedelta(hours=1))
    first, second = invite_mails(db_session, issued.invite)
    assert again.url == issued.url
    assert (first.recipient, second.recipient) == ("pip@example.test", "pip@example.test")
    assert issued.url in second.body_text and second.message_id != first.message_id
    assert again.invite.expires_at == issued.invite.expires_at  # far from expiry: unchanged
    assert "sent an invitation again" in sentences(db_session, campaign)
    listed = invites.open_invite_links(
        session=db_session, campaign=campaign, secret_key=KEY, base_url=BASE, now=NOW
    )
    assert [(r.url, r.character.name) for r in listed] == [(issued.url, "Lady Vance")]


def test_an_expired_invitation_resent_works_again(db_session, game):
    campaign, referee, _ = game
    issued = invite(db_session, campaign, referee, email="pip@example.test",
                    ttl=timedelta(days=1))  # fmt: skip
    later = NOW + timedelta(days=3)
    with pytest.raises(accounts.LinkGone):
        accounts.check_invite(session=db_session, token=issued.token, secret_key=KEY, now=later)
    resend(db_session, campaign, referee, issued.invite.id, now=later)
    assert issued.invite.expires_at == later + accounts.INVITE_TTL
    details = accounts.check_invite(
        session=db_session, token=issued.token, secret_key=KEY, now=later
    )
    assert details.invite.id == issued.invite.id


def test_resending_is_refused_in_words(db_session, game):
    campaign, referee, chars = game
    bare = invite(db_session, campaign, referee)
    with pytest.raises(UserError, match="names no email address"):
        resend(db_session, campaign, referee, bare.invite.id)
    used = invite(db_session, campaign, referee, email="pip@example.test")
    accounts.accept_invite(session=db_session, token=used.token, secret_key=KEY, now=NOW,
                           display_name="Pip", password=PASSWORD)  # fmt: skip
    with pytest.raises(Conflict, match="already used"):
        resend(db_session, campaign, referee, used.invite.id)
    other = make_campaign(db_session, referee=referee)
    with pytest.raises(NotFound):
        resend(db_session, other, referee, bare.invite.id)
    player = db_session.get(User, chars["Ada"].user_id)
    with pytest.raises(Forbidden):
        resend(db_session, campaign, player, bare.invite.id)


# -- the referee's changes to a character ------------------------------------------------


def change(fn, session, campaign, actor, character, **kw):
    return fn(session=session, campaign=campaign, character_id=character.id, actor=actor,
              now=NOW, **kw)  # fmt: skip


def test_rename_keeps_the_address_and_refuses_a_taken_name(db_session, game):
    campaign, referee, chars = game
    ada = chars["Ada"]
    change(roster.rename_character, db_session, campaign, referee, ada, name="  Ada   Lovelace ")
    assert (ada.name, ada.slug) == ("Ada Lovelace", "ada")
    assert "renamed Ada to Ada Lovelace" in sentences(db_session, campaign)
    with pytest.raises(Conflict, match="'bram' is already a character"):
        change(roster.rename_character, db_session, campaign, referee, ada, name="bram")
    with pytest.raises(UserError, match="needs a name"):
        change(roster.rename_character, db_session, campaign, referee, ada, name="   ")
    with pytest.raises(Forbidden):
        player = db_session.get(User, ada.user_id)
        change(roster.rename_character, db_session, campaign, player, ada, name="Queen Ada")
    other = make_campaign(db_session, referee=referee)
    with pytest.raises(NotFound):
        change(roster.rename_character, db_session, other, referee, ada, name="Queen Ada")


def test_aliases_are_trimmed_deduplicated_and_bounded(db_session, game):
    campaign, referee, chars = game
    vance = chars["Lady Vance"]
    change(roster.set_aliases, db_session, campaign, referee, vance,
           aliases=[" Vance ", "vance", "", "The Lady"])  # fmt: skip
    assert vance.aliases == ["Vance", "The Lady"]
    with pytest.raises(UserError, match="at most 20 aliases"):
        change(roster.set_aliases, db_session, campaign, referee, vance,
               aliases=[f"Name {i}" for i in range(21)])  # fmt: skip
    assert "changed the aliases of Lady Vance" in sentences(db_session, campaign)


def test_the_feed_is_checked_as_when_adding_a_character(db_session, game):
    campaign, referee, chars = game
    ada, bram = chars["Ada"], chars["Bram"]
    with pytest.raises(UserError, match="private|loopback|not allowed|blocked"):
        change(roster.set_feed_url, db_session, campaign, referee, ada,
               feed_url="http://127.0.0.1:9/feed", allow_private=False)  # fmt: skip
    with pytest.raises(UserError):
        change(roster.set_feed_url, db_session, campaign, referee, ada,
               feed_url="javascript:alert(1)", allow_private=True)  # fmt: skip
    blog = db_session.exec(select(Blog).where(Blog.character_id == ada.id)).one()
    assert blog.kind == "builtin"
    change(roster.set_feed_url, db_session, campaign, referee, ada,
           feed_url="http://127.0.0.1:9/feed", allow_private=True)  # fmt: skip
    assert (blog.kind, blog.feed_url, blog.next_poll_at) == (
        "external",
        "http://127.0.0.1:9/feed",
        None,
    )
    with pytest.raises(Conflict, match="already Ada's blog"):
        change(roster.set_feed_url, db_session, campaign, referee, bram,
               feed_url="http://127.0.0.1:9/feed", allow_private=True)  # fmt: skip
    change(roster.set_feed_url, db_session, campaign, referee, ada, feed_url="",
           allow_private=False)  # fmt: skip
    assert (blog.kind, blog.feed_url) == ("builtin", None)
    assert "changed the blog of Ada" in sentences(db_session, campaign)


def test_dropping_out_is_an_audited_ruling_that_makes_an_outsider(db_session, game):
    campaign, referee, chars = game
    bram = chars["Bram"]
    change(roster.drop_character, db_session, campaign, referee, bram, reason="left the group")
    assert db_session.get(Character, bram.id).status == "outsider"
    assert (
        "ruled that Bram dropped out of the game, an outsider from now on (left the group)"
        in sentences(db_session, campaign)
    )
    with pytest.raises(Conflict, match="Bram is already an outsider"):
        change(roster.drop_character, db_session, campaign, referee, bram, reason="")


def test_hand_over_to_a_member_or_through_a_new_invitation(db_session, game):
    campaign, referee, chars = game
    ada, bram, vance = chars["Ada"], chars["Bram"], chars["Lady Vance"]
    ada_player = db_session.get(User, ada.user_id)
    # Ada's player already plays an active character: refused.
    with pytest.raises(Conflict, match="already plays Ada"):
        change(roster.hand_over_character, db_session, campaign, referee, vance,
               secret_key=KEY, base_url=BASE, member_id=ada_player.id)  # fmt: skip
    stranger = make_user(db_session, "Stranger")
    with pytest.raises(UserError, match="choose a player of Salon"):
        change(roster.hand_over_character, db_session, campaign, referee, vance,
               secret_key=KEY, base_url=BASE, member_id=stranger.id)  # fmt: skip
    # Once Ada is dropped, her player may take Lady Vance.
    change(roster.drop_character, db_session, campaign, referee, ada, reason="")
    handed = change(roster.hand_over_character, db_session, campaign, referee, vance,
                    secret_key=KEY, base_url=BASE, member_id=ada_player.id)  # fmt: skip
    assert handed.invite is None and vance.user_id == ada_player.id
    # Bram goes to whoever accepts a new invitation, mailed to them.
    handed = change(roster.hand_over_character, db_session, campaign, referee, bram,
                    secret_key=KEY, base_url=BASE, mail_from=FROM,
                    email="newbram@example.test")  # fmt: skip
    assert bram.user_id is None
    assert handed.invite.invite.character_id == bram.id
    (mail,) = invite_mails(db_session, handed.invite.invite)
    assert mail.recipient == "newbram@example.test" and handed.invite.url in mail.body_text
    user = accounts.accept_invite(
        session=db_session, token=handed.invite.token, secret_key=KEY, now=NOW,
        display_name="New Bram", password=PASSWORD,
    )  # fmt: skip
    assert db_session.get(Character, bram.id).user_id == user.id
    assert "handed Bram to a new player, with an invitation" in sentences(db_session, campaign)
