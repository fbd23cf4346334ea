"""Unread, across devices (issue #29 item 2): the server's read marks, what is new to each
member, and that a whisper or a GM-only post is never new to someone who cannot read it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.errors import Forbidden, NotFound
from pbp.models import ReadMarker
from pbp.models.forum import Thread
from pbp.services import unread
from pbp.services.forum import posts, threads
from pbp.services.forum.visibility import can_see_post, recipients_of
from pbp.services.noteworthy import hidden_entries, hosted_blog
from tests.bench.test_bench_pages import count_selects
from tests.factories import make_user
from tests.services.forum.tables import T0, make_table, write
from tests.services.test_board import _game, _user


def _count(session, user, campaign, role="player") -> int:
    return unread.unread_counts(session=session, user=user, campaigns=[(campaign, role)]).get(
        campaign.id, 0
    )


def _read_scene(session, table, user, thread):
    """What the scene page does: read the posts the user may see, raise the mark."""
    viewer = table.viewer(user)
    _, shown = threads.get_thread(
        session=session, campaign=table.campaign, thread_id=thread.id, viewer=viewer
    )
    reading = unread.seen_in_scene(
        session=session, user=user, campaign=table.campaign, thread=thread, posts=shown
    )
    unread.record(session=session, reading=reading, now=T0)
    return reading


def _entry(session, campaign, user, title="Dear diary"):
    entry = hosted_blog.write_entry(
        session=session,
        actor=user,
        campaign=campaign,
        title=title,
        mood="Pensive",
        body="Nothing today.",
        now=T0,
        mail=None,
    )
    session.flush()
    return entry


def _note(session, campaign, user, entry, body="Lovely."):
    note = hosted_blog.post_note(
        session=session,
        actor=user,
        campaign=campaign,
        entry_id=entry.id,
        body=body,
        now=T0 + timedelta(minutes=5),
        mail=None,
    )
    session.flush()
    return note


# -- forum scenes -------------------------------------------------------------------------------


def test_a_scene_s_posts_are_new_to_the_others_until_they_read_the_scene(db_session):
    table = make_table(db_session)
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    waits = write(db_session, table, table.ada_user, "Ada waits.", thread=thread)
    assert _count(db_session, table.bram_user, table.campaign) == 2
    assert _count(db_session, table.ada_user, table.campaign) == 1  # not her own post
    assert _count(db_session, table.gm, table.campaign, "referee") == 1
    reading = _read_scene(db_session, table, table.bram_user, thread)
    assert reading.new == {opening.id, waits.id} and reading.first == f"post-{opening.id}"
    assert _count(db_session, table.bram_user, table.campaign) == 0
    # The mark is the server's: a second device reads the same count, and nothing is new.
    assert _read_scene(db_session, table, table.bram_user, thread).new == set()
    later = write(db_session, table, table.gm, "A door opens.", thread=thread)
    assert _count(db_session, table.bram_user, table.campaign) == 1
    counts = unread.scene_counts(
        session=db_session, user=table.bram_user, campaign=table.campaign, role="player"
    )
    assert counts == {thread.id: 1}
    posts.delete_post(
        session=db_session, campaign=table.campaign, post=later, actor=table.gm, now=T0
    )
    assert _count(db_session, table.bram_user, table.campaign) == 0  # a deleted post is not new


def test_a_whisper_or_a_gm_post_is_new_only_to_those_who_may_read_it(db_session):
    """Issue #29: "Mark whisper/GM-only posts as unread only for those who can read them."
    A whisper to Bram and a GM-only post by Ada: never counted, listed or marked for Cleo."""
    table = make_table(db_session)
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    whisper = write(
        db_session,
        table,
        table.ada_user,
        "Bram: the key is under the mat.",
        thread=thread,
        audience="whisper",
        recipient_ids=(table.bram_user.id,),
    )
    gm_only = write(db_session, table, table.ada_user, "For the GM.", thread=thread, audience="gm")
    assert _count(db_session, table.cleo_user, table.campaign) == 1  # the opening only
    assert _count(db_session, table.bram_user, table.campaign) == 2  # and the whisper
    assert _count(db_session, table.gm, table.campaign, "referee") == 2  # whisper, GM post
    reading = _read_scene(db_session, table, table.cleo_user, thread)
    assert reading.new == {opening.id}
    assert _read_scene(db_session, table, table.bram_user, thread).new == {opening.id, whisper.id}
    assert gm_only.id in _read_scene(db_session, table, table.gm, thread).new
    # Cleo's mark never names a post she cannot read.
    (mark,) = db_session.exec(
        select(ReadMarker).where(ReadMarker.user_id == table.cleo_user.id)
    ).all()
    assert mark.seen_id == opening.id
    # A post for everyone after the hidden ones is new to her, the hidden ones still not.
    write(db_session, table, table.gm, "Thunder.", thread=thread)
    assert _count(db_session, table.cleo_user, table.campaign) == 1


@pytest.mark.parametrize("audience", ["all", "whisper", "gm"])
def test_the_counts_follow_can_see_post_for_every_member(db_session, audience):
    """The counts' SQL is the twin of visibility.can_see_post: for every member and every
    audience, the posts counted are the others' posts that member may read."""
    table = make_table(db_session)
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    extra = {"recipient_ids": (table.cleo_user.id,)} if audience == "whisper" else {}
    post = write(
        db_session, table, table.bram_user, "Psst.", thread=thread, audience=audience, **extra
    )
    recipients = recipients_of(db_session, [post.id]).get(post.id, set())
    for user in (table.gm, table.ada_user, table.bram_user, table.cleo_user):
        viewer = table.viewer(user)
        expected = {
            p.id
            for p in (opening, post)
            if p.author_id != user.id and can_see_post(p, viewer, recipients)
        }
        counts = unread.scene_counts(
            session=db_session, user=user, campaign=table.campaign, role=viewer.role
        )
        assert counts.get(thread.id, 0) == len(expected), (audience, user.display_name)


