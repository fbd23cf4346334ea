"""Issue #29 item 3: threaded notes on pbp's own blog -- a reply on the page and through
the API, shown under the note it answers (three levels deep at most), threaded in the Atom
comment feed (RFC 4685) and mailed to the author of the note answered."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlmodel import select

from adapters.parse import parse_feed
from pbp.models import Note
from pbp.services.noteworthy import hosted_blog, note_threads
from tests.web.test_mail_promises import (
    NOW,
    app,  # noqa: F401 -- the promise tests' app: API wired, clock set
    entry_of,
    make_game,
    messages,
    outbox,
    switch_off,
)


@pytest.fixture
def game(db_session, client):
    return make_game(db_session, client)


def _note(db_session, game, who: str, entry, body: str, parent: Note | None = None) -> Note:
    """A note written before the test's action (stored directly: no mail)."""
    note = hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=game.characters[who],
        body_markdown=body,
        now=NOW + timedelta(minutes=10),
        reply_to=parent,
    )
    db_session.commit()
    return note


def _reply_page(game, who: str, entry, parent: Note, body="Indeed."):
    game.login(who)
    url = f"/c/{game.slug}/{game.characters['Ada'].slug}/{entry.id}/notes"
    return game.auth.post(url, {"body": body, "stance": "none", "reply_to": str(parent.id)})


