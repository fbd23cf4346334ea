"""Issue #29 item 3: threads read from external comment feeds show as threads -- the
comment a reply answers is carried from the feed (Blogger's related link, WordPress's Atom
thr:in-reply-to, pbp's own comment feed) through ingest into the Note row."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from sqlmodel import select

from adapters.parse import parse_feed
from pbp.models import Note
from pbp.services.noteworthy import note_threads
from tests.helpers import fixture_bytes
from tests.services.noteworthy.test_ingest import T0, entry, feed, note, run, setup

BLOG = "4471820183762295181"
MARSH = f"tag:blogger.com,1999:blog-{BLOG}.post-5550001112223334400"
# Baroness Wick answers Colonel Marsh's "Oppose! Slander." on Miss Pell's post, quoting it.
PAGE = "https://misspell.blogspot.com/2024/04/what-i-saw-from-nursery-window.html"
COMMENTS = f"https://www.blogger.com/feeds/{BLOG}/7385122361046230921/comments/default"
BLOGGER_REPLY = f"""<entry><id>tag:blogger.com,1999:blog-{BLOG}.post-5550001112223339999</id>
<published>2024-04-03T10:00:00.000-07:00</published>
<updated>2024-04-03T10:00:00.000-07:00</updated>
<title type='text'>Slander?</title>
<content type='html'>&lt;blockquote&gt;Oppose! Slander.&lt;/blockquote&gt;
Slander? I was there.</content>
<link rel='related' type='application/atom+xml' href='{COMMENTS}/5550001112223334400'/>
<link rel='alternate' href='{PAGE}?showComment=1712163600000#c5550001112223339999'/>
<author><name>Baroness Wick</name><uri>https://baroness-wick.livejournal.com/</uri></author>
<thr:in-reply-to xmlns:thr='http://purl.org/syndication/thread/1.0' href='{PAGE}'
  ref='tag:blogger.com,1999:blog-{BLOG}.post-7385122361046230921' type='text/html'/>
</entry>"""


def _blogger_comments_with_a_reply() -> bytes:
    raw = fixture_bytes("blogger_comments.xml").decode()
    at = raw.index("<entry>")  # the newest first, as Blogger lists them
    return (raw[:at] + BLOGGER_REPLY + raw[at:]).encode()


def test_a_blogger_reply_is_stored_under_the_comment_it_answers(db_session):
    campaign, _ada, _bram, blog, _turn = setup(db_session)
    posts = parse_feed(fixture_bytes("blogger_posts.xml"), {"content-type": "application/atom+xml"})
    comments = parse_feed(
        _blogger_comments_with_a_reply(), {"content-type": "application/atom+xml"}
    )
    reply = comments.notes[0]
    assert (comments.kind, reply.reply_to_source_id) == ("blogger", MARSH)
    run(db_session, campaign, blog, posts)
    report = run(db_session, campaign, blog, comments)
    assert (report.new_notes, report.unmatched_notes) == (3, 0)
    rows = {n.source_id: n for n in db_session.exec(select(Note))}
    answer, marsh = rows["guid:" + reply.source_id], rows["guid:" + MARSH]
    assert answer.parent_note_id == marsh.id and answer.entry_id == marsh.entry_id
    # Its own words take no position: the quoted "Oppose!" is the Colonel's.
    assert (marsh.stance, answer.stance) == ("oppose", "none")
    wick = next(n for n in rows.values() if n.author_name == "Baroness Wick" and n is not answer)
    shown = note_threads.threaded(sorted(rows.values(), key=lambda n: n.published_at))
    assert [(t.note.id, t.depth) for t in shown] == [(marsh.id, 0), (answer.id, 1), (wick.id, 0)]


WP_ATOM = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:thr="http://purl.org/syndication/thread/1.0">
<title>Comments for Lady Vance</title><id>https://wp.test/comments/feed/atom/</id>
<updated>2026-05-01T15:00:00Z</updated><generator uri="https://wordpress.org/">WordPress</generator>
<link rel="self" type="application/atom+xml" href="https://wp.test/comments/feed/atom/"/>
<entry><title>By: Colonel Marsh</title><id>https://wp.test/?p=12#comment-56</id>
<link rel="alternate" href="https://wp.test/the-ball/#comment-56"/>
<author><name>Colonel Marsh</name></author>
<published>2026-05-01T15:00:00Z</published><updated>2026-05-01T15:00:00Z</updated>
<content type="html">&lt;p&gt;Support. You saw what I saw.&lt;/p&gt;</content>
<thr:in-reply-to ref="https://wp.test/?p=12#comment-34"
  href="https://wp.test/the-ball/#comment-34" type="text/html"/>
</entry>
<entry><title>By: Miss Pell</title><id>https://wp.test/?p=12#comment-34</id>
<link rel="alternate" href="https://wp.test/the-ball/#comment-34"/>
<author><name>Miss Pell</name></author>
<published>2026-05-01T14:00:00Z</published><updated>2026-05-01T14:00:00Z</updated>
<content type="html">&lt;p&gt;What a ball.&lt;/p&gt;</content>
<thr:in-reply-to ref="https://wp.test/?p=12" href="https://wp.test/the-ball/" type="text/html"/>
</entry>
</feed>"""