def test_marking_one_scene_read_through_the_service_counts_only_what_the_member_reads(db_session):
    table = make_table(db_session)
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.ada_user, "To the GM.", thread=thread, audience="gm")
    left = unread.mark_read(
        session=db_session,
        campaign=table.campaign,
        user=table.cleo_user,
        now=T0,
        scene_id=thread.id,
    )
    assert left == 0
    (mark,) = db_session.exec(
        select(ReadMarker).where(ReadMarker.user_id == table.cleo_user.id)
    ).all()
    assert mark.seen_id == opening.id  # the GM-only post's id is not kept for her
    # A scene whose every post is hidden from her is, to her, no scene at all.
    hidden = write(db_session, table, table.ada_user, "Secret.", title="Alone", audience="gm")
    with pytest.raises(NotFound):
        unread.mark_read(
            session=db_session,
            campaign=table.campaign,
            user=table.cleo_user,
            now=T0,
            scene_id=hidden.thread_id,
        )
    with pytest.raises(Forbidden):
        unread.mark_read(session=db_session, campaign=table.campaign, user=table.stranger, now=T0)


# -- the planet: entries and notes ---------------------------------------------------------------


def test_entries_and_notes_are_new_to_the_others_and_mark_all_read_reads_them(db_session):
    campaign, referee_user, (ada, bram, _) = _game(db_session)
    ada_user, bram_user = _user(db_session, ada), _user(db_session, bram)
    entry = _entry(db_session, campaign, ada_user)
    assert _count(db_session, bram_user, campaign) == 1
    assert _count(db_session, ada_user, campaign) == 0
    assert _count(db_session, referee_user, campaign, "referee") == 1
    _note(db_session, campaign, bram_user, entry)
    assert _count(db_session, ada_user, campaign) == 1  # Bram's note on her entry
    assert _count(db_session, bram_user, campaign) == 1  # his own note is not new to him
    assert _count(db_session, referee_user, campaign, "referee") == 2
    assert unread.mark_read(session=db_session, campaign=campaign, user=bram_user, now=T0) == 0
    assert _count(db_session, bram_user, campaign) == 0
    assert _count(db_session, ada_user, campaign) == 1  # her marks are her own


