"""Reply by email in a forum scene (issue #31 item 3): a reply to a public post's mail is a
post in that scene, as its member and their character; a whisper's mail takes no reply
(a reply is a public post), and a reply cannot reach another thread."""

from __future__ import annotations

from dataclasses import replace
from email.message import EmailMessage

import pytest
from sqlmodel import col, select

from pbp.mail_in_server import deliver
from pbp.models import OutboxMessage
from pbp.models.forum import Post, Thread
from pbp.services.forum import posts, threads
from pbp.services.forum.drafts import Draft
from tests.services.forum.tables import MAIL, T0, make_table

DOMAIN = "reply.pbp.test"
SETTINGS = replace(MAIL, reply_domain=DOMAIN)


@pytest.fixture
def scene(app, db_session):
    app.config["PBP_REPLY_DOMAIN"] = DOMAIN
    app.config["SECRET_KEY"] = MAIL.secret_key
    app.config["PBP_CLOCK"] = lambda: T0
    table = make_table(db_session)
    opening = posts.create_thread(
        session=db_session, campaign=table.campaign, author=table.gm, title="The docks",
        draft=Draft(body="Fog on the water."), mail=SETTINGS, now=T0,
    )  # fmt: skip
    thread = db_session.get(Thread, opening.thread_id)
    threads.set_watch(
        session=db_session, campaign=table.campaign, thread=thread, user=table.bram_user,
        on=True, now=T0,
    )  # fmt: skip
    db_session.commit()
    return table, thread


def _post(db_session, table, thread, author, body, **draft):
    post = posts.create_post(
        session=db_session, campaign=table.campaign, thread=thread, author=author,
        draft=Draft(body=body, **draft), mail=SETTINGS, now=T0,
    )  # fmt: skip
    db_session.commit()
    return post


def _mail_about(db_session, post, user) -> OutboxMessage:
    return db_session.exec(
        select(OutboxMessage).where(OutboxMessage.dedupe_key == f"forum-post:{post.id}:{user.id}")
    ).one()


def _answer(app, mail: OutboxMessage, sender: str, text: str):
    reply = EmailMessage()
    reply["From"], reply["To"], reply["Subject"] = sender, mail.headers["Reply-To"], "Re: x"
    reply["Message-ID"] = f"<{mail.id}-answer@client.test>"
    quoted = "\n".join("> " + line for line in mail.body_text.splitlines())
    reply.set_content(f"{text}\n\nOn Wed, the GM wrote:\n{quoted}\n")
    return deliver(app, reply.as_bytes(), [reply["To"]], sender)


def test_a_reply_is_a_post_in_the_scene_as_the_member_and_their_character(app, db_session, scene):
    table, thread = scene
    said = _post(db_session, table, thread, table.gm, "A boat comes in.")
    mail = _mail_about(db_session, said, table.bram_user)
    assert mail.headers["Reply-To"].endswith("@" + DOMAIN)
    outcomes = _answer(app, mail, table.bram_user.email, "Bram hides behind the crates.")
    assert [o.status for o in outcomes] == ["posted"]
    newest = db_session.exec(select(Post).order_by(col(Post.id).desc())).first()
    assert newest is not None and newest.thread_id == thread.id
    assert (newest.author_id, newest.character_id) == (table.bram_user.id, table.bram.id)
    assert newest.body == "Bram hides behind the crates." and newest.audience == "all"
    # The same message delivered again (an MTA's retry) posts nothing more.
    _answer(app, mail, table.bram_user.email, "Bram hides behind the crates.")
    assert db_session.exec(select(Post).where(Post.body == newest.body)).all() == [newest]


def test_a_whispers_mail_takes_no_reply(app, db_session, scene):
    table, thread = scene
    whisper = _post(
        db_session, table, thread, table.gm, "Only you see the knife.",
        audience="whisper", recipient_ids=(table.bram_user.id,),
    )  # fmt: skip
    mail = _mail_about(db_session, whisper, table.bram_user)
    assert "Reply-To" not in mail.headers
    assert "Reply to this mail" not in mail.body_text