def test_a_wordpress_atom_reply_names_the_comment_it_answers(db_session):
    campaign, _ada, _bram, blog, _turn = setup(db_session)
    run(db_session, campaign, blog, feed(entry(source_id="https://wp.test/?p=12")))
    comments = parse_feed(WP_ATOM, {"content-type": "application/atom+xml"})
    assert comments.kind == "wordpress" and comments.is_comment_feed
    marsh, pell = comments.notes
    assert (marsh.reply_to_source_id, pell.reply_to_source_id) == (pell.source_id, None)
    run(db_session, campaign, blog, comments)
    rows = {n.author_name: n for n in db_session.exec(select(Note))}
    assert rows["Colonel Marsh"].parent_note_id == rows["Miss Pell"].id
    assert rows["Miss Pell"].parent_note_id is None
    # A reply with a marker of its own takes a position.
    assert rows["Colonel Marsh"].stance == "support"


def test_a_reply_read_before_its_parent_is_linked_when_the_parent_arrives(db_session):
    campaign, _ada, _bram, blog, _turn = setup(db_session)
    run(db_session, campaign, blog, feed(entry()))
    first = note(source_id="https://blog.test/1#c1", body="<p>Hear, hear.</p>")
    reply = replace(
        note(source_id="https://blog.test/1#c2", body="<p>Quite.</p>"),
        reply_to_source_id="https://blog.test/1#c1",
        published=T0 + timedelta(hours=2, minutes=5),
    )
    run(db_session, campaign, blog, feed(notes=(reply,)))  # the parent is not in this page
    stored = db_session.exec(select(Note)).one()
    assert stored.parent_note_id is None  # on the entry, for now
    report = run(db_session, campaign, blog, feed(notes=(reply, first)))
    assert (report.new_notes, report.changed_notes) == (1, 1)
    rows = {n.source_id: n for n in db_session.exec(select(Note))}
    assert (
        rows["guid:https://blog.test/1#c2"].parent_note_id == rows["guid:https://blog.test/1#c1"].id
    )


def test_pbps_own_comment_feed_threads_a_reply_when_read_back(db_session):
    """RFC 4685 as pbp writes it: a reply's thr:in-reply-to names the note, not the entry."""
    campaign, _ada, _bram, blog, _turn = setup(db_session)
    run(db_session, campaign, blog, feed(entry(source_id="tag:pbp.test,2026:pbp/entry/7")))
    on_entry = note(
        parent="tag:pbp.test,2026:pbp/entry/7", source_id="tag:pbp.test,2026:pbp/note/1"
    )
    answer = note(
        parent="tag:pbp.test,2026:pbp/note/1",
        source_id="tag:pbp.test,2026:pbp/note/2",
        body="<p>No.</p>",
    )
    # The reply is listed before the note it answers (the newest first): a second pass.
    report = run(db_session, campaign, blog, feed(notes=(answer, on_entry)))
    assert (report.new_notes, report.unmatched_notes) == (2, 0)
    rows = {n.source_id: n for n in db_session.exec(select(Note))}
    assert (
        rows["guid:tag:pbp.test,2026:pbp/note/2"].parent_note_id
        == rows["guid:tag:pbp.test,2026:pbp/note/1"].id
    )


def test_comments_that_answer_each_other_are_kept_flat(db_session):
    """A feed's nonsense (two comments each answering the other) loses no comment."""
    campaign, _ada, _bram, blog, _turn = setup(db_session)
    run(db_session, campaign, blog, feed(entry()))
    one = replace(
        note(source_id="https://blog.test/1#c1"), reply_to_source_id="https://blog.test/1#c2"
    )
    two = replace(
        note(source_id="https://blog.test/1#c2"), reply_to_source_id="https://blog.test/1#c1"
    )
    report = run(db_session, campaign, blog, feed(notes=(one, two)))
    assert (report.new_notes, report.unmatched_notes) == (2, 0)
    assert [n.parent_note_id for n in db_session.exec(select(Note))] == [None, None]
