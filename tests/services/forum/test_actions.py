"""The forum's actions by id, as the pages and the API call them: each holds its checks
(who may read the thread or post, who may change it), with no view in front (#18 item 1)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.errors import REFUSALS, Forbidden, NotFound
from pbp.models.forum import Watch
from pbp.services.forum import posts, sheets, threads
from pbp.services.forum.drafts import Draft
from tests.services.forum.tables import MAIL, ONE_STATS, T0, make_table, write


@pytest.fixture
def table(db_session):
    return make_table(db_session)


def _reply(session, table, thread_id, user, body="Aye."):
    return posts.reply(
        session=session,
        campaign=table.campaign,
        thread_id=thread_id,
        author=user,
        draft=Draft(body=body),
        mail=MAIL,
        now=T0 + timedelta(minutes=5),
    )


def test_a_reply_needs_a_member_and_a_thread_they_may_read(db_session, table):
    public = write(db_session, table, table.ada_user, "We wait.")
    hidden = write(db_session, table, table.gm, "Only the GM knows.", audience="gm", title="Plot")
    with pytest.raises(Forbidden, match="only members"):
        _reply(db_session, table, public.thread_id, table.stranger)
    with pytest.raises(NotFound, match="no such thread"):
        _reply(db_session, table, hidden.thread_id, table.bram_user)
    with pytest.raises(NotFound, match="no such thread"):
        _reply(db_session, table, 10**6, table.bram_user)
    assert (
        _reply(db_session, table, public.thread_id, table.bram_user).thread_id == public.thread_id
    )


def test_changing_or_deleting_someone_elses_post_is_refused(db_session, table):
    post = write(db_session, table, table.ada_user, "We wait.")

    def change(user):
        return posts.change_post(
            session=db_session,
            campaign=table.campaign,
            post_id=post.id,
            editor=user,
            body="We run.",
            now=T0 + timedelta(minutes=1),
        )

    def remove(user):
        return posts.remove_post(
            session=db_session,
            campaign=table.campaign,
            post_id=post.id,
            actor=user,
            now=T0 + timedelta(minutes=2),
        )

    with pytest.raises(Forbidden, match="author and the GM"):
        change(table.bram_user)
    with pytest.raises(Forbidden, match="author and the GM"):
        remove(table.stranger)
    assert change(table.gm).body == "We run."  # the GM may change any post
    assert remove(table.ada_user).deleted_at is not None


def test_watching_needs_a_member_who_may_read_the_thread(db_session, table):
    post = write(db_session, table, table.ada_user, "We wait.")
    whisper = write(
        db_session,
        table,
        table.ada_user,
        "Psst.",
        audience="whisper",
        recipient_ids=(table.gm.id,),
        title="Secret",
    )

    def watch(user, thread_id, on=True):
        return threads.watch_thread(
            session=db_session,
            campaign=table.campaign,
            thread_id=thread_id,
            user=user,
            on=on,
            now=T0,
        )

    with pytest.raises(Forbidden, match="only members"):
        watch(table.stranger, post.thread_id)
    with pytest.raises(NotFound):
        watch(table.bram_user, whisper.thread_id)
    watch(table.bram_user, post.thread_id)
    watch(table.bram_user, post.thread_id)  # idempotent
    watches = db_session.exec(select(Watch).where(Watch.user_id == table.bram_user.id)).all()
    assert [w.thread_id for w in watches] == [post.thread_id]


def test_a_sheet_is_changed_by_its_player_or_the_gm_only(db_session, table):
    data = {"stats": ONE_STATS, "skills": {"Short Blade": 4}, "hit_points_lost": 0}

    def edit(user, slug="ada", sheet=data):
        return sheets.edit_sheet(
            session=db_session,
            campaign=table.campaign,
            character_slug=slug,
            data=sheet,
            actor=user,
            now=T0,
        )

    with pytest.raises(Forbidden, match="Ada's player and the GM"):
        edit(table.bram_user)
    with pytest.raises(Forbidden):
        edit(table.stranger)
    with pytest.raises(NotFound):
        edit(table.ada_user, slug="nobody")
    with pytest.raises(REFUSALS):  # ONE's own check of the sheet
        edit(table.ada_user, sheet={"stats": {"STR": 40}})
    character, sheet = edit(table.gm)
    assert character.id == table.ada.id and sheet.data["stats"] == ONE_STATS
