"""Issue #16 item 7: a secret reaches nobody it is hidden from, on any channel.

Unique markers are planted in everything the forum hides from someone: a GM-only post
(and its thread's title), a whisper, a deleted post, the labels of rolls made in them, a
GM-only roll and a blind roll. Then every GET route of the whole application (pages,
Atom feeds, the JSON exports, the API with the member's own token, their own calendar) is
fetched, filled with every thread, post, roll and character, as another player, the
whisper's recipient, a stranger and a visitor; and every email queued for them is read.
No marker may show up, during play or after the end (when every roll is shown, but a
hidden post's labels stay hidden). A route added later is checked without editing this test.
"""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.models import OutboxMessage
from pbp.models.forum import Thread
from pbp.services.accounts import calendar as calendars
from pbp.services.forum import gm, posts, threads
from pbp.web import forum as forum_web
from tests.api import conftest as api_fixtures
from tests.routes import every_get_url, forum_values
from tests.services.forum.tables import T0, make_table, write
from tests.web import conftest as web_fixtures

auth = web_fixtures.auth  # the web tests' login helper, shared rather than copied

#: Markers in posts hidden from the reader: hidden during play and after the end.
POST_SECRETS = ("MKGMPOST", "MKGMTITLE", "MKGMPOSTROLL", "MKWHISPER", "MKWHISPERROLL", "MKDELETED")
#: Labels of hidden rolls in a public post: hidden until the end reveals every roll.
ROLL_SECRETS = ("MKGMROLL", "MKBLINDROLL")


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    api_fixtures.wire(app)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, users=users)
    opening = write(db_session, table, table.gm, "The rain on Water Street.\n/roll 2d6 # rain")
    thread = db_session.get(Thread, opening.thread_id)
    for user in (table.ada_user, table.bram_user, table.cleo_user):
        threads.set_watch(
            session=db_session, campaign=table.campaign, thread=thread, user=user, on=True, now=T0
        )
    plant = [
        ("MKGMPOST I am the mole.\n/roll 3d6 # MKGMPOSTROLL", {"audience": "gm"}),
        (
            "MKWHISPER meet me at midnight.\n/roll d100 # MKWHISPERROLL",
            {"audience": "whisper", "recipient_ids": (table.bram_user.id,)},
        ),
        ("Do I spot the tail?\n/roll 5d10 # MKGMROLL", {"roll_visibility": "gm"}),
        ("Is the drink poisoned?\n/roll 7d8 # MKBLINDROLL", {"roll_visibility": "blind"}),
        ("MKDELETED I take it back.", {}),
    ]
    for minutes, (body, draft) in enumerate(plant, start=1):
        post = write(
            db_session, table, table.ada_user, body, thread=thread, minutes=minutes, **draft
        )
    posts.delete_post(
        session=db_session, campaign=table.campaign, post=post, actor=table.ada_user, now=T0
    )
    write(db_session, table, table.ada_user, "MKGMPOST body", title="MKGMTITLE", audience="gm")
    db_session.commit()
    return table


def _urls(app, db_session, table, user=None) -> list[str]:
    """Every GET route of the application, with every value its arguments can take here
    (and the reader's own secret calendar address)."""
    values = forum_values(db_session, table)
    if user is not None:
        feed = calendars.make_address(session=db_session, user=user, now=T0)
        values["secret"] = [feed.secret]
    return every_get_url(app, values)


def _readers(table):
    return {
        "other player": table.cleo_user,
        "whisper recipient": table.bram_user,
        "stranger": table.stranger,
        "visitor": None,
    }


def _hidden(who: str, ended: bool) -> tuple[str, ...]:
    secrets = POST_SECRETS if ended else POST_SECRETS + ROLL_SECRETS
    if who == "whisper recipient":
        secrets = tuple(s for s in secrets if not s.startswith("MKWHISPER"))
    return secrets


def _fetch_everything(app, client, auth, db_session, table, who, user) -> dict[str, str]:
    auth.logout()
    headers = {}
    if user is not None:
        auth.login(user)
        headers["Authorization"] = "Bearer " + api_fixtures.make_token(db_session, user)
        db_session.commit()
    seen = {}
    for url in _urls(app, db_session, table, user):
        page = client.get(url, headers=headers if url.startswith("/api/") else {})
        # 400: a route that needs what this campaign lacks (a card table in the thread).
        assert page.status_code in (200, 302, 400, 401, 403, 404), (who, url, page.status_code)
        seen[url] = _text(page)
    return seen


def _text(page) -> str:
    """The body as text; a zip (the static archive, a book's EPUB) as the text of all its
    files."""
    if page.mimetype not in ("application/zip", "application/epub+zip"):
        return page.get_data(as_text=True)
    with zipfile.ZipFile(io.BytesIO(page.get_data())) as archive:
        return "\n".join(
            archive.read(name).decode("utf-8", "replace") for name in archive.namelist()
        )


def _mail_to(db_session, user) -> list[str]:
    if user is None:
        return []
    rows = db_session.exec(select(OutboxMessage).where(OutboxMessage.recipient == user.email))
    return [f"{m.subject}\n{m.body_text}\n{m.body_html or ''}\n{m.headers}" for m in rows]


@pytest.mark.parametrize("ended", [False, True], ids=["during play", "after the end"])
def test_no_channel_carries_a_secret_to_someone_it_is_hidden_from(
    app, auth, client, db_session, table, ended
):
    if ended:
        gm.end_campaign(
            session=db_session,
            campaign=table.campaign,
            actor=table.gm,
            now=T0 + timedelta(days=1),
        )
        db_session.commit()
    checked = 0
    for who, user in _readers(table).items():
        seen = _fetch_everything(app, client, auth, db_session, table, who, user)
        assert any(u.startswith("/api/") for u in seen) and any(".atom" in u for u in seen)
        assert user is None or any(u.endswith(".ics") for u in seen)  # the calendar
        assert any("export.json" in u for u in seen)
        mails = _mail_to(db_session, user)
        if who in ("other player", "whisper recipient"):
            assert mails, f"the {who} watches the thread: some post was mailed to them"
        for needle in _hidden(who, ended):
            for url, text in seen.items():
                assert needle not in text, f"the {who} meets {needle} at {url}"
            if needle == "MKDELETED":
                continue  # mailed while the post was public; deleting it cannot unsend
            for mail in mails:
                assert needle not in mail, f"the {who} is mailed {needle}"
            checked += 1
    assert checked


def test_the_markers_are_really_there_for_the_gm(app, auth, client, db_session, table):
    """The test above can fail: the GM's channels carry every marker."""
    seen = _fetch_everything(app, client, auth, db_session, table, "GM", table.gm)
    everything = "\n".join(seen.values())
    for needle in POST_SECRETS + ROLL_SECRETS:
        assert needle in everything, needle
