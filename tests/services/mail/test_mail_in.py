"""Reply by email (issue #31 item 3), end to end over real SMTP on both sides: pbp's
sender delivers a notification to a loopback SMTP server (tests/smtpserver.py), the player's
"mail client" (smtplib) sends a reply to `pbp mail-in`'s SMTP server, and the reply becomes
a note through the note form's own service function, which the tally counts. A refused
reply comes back by mail, with the reason and the text."""

from __future__ import annotations

import smtplib
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from sqlmodel import select

from pbp import limits
from pbp.mail_in_cli import mail_in_command
from pbp.mail_in_server import MailInServer, deliver
from pbp.models import Membership, Note, OutboxMessage, ReplyToken, Turn, User
from pbp.services.mail import reply_tokens
from pbp.services.mail.send import sender_for_app
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hosted_blog
from pbp.services.noteworthy import tally as tally_service
from tests.factories import make_campaign, make_characters, make_user
from tests.helpers import Api, make_test_app, make_token, wire
from tests.smtpserver import SmtpServer, free_port

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)
DOMAIN = "reply.pbp.test"


@pytest.fixture
def smtp():
    with SmtpServer() as server:
        yield server


@pytest.fixture
def app(engine, connection, database_url, tmp_path, smtp):
    return make_test_app(
        engine,
        connection,
        database_url,
        tmp_path / "instance",
        PBP_REPLY_DOMAIN=DOMAIN,
        SMTP_URL=f"smtp://{smtp.host}:{smtp.port}",
        PBP_CLOCK=lambda: NOW + timedelta(minutes=10),
    )


@pytest.fixture
def mail_in(app):
    with MailInServer(app, port=free_port()) as server:
        yield server


@pytest.fixture
def game(app, db_session):
    """Turn 3 of a Noteworthy game; Cleo asked for mail about challenges she may judge."""
    campaign = make_campaign(db_session, referee=make_user(db_session, "Referee"))
    chars = make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo", "Dov"))
    db_session.add(Turn(campaign_id=campaign.id, number=3, opened_at=NOW - timedelta(hours=1)))
    cleo_member = db_session.exec(
        select(Membership).where(Membership.user_id == chars[2].user_id)
    ).one()
    cleo_member.notify = {"judging": True}
    db_session.add(cleo_member)
    db_session.flush()
    return campaign, chars


def _user(session, character) -> User:
    return session.get(User, character.user_id)


def _challenge(app, session, campaign, ada, bram):
    duel = hosted_blog.write_entry(
        session=session,
        actor=_user(session, ada),
        campaign=campaign,
        title="The ledger",
        mood="Challenging",
        body="Bram cooked the books.",
        target_id=bram.id,
        now=NOW,
        mail=MailSettings.from_config(app.config),
    )
    session.commit()
    sender_for_app(app).send(now=NOW)
    return duel


def _reply(received, sender: str, text: str) -> EmailMessage:
    """What a mail client sends: Re: subject, threading headers, the original quoted below
    the answer, a signature."""
    original = received.message
    reply = EmailMessage()
    reply["From"] = sender
    reply["To"] = original["Reply-To"]
    reply["Subject"] = "Re: " + original["Subject"]
    reply["In-Reply-To"] = original["Message-ID"]
    reply["Message-ID"] = f"<reply-{original['Message-ID'].strip('<>')}>"
    quoted = "\n".join(
        "> " + line for line in original.get_body(("plain",)).get_content().splitlines()
    )
    reply.set_content(
        f"{text}\n\n-- \nSent from my phone\n\n"
        f"On Fri, 1 May 2026 at 13:01, pbp <pbp@localhost> wrote:\n{quoted}\n"
    )
    return reply


def _send(mail_in: MailInServer, message: EmailMessage) -> None:
    with smtplib.SMTP(mail_in.host, mail_in.port, timeout=10) as client:
        client.send_message(message)