def test_the_planet_marks_what_it_showed_and_the_entry_page_its_notes(db_session):
    campaign, _, (ada, bram, cleo) = _game(db_session)
    ada_user, bram_user, cleo_user = (_user(db_session, c) for c in (ada, bram, cleo))
    first = _entry(db_session, campaign, ada_user)
    second = _entry(db_session, campaign, bram_user, "Bram's")
    note = _note(db_session, campaign, bram_user, first)
    news = unread.planet_news(
        session=db_session, user=cleo_user, campaign=campaign, entry_ids={first.id, second.id}
    )
    assert set(news.entries) == {first.id, second.id} and news.notes == ((note.id, first.id),)
    # The page showed only the second entry (a filter): the first and its note stay new.
    reading = unread.seen_on_planet(
        user=cleo_user, campaign=campaign, news=news, shown_entries={second.id}, shown_notes=set()
    )
    assert reading.new == {second.id} and reading.first == f"entry-{second.id}"
    assert reading.new_notes == set()  # the first entry's note was not on the page
    unread.record(session=db_session, reading=reading, now=T0)
    # The planet's mark is a high-water mark: the newest entry shown.
    assert _count(db_session, cleo_user, campaign) == 1  # the note; the entries are read
    reading = unread.seen_on_entry(
        session=db_session, user=cleo_user, campaign=campaign, entry=first, notes=[note]
    )
    assert reading.new == {note.id} and reading.first == f"note-{note.id}"
    unread.record(session=db_session, reading=reading, now=T0)
    assert _count(db_session, cleo_user, campaign) == 0
    # Marks only go up: an older reading (another device) does not make anything new again.
    unread.record(
        session=db_session,
        reading=unread.Reading(
            marks=[unread._mark(cleo_user.id, campaign.id, "planet", campaign.id, 1)]
        ),
        now=T0,
    )
    assert _count(db_session, cleo_user, campaign) == 0


def test_a_hidden_entry_is_never_new(db_session):
    campaign, referee_user, (ada, bram, _) = _game(db_session)
    ada_user, bram_user = _user(db_session, ada), _user(db_session, bram)
    entry = _entry(db_session, campaign, ada_user)
    _note(db_session, campaign, bram_user, entry)
    hidden_entries.hide_entry(
        session=db_session, actor=ada_user, campaign=campaign, entry_id=entry.id, now=T0
    )
    db_session.flush()
    assert _count(db_session, bram_user, campaign) == 0
    assert _count(db_session, referee_user, campaign, "referee") == 0
    with pytest.raises(NotFound):
        unread.mark_read(
            session=db_session, campaign=campaign, user=bram_user, now=T0, entry_id=entry.id
        )


def test_counts_stop_above_the_cap(db_session):
    table = make_table(db_session)
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    for k in range(unread.CAP + 5):
        write(db_session, table, table.gm, f"Drop {k}.", thread=thread)
    count = _count(db_session, table.ada_user, table.campaign)
    assert count == unread.CAP + 1 and unread.shown(count) == "99+ new"
    assert unread.shown(3) == "3 new" and unread.shown(0) == ""


def test_the_counts_of_many_campaigns_are_one_query(db_session, engine):
    member = make_user(db_session, "Mo")
    made = []
    for n in (1, 6):
        while len(made) < n:
            campaign, _, (ada, *_) = _game(db_session, member=member)
            _entry(db_session, campaign, _user(db_session, ada))
            made.append((campaign, "player"))
        with count_selects(engine) as seen:
            counts = unread.unread_counts(session=db_session, user=member, campaigns=made)
        assert len(seen) == 1, f"{n} campaigns: {len(seen)} queries"
        assert [counts[c.id] for c, _ in made] == [1] * n


def test_more_campaigns_than_a_batch_are_counted_in_batches(db_session, engine, monkeypatch):
    """SQLite allows 500 parts in a UNION: past `BATCH` campaigns, one query per batch."""
    member = make_user(db_session, "Mo")
    made = []
    for _ in range(5):
        campaign, _, (ada, *_) = _game(db_session, member=member)
        _entry(db_session, campaign, _user(db_session, ada))
        made.append((campaign, "player"))
    monkeypatch.setattr(unread, "BATCH", 2)
    with count_selects(engine) as seen:
        counts = unread.unread_counts(session=db_session, user=member, campaigns=made)
    assert len(seen) == 3 and [counts[c.id] for c, _ in made] == [1] * 5
