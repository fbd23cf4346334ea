"""Forum notifications: watchers and whisper recipients get the post as they may see it,
through the outbox, and nobody gets what they could not read on the page."""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbp.models import OutboxMessage
from pbp.models.forum import Roll, Thread
from pbp.services import campaigns
from pbp.services.forum import rolls, threads
from tests.services.forum.tables import T0, make_table, write


@pytest.fixture
def table(db_session):
    return make_table(db_session)


@pytest.fixture
def scene(db_session, table):
    """A thread opened by the GM and watched by every player."""
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    for user in (table.ada_user, table.bram_user, table.cleo_user):
        threads.set_watch(
            session=db_session, campaign=table.campaign, thread=thread, user=user, on=True, now=T0
        )
    db_session.commit()
    return thread


def _mail(db_session) -> dict[str, OutboxMessage]:
    rows = db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "forum_post")).all()
    return {row.recipient: row for row in rows}


def test_watchers_get_the_post_but_not_the_author(db_session, table, scene):
    write(db_session, table, table.ada_user, "I light a cigarette.", thread=scene, minutes=1)
    mail = _mail(db_session)
    assert set(mail) == {table.gm.email, table.bram_user.email, table.cleo_user.email}
    body = mail[table.bram_user.email].body_text
    assert "I light a cigarette." in body
    assert f"http://pbp.test/c/{table.campaign.slug}/forum/t/{scene.id}#post-" in body


def test_a_whisper_is_mailed_to_its_recipient_and_the_gm_only(db_session, table, scene):
    write(
        db_session,
        table,
        table.ada_user,
        "The key is under the mat.",
        thread=scene,
        audience="whisper",
        recipient_ids=(table.bram_user.id,),
    )
    mail = _mail(db_session)
    assert set(mail) == {table.gm.email, table.bram_user.email}
    assert all("under the mat" not in m.body_text for m in _all(db_session, table.cleo_user))


def test_a_whisper_reaches_a_recipient_who_does_not_watch(db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    thread = db_session.get(Thread, opening.thread_id)
    write(
        db_session,
        table,
        table.ada_user,
        "Psst, Cleo.",
        thread=thread,
        audience="whisper",
        recipient_ids=(table.cleo_user.id,),
    )
    assert table.cleo_user.email in _mail(db_session)


def test_a_gm_only_post_is_mailed_to_the_gm_only(db_session, table, scene):
    write(db_session, table, table.ada_user, "GM, I betray them.", thread=scene, audience="gm")
    assert set(_mail(db_session)) == {table.gm.email}


@pytest.mark.parametrize("visibility", ["gm", "blind"])
def test_hidden_roll_results_are_not_mailed_to_players(db_session, table, scene, visibility):
    post = write(
        db_session,
        table,
        table.ada_user,
        "Do I spot the tail?\n/roll 6d10 # spot",
        thread=scene,
        roll_visibility=visibility,
    )
    (roll,) = db_session.exec(select(Roll).where(Roll.post_id == post.id)).all()
    mail = _mail(db_session)
    assert roll.result["text"] in mail[table.gm.email].body_text
    for user in (table.bram_user, table.cleo_user):
        body = mail[user.email].body_text
        assert roll.result["text"] not in body and "hidden roll" in body


def test_the_seed_is_in_no_mail(db_session, table, scene):
    write(db_session, table, table.ada_user, "/roll d6", thread=scene)
    seed = rolls.get_secret(session=db_session, campaign=table.campaign).seed
    for row in db_session.exec(select(OutboxMessage)).all():
        assert seed not in row.body_text and seed not in (row.body_html or "")
        assert seed not in row.subject


def test_forum_mail_can_be_turned_off_and_watching_stopped(db_session, table, scene):
    member = campaigns.membership(session=db_session, campaign=table.campaign, user=table.cleo_user)
    member.notify = {"forum": False}
    db_session.add(member)
    threads.set_watch(
        session=db_session,
        campaign=table.campaign,
        thread=scene,
        user=table.bram_user,
        on=False,
        now=T0,
    )
    write(db_session, table, table.ada_user, "Anyone?", thread=scene)
    assert set(_mail(db_session)) == {table.gm.email}


def test_posting_watches_the_thread(db_session, table):
    opening = write(db_session, table, table.gm, "Scene.")
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.cleo_user, "I join.", thread=thread)
    assert threads.is_watching(
        session=db_session, thread=thread, viewer=table.viewer(table.cleo_user)
    )
    write(db_session, table, table.gm, "Welcome.", thread=thread, minutes=1)
    assert table.cleo_user.email in _mail(db_session)


def _all(db_session, user) -> list[OutboxMessage]:
    return list(db_session.exec(select(OutboxMessage).where(OutboxMessage.recipient == user.email)))