def test_a_reply_by_mail_is_a_note_that_counts_in_the_tally(app, db_session, smtp, mail_in, game):
    """Noteworthy: "Each PC still in the game (except the challenger and target) may ...
    note clear support or opposition to the challenge." Cleo's reply to the mail about
    Ada's challenge is her supporting note."""
    campaign, (ada, bram, cleo, _dov) = game
    duel = _challenge(app, db_session, campaign, ada, bram)
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    address = news.message["Reply-To"]
    assert address.startswith("reply+") and address.endswith("@" + DOMAIN)
    assert str(campaign.id) not in address.split("@")[0].removeprefix("reply+")

    _send(mail_in, _reply(news, _user(db_session, cleo).email, "Support. I saw the ledger."))

    (note,) = db_session.exec(select(Note).where(Note.entry_id == duel.id)).all()
    assert note.author_character_id == cleo.id
    assert "I saw the ledger" in note.body_html
    # The quoted mail and the signature stay out.
    assert "cooked" not in note.body_html and "phone" not in note.body_html
    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    (live,) = tally_service.live_challenges(session=db_session, campaign=campaign, turn=turn)
    assert [p.character_id for p in live.supporters] == [cleo.id]


def test_a_refused_reply_comes_back_by_mail_with_the_reason_and_the_text(
    app, db_session, smtp, mail_in, game
):
    """Noteworthy: the target cannot take a position; the note form refuses it, and so
    does a reply to the challenge mail."""
    campaign, (ada, bram, _cleo, _dov) = game
    duel = _challenge(app, db_session, campaign, ada, bram)
    bram_mail = _user(db_session, bram).email
    (challenge,) = smtp.received_by(bram_mail)
    smtp.reset()

    _send(mail_in, _reply(challenge, bram_mail, "Oppose. Lies, all of it."))

    assert db_session.exec(select(Note).where(Note.entry_id == duel.id)).all() == []
    assert smtp.wait_for(1)
    (refusal,) = smtp.received_by(bram_mail)
    body = refusal.message.get_body(("plain",)).get_content()
    assert "The target cannot take a position" in body
    assert "Oppose. Lies, all of it." in body


def test_a_reply_from_another_address_is_not_posted_and_its_owner_is_told(
    app, db_session, smtp, mail_in, game
):
    campaign, (ada, bram, cleo, _dov) = game
    duel = _challenge(app, db_session, campaign, ada, bram)
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    smtp.reset()
    _send(mail_in, _reply(news, "mallory@elsewhere.test", "Oppose. Says Mallory."))
    assert db_session.exec(select(Note).where(Note.entry_id == duel.id)).all() == []
    assert smtp.wait_for(1)
    assert smtp.recipients() == [_user(db_session, cleo).email]  # never the forged From


def test_a_revoked_address_posts_nothing(app, db_session, smtp, mail_in, game):
    campaign, (ada, bram, cleo, _dov) = game
    duel = _challenge(app, db_session, campaign, ada, bram)
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    member = db_session.exec(select(Membership).where(Membership.user_id == cleo.user_id)).one()
    assert reply_tokens.revoke_all(session=db_session, membership=member, now=NOW) == 1
    db_session.commit()
    smtp.reset()
    _send(mail_in, _reply(news, _user(db_session, cleo).email, "Support."))
    assert db_session.exec(select(Note).where(Note.entry_id == duel.id)).all() == []
    assert smtp.wait_for(1)
    assert "revoked" in smtp.messages[0].message.get_body(("plain",)).get_content()


def test_an_unknown_reply_address_is_refused_at_rcpt(app, mail_in, game):
    message = EmailMessage()
    message["From"] = "someone@example.test"
    message["To"] = f"reply+{'a' * 32}@{DOMAIN}"
    message["Subject"] = "guess"
    message.set_content("Support.")
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        _send(mail_in, message)


def test_one_token_posts_only_where_it_was_made_for(app, db_session, smtp, game):
    """Nothing in the message moves the reply elsewhere: another entry's Message-ID in
    In-Reply-To, another address in To beside it."""
    campaign, (ada, bram, cleo, dov) = game
    duel = _challenge(app, db_session, campaign, ada, bram)
    other = hosted_blog.write_entry(
        session=db_session, actor=_user(db_session, dov), campaign=campaign, title="Rain",
        mood="Calm", body="It rains.", now=NOW, mail=None,
    )  # fmt: skip
    db_session.commit()
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    reply = _reply(news, _user(db_session, cleo).email, "No position. Hm.")
    del reply["In-Reply-To"]
    reply["In-Reply-To"] = f"<entry-{other.id}@pbp.test>"
    reply["Cc"] = f"reply+{'b' * 32}@{DOMAIN}"
    outcomes = deliver(app, reply.as_bytes(), [reply["To"], reply["Cc"]], "cleo@x.test")
    assert [o.status for o in outcomes] == ["posted", "dropped"]
    notes = db_session.exec(select(Note)).all()
    assert [(n.entry_id, n.author_character_id) for n in notes] == [(duel.id, cleo.id)]