def test_a_reply_on_the_page_answers_the_note_and_mails_its_author(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    cleos = _note(db_session, game, "Cleo", entry, "A fine ball.")
    page = _reply_page(game, "Bram", entry, cleos, "Fine? It was a trap.")
    assert page.status_code == 302
    reply = db_session.exec(select(Note).where(Note.parent_note_id == cleos.id)).one()
    assert page.headers["Location"].endswith(f"#note-{reply.id}")
    assert outbox(db_session, "reply") == [game.users["Cleo"].email]
    (mail,) = messages(db_session, "reply")
    assert "Bram replied to Cleo's note" in mail.subject
    assert "It was a trap." in mail.body_text and "A fine ball." in mail.body_text
    assert f"#note-{reply.id}" in mail.body_text
    # The entry's player hears of the note as of any other.
    assert outbox(db_session, "note") == [game.users["Ada"].email]


def test_the_entrys_player_answered_on_their_own_entry_gets_one_mail(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    adas = _note(db_session, game, "Ada", entry, "Thank you all.")
    assert _reply_page(game, "Bram", entry, adas).status_code == 302
    assert outbox(db_session, "reply") == [game.users["Ada"].email]
    assert outbox(db_session, "note") == []


def test_no_mail_for_a_reply_to_ones_own_note_or_with_the_preference_off(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    brams = _note(db_session, game, "Bram", entry, "First.")
    assert _reply_page(game, "Bram", entry, brams, "And second.").status_code == 302
    cleos = _note(db_session, game, "Cleo", entry, "Third.")
    switch_off(game, "Cleo", "replies_to_mine")
    assert _reply_page(game, "Bram", entry, cleos).status_code == 302
    assert outbox(db_session, "reply") == []


def test_a_reply_to_a_note_of_another_entry_is_refused(db_session, game):
    adas, brams = entry_of(db_session, game, "Ada"), entry_of(db_session, game, "Bram")
    elsewhere = _note(db_session, game, "Cleo", brams, "On Bram's entry.")
    page = _reply_page(game, "Cleo", adas, elsewhere)
    assert page.status_code == 404
    assert "no such note on this entry" in page.get_data(as_text=True)
    assert db_session.exec(select(Note).where(Note.entry_id == adas.id)).all() == []


def test_the_page_shows_threads_and_stops_indenting_at_three_levels(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    parent, chain = None, []
    for depth in range(5):
        parent = _note(
            db_session, game, ("Bram", "Cleo")[depth % 2], entry, f"Level {depth}.", parent
        )
        chain.append(parent)
    aside = _note(db_session, game, "Cleo", entry, "An aside on the entry.")
    game.login("Bram")
    url = f"/c/{game.slug}/{game.characters['Ada'].slug}/{entry.id}"
    html = game.auth._client.get(url).get_data(as_text=True)
    items = re.findall(r'<li class="note p-comment h-cite( depth-\d)?" id="note-(\d+)"', html)
    shown = [(int(note_id), depth.strip()) for depth, note_id in items]
    expected = [(n.id, f"depth-{min(i, 3)}" if i else "") for i, n in enumerate(chain)]
    assert shown == [*expected, (aside.id, "")]
    assert f"reply_to={chain[0].id}#note-form" in html
    # "Reply" opens the form as a reply to that note.
    form = game.auth._client.get(f"{url}?reply_to={chain[1].id}").get_data(as_text=True)
    assert f'name="reply_to" value="{chain[1].id}"' in form and "Replying to" in form
    assert "Post reply" in form


def test_threads_order_replies_under_their_parent_and_cap_the_depth():
    """The pure ordering, with a parent not read yet and a loop a feed could describe."""

    def note(note_id, parent=None):
        return Note(id=note_id, entry_id=1, source_id=str(note_id), parent_note_id=parent)

    notes = [note(1), note(2), note(3, 1), note(4, 3), note(5, 4), note(6, 5), note(7, 99)]
    notes += [note(8, 9), note(9, 8)]
    shown = [(t.note.id, t.depth) for t in note_threads.threaded(notes)]
    assert shown == [(1, 0), (3, 1), (4, 2), (5, 3), (6, 3), (2, 0), (7, 0), (8, 0), (9, 0)]


def test_the_api_takes_a_reply_and_says_what_it_answers(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    cleos = _note(db_session, game, "Cleo", entry, "Well.")
    path = f"/campaigns/{game.slug}/entries/{entry.id}/notes"
    made = game.call("Bram", "POST", path, json={"body": "Not well.", "reply_to": cleos.id})
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["in_reply_to"] == cleos.id
    listed = {n["id"]: n["in_reply_to"] for n in game.call("Bram", "GET", path).get_json()["items"]}
    assert listed == {cleos.id: None, made.get_json()["id"]: cleos.id}
    assert outbox(db_session, "reply") == [game.users["Cleo"].email]
    wrong = game.call("Bram", "POST", path, json={"body": "?", "reply_to": cleos.id + 999})
    assert wrong.status_code == 404
    assert wrong.headers["Content-Type"].startswith("application/problem+json")


def test_the_comment_feed_threads_a_reply_to_its_note(db_session, game, client):
    """RFC 4685: thr:in-reply-to names the note a reply answers, the entry for the others;
    pbp's own reader reads both back."""
    entry = entry_of(db_session, game, "Ada")
    cleos = _note(db_session, game, "Cleo", entry, "Well.")
    reply = _note(db_session, game, "Bram", entry, "Not well.", cleos)
    raw = client.get(f"/c/{game.slug}/{game.characters['Ada'].slug}/comments.atom").data
    ours = parse_feed(raw, {"content-type": "application/atom+xml"}, None)
    parents = {n.source_id.rsplit("/", 1)[1]: n.parent_source_id for n in ours.notes}
    assert parents[str(cleos.id)].endswith(f"pbp/entry/{entry.id}")
    assert parents[str(reply.id)].endswith(f"pbp/note/{cleos.id}")
    assert f"#note-{cleos.id}" in raw.decode()


def test_a_saved_draft_of_a_reply_reopens_as_that_reply(db_session, game):
    """Drafts (issue #29 item 5) keep the note a reply answers: the form's hidden field."""
    entry = entry_of(db_session, game, "Ada")
    cleos = _note(db_session, game, "Cleo", entry, "A fine ball.")
    game.login("Bram")
    saved = game.auth.post(
        f"/c/{game.slug}/drafts/note-{entry.id}",
        {"body": "Half a reply", "fate": "", "stance": "none", "reply_to": str(cleos.id)},
    )
    assert saved.status_code == 302
    url = f"/c/{game.slug}/{game.characters['Ada'].slug}/{entry.id}"
    page = game.auth._client.get(url).get_data(as_text=True)
    assert "Half a reply" in page and f'name="reply_to" value="{cleos.id}"' in page
    # "write a note on the entry instead" leaves the reply for a note on the entry.
    page = game.auth._client.get(f"{url}?reply_to=0").get_data(as_text=True)
    assert "Half a reply" in page and 'name="reply_to"' not in page
