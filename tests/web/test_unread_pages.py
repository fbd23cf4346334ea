"""Unread on the pages (issue #29 item 2): "N new" in the campaign bar, the campaign lists
and the board; new items marked, "Jump to the first unread", "Mark all read"; a visitor's
cached planet untouched, and a whisper to someone else never new."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from pbp.models.forum import Thread
from pbp.services import campaigns
from pbp.services.noteworthy import hosted_blog, referee
from pbp.web import forum as forum_web
from tests.helpers import T0
from tests.services.forum.tables import make_table, write

NEW_MARK = '<span class="new-mark">new</span>'


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    found = make_table(db_session, users=users)
    db_session.commit()
    return found


@pytest.fixture
def game(auth, db_session):
    """A Noteworthy game in its first turn: Rita referees, Ada and Bram play."""
    rita, ada_user, bram_user = (auth.create_user(display_name=n) for n in ("Rita", "Ann", "Ben"))
    campaign = campaigns.create_campaign(
        session=db_session, referee=rita, name="Lantern", settings={"opening_turns": 0}, now=T0
    )
    ada, bram = (
        campaigns.add_character(session=db_session, campaign=campaign, name=n, user=u)
        for n, u in (("Ada", ada_user), ("Bram", bram_user))
    )
    for character in (ada, bram):
        hosted_blog.builtin_blog(session=db_session, character=character)
    referee.open_turn(
        session=db_session,
        campaign=campaign,
        actor=rita,
        now=T0,
        text="The ball.",
        deadline_hours=48,
    )
    db_session.commit()
    return campaign, rita, ada_user, bram_user


def _text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.get_data(as_text=True)


def _nav_news(page: str) -> str | None:
    found = re.search(r'<span class="news">([^<]+)</span>', page.split("</nav>")[0])
    return found.group(1) if found else None


def test_a_new_post_shows_in_the_bar_the_lists_and_the_scene_until_read(
    auth, client, db_session, table
):
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    db_session.commit()
    base = f"/c/{table.campaign.slug}"
    auth.login(table.bram_user)
    home = _text(client.get("/"))
    assert '<span class="news">1 new</span>' in home  # the board's list and the campaign list
    scenes = _text(client.get(f"{base}/forum/"))
    assert _nav_news(scenes) == "1 new" and "Mark all read" in scenes
    page = _text(client.get(f"{base}/forum/t/{thread.id}"))
    assert page.count(NEW_MARK) == 1
    assert f'<a href="#post-{opening.id}">Jump to the first unread</a>' in page
    # Read on this device: read on every other one (a second client, the same account).
    again = _text(client.get(f"{base}/forum/t/{thread.id}"))
    assert NEW_MARK not in again and "Jump to the first unread" not in again
    assert _nav_news(_text(client.get(f"{base}/forum/"))) is None
    assert '<span class="news">' not in _text(client.get("/"))


def test_a_whisper_to_someone_else_is_never_new_on_the_pages(auth, client, db_session, table):
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    write(
        db_session,
        table,
        table.ada_user,
        "Ben: the key is under the mat.",
        thread=thread,
        audience="whisper",
        recipient_ids=(table.bram_user.id,),
    )
    write(db_session, table, table.ada_user, "For the GM.", thread=thread, audience="gm")
    db_session.commit()
    base = f"/c/{table.campaign.slug}"
    auth.login(table.cleo_user)
    assert _nav_news(_text(client.get(f"{base}/forum/"))) == "1 new"
    page = _text(client.get(f"{base}/forum/t/{thread.id}"))
    assert page.count(NEW_MARK) == 1 and "under the mat" not in page
    auth.logout()
    auth.login(table.bram_user)
    assert _nav_news(_text(client.get(f"{base}/forum/"))) == "2 new"


def test_the_planet_marks_new_entries_for_a_member_and_not_for_a_visitor(
    auth, client, db_session, game
):
    campaign, _, ada_user, bram_user = game
    entry = hosted_blog.write_entry(
        session=db_session,
        actor=ada_user,
        campaign=campaign,
        title="Dear diary",
        mood="Pensive",
        body="Nothing today.",
        now=T0 + timedelta(hours=1),
        mail=None,
    )
    db_session.commit()
    base = f"/c/{campaign.slug}/"
    visitor = _text(client.get(base))
    assert NEW_MARK not in visitor and "Mark all read" not in visitor
    auth.login(bram_user)
    page = _text(client.get(base))
    assert page.count(NEW_MARK) == 1 and _nav_news(page) is None  # read now: 0 left
    assert f'<a href="#entry-{entry.id}">Jump to the first unread</a>' in page
    assert NEW_MARK not in _text(client.get(base))
    auth.logout()
    client.get(base)  # shows "You are logged out." once
    assert _text(client.get(base)) == visitor  # the visitors' cached page is as it was
    auth.login(ada_user)
    assert NEW_MARK not in _text(client.get(base))  # her own entry is not new to her


def test_an_entry_page_marks_its_new_notes(auth, client, db_session, game):
    campaign, _, ada_user, bram_user = game
    entry = hosted_blog.write_entry(
        session=db_session,
        actor=ada_user,
        campaign=campaign,
        title="Dear diary",
        mood="Pensive",
        body="Nothing today.",
        now=T0 + timedelta(hours=1),
        mail=None,
    )
    note = hosted_blog.post_note(
        session=db_session,
        actor=bram_user,
        campaign=campaign,
        entry_id=entry.id,
        body="Lovely.",
        now=T0 + timedelta(hours=2),
        mail=None,
    )
    db_session.commit()
    auth.login(ada_user)
    url = f"/c/{campaign.slug}/ada/{entry.id}"
    assert _nav_news(_text(client.get(f"/c/{campaign.slug}/turns/"))) == "1 new"
    page = _text(client.get(url))
    assert page.count(NEW_MARK) == 1
    assert f'<a href="#note-{note.id}">Jump to the first unread</a>' in page
    assert NEW_MARK not in _text(client.get(url))
    assert _nav_news(_text(client.get(f"/c/{campaign.slug}/turns/"))) is None


def test_mark_all_read_reads_everything_and_comes_back(auth, client, db_session, game):
    campaign, rita, ada_user, _ = game
    hosted_blog.write_entry(
        session=db_session,
        actor=ada_user,
        campaign=campaign,
        title="Dear diary",
        mood="Pensive",
        body="Nothing today.",
        now=T0 + timedelta(hours=1),
        mail=None,
    )
    db_session.commit()
    auth.login(rita)
    turns = f"/c/{campaign.slug}/turns/"
    assert _nav_news(_text(client.get(turns))) == "1 new"
    answer = auth.post(f"/c/{campaign.slug}/read", {"next": turns})
    assert answer.status_code == 302 and answer.headers["Location"].endswith(turns)
    assert _nav_news(_text(client.get(turns))) is None
    # Never a redirect off the site.
    away = auth.post(f"/c/{campaign.slug}/read", {"next": "//evil.example/"})
    assert away.headers["Location"].endswith(f"/c/{campaign.slug}/")


def test_mark_all_read_is_for_members(auth, client, db_session, game):
    campaign, *_ = game
    stranger = auth.create_user(display_name="Stan")
    auth.login(stranger)
    assert auth.post(f"/c/{campaign.slug}/read").status_code == 403


def test_the_planet_marks_a_new_note_and_reads_it(auth, client, db_session, game):
    """Ada's own entry is not new to her; Bram's note on it is, on the planet, and the
    planet reads it (her entry's page then has nothing new)."""
    campaign, _, ada_user, bram_user = game
    entry = hosted_blog.write_entry(
        session=db_session,
        actor=ada_user,
        campaign=campaign,
        title="Dear diary",
        mood="Pensive",
        body="Nothing today.",
        now=T0 + timedelta(hours=1),
        mail=None,
    )
    note = hosted_blog.post_note(
        session=db_session,
        actor=bram_user,
        campaign=campaign,
        entry_id=entry.id,
        body="Lovely.",
        now=T0 + timedelta(hours=2),
        mail=None,
    )
    db_session.commit()
    auth.login(ada_user)
    page = _text(client.get(f"/c/{campaign.slug}/"))
    assert page.count(NEW_MARK) == 1
    assert f'<li class="note p-comment h-cite" id="note-{note.id}">{NEW_MARK}' in page
    assert f'<a href="#note-{note.id}">Jump to the first unread</a>' in page
    assert NEW_MARK not in _text(client.get(f"/c/{campaign.slug}/ada/{entry.id}"))