def test_bounces_and_auto_replies_are_dropped_unanswered(app, db_session, smtp, game):
    campaign, (ada, bram, cleo, _dov) = game
    _challenge(app, db_session, campaign, ada, bram)
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    smtp.reset()
    vacation = _reply(news, _user(db_session, cleo).email, "I am away until Monday.")
    vacation["Auto-Submitted"] = "auto-replied"
    assert deliver(app, vacation.as_bytes(), [vacation["To"]], "cleo@x.test")[0].status == "dropped"
    bounce = _reply(news, _user(db_session, cleo).email, "Delivery failed.")
    assert deliver(app, bounce.as_bytes(), [bounce["To"]], "")[0].status == "dropped"
    assert db_session.exec(select(Note)).all() == []
    assert (
        db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "reply_refused")).all()
        == []
    )


def test_without_a_reply_domain_mails_carry_no_reply_address(
    engine, connection, database_url, tmp_path, db_session, smtp
):
    app = make_test_app(
        engine, connection, database_url, tmp_path / "i2",
        SMTP_URL=f"smtp://{smtp.host}:{smtp.port}",
    )  # fmt: skip
    campaign = make_campaign(db_session, referee=make_user(db_session, "Referee"))
    ada, bram, *_ = make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo"))
    db_session.add(Turn(campaign_id=campaign.id, number=3, opened_at=NOW - timedelta(hours=1)))
    db_session.flush()
    _challenge(app, db_session, campaign, ada, bram)
    (challenge,) = smtp.received_by(_user(db_session, bram).email)
    assert challenge.message["Reply-To"] is None
    assert "Reply to this mail" not in challenge.message.get_body(("plain",)).get_content()
    assert db_session.exec(select(ReplyToken)).all() == []


def test_the_stdin_pipe_posts_the_same_way(app, db_session, smtp, game, runner):
    campaign, (ada, bram, cleo, _dov) = game
    duel = _challenge(app, db_session, campaign, ada, bram)
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    reply = _reply(news, _user(db_session, cleo).email, "Oppose. Ada lies.")
    result = runner.invoke(mail_in_command, ["--stdin"], input=reply.as_bytes())
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "posted"
    (note,) = db_session.exec(select(Note).where(Note.entry_id == duel.id)).all()
    assert note.author_character_id == cleo.id


def test_a_member_revokes_their_reply_addresses_through_the_api(app, db_session, smtp, game):
    campaign, (ada, bram, cleo, _dov) = game
    wire(app)
    token = make_token(db_session, _user(db_session, cleo))
    _challenge(app, db_session, campaign, ada, bram)
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    answer = Api(app.test_client()).call(
        "DELETE", f"/campaigns/{campaign.slug}/me/mail/replies", token=token
    )
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["revoked"] == 1
    reply = _reply(news, _user(db_session, cleo).email, "Support.")
    outcomes = deliver(app, reply.as_bytes(), [reply["To"]], "cleo@x.test")
    assert [o.status for o in outcomes] == ["refused"]


def test_replies_keep_the_pages_length_and_rate_limits(app, db_session, smtp, game):
    """The note form's limits hold for a reply: a note too long is refused, and so is one
    past the account's content rate (the pages' own counter)."""
    campaign, (ada, bram, cleo, _dov) = game
    app.config["PBP_CONTENT_LIMIT"] = "2 per minute"
    _challenge(app, db_session, campaign, ada, bram)
    (news,) = smtp.received_by(_user(db_session, cleo).email)
    cleo_mail = _user(db_session, cleo).email
    smtp.reset()

    def reply(text: str, n: int) -> str:
        message = _reply(news, cleo_mail, text)
        del message["Message-ID"]
        message["Message-ID"] = f"<reply-{n}@client.test>"
        return deliver(app, message.as_bytes(), [message["To"]], cleo_mail)[0].status

    assert reply("x" * (limits.NOTE_BODY + 1), 1) == "refused"
    assert reply("Support. Fine.", 2) == "posted"
    assert reply("Also: fine.", 3) == "refused"  # the third content action this minute
    bodies = [m.message.get_body(("plain",)).get_content() for m in smtp.received_by(cleo_mail)]
    assert len(bodies) == 2
    assert "at most" in bodies[0] and "faster than pbp allows" in bodies[1]
