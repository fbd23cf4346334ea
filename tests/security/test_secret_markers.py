"""Issue #16 item 7: a secret reaches nobody it is hidden from, on any channel.

Unique markers are planted in everything the forum hides from someone: a GM-only post
(and its thread's title), a whisper, a deleted post, the labels of rolls made in them, a
GM-only roll and a blind roll. Then every GET route of the whole application (pages,
Atom feeds, the JSON exports, the API with the member's own token, their own calendar) is
fetched, filled with every thread, post, roll and character, as another player, the
whisper's recipient, a stranger and a visitor; and every email queued for them is read,
with every push to their devices (issue #31: each reader has one, and wants forum posts
pushed). The campaign's chat channel and the scene's (issue #31) are real webhooks on
loopback: everything posted to them is read as a visitor's. No marker may show up, during
play or after the end (when every roll is shown, but a hidden post's labels stay hidden).
The search page and the API's search are asked for every marker (issue #33 item 2).
A route added later is checked without editing this test.

Issue #29 item 5: a player's saved drafts (a reply and a new scene, not yet posted) carry
markers too, which reach no one but their writer: not the other readers, not the GM.
"""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta
from email.message import EmailMessage

import pytest
import sqlalchemy as sa
from sqlmodel import col, select

from adapters.fetch import Fetcher
from pbp import mail_in_server
from pbp.models import OutboxMessage
from pbp.models.forum import Post, Thread
from pbp.services import campaigns, icons, saved_drafts
from pbp.services.accounts import calendar as calendars
from pbp.services.forum import gm, post_mail, posts, threads
from pbp.services.mail import push, webhooks
from pbp.services.mail.chat_send import ChatChannel
from pbp.services.mail.preferences import save_preferences, set_preference
from pbp.services.mail.send import FolderTransport, Sender
from pbp.services.mail.settings import MailSettings
from pbp.web import forum as forum_web
from tests.api import conftest as api_fixtures
from tests.channelserver import HookServer
from tests.routes import every_get_url, forum_values, hit_count, lists_icons, search_urls
from tests.services.forum.tables import T0, make_table, write
from tests.services.icons.pictures import picture
from tests.web import conftest as web_fixtures

auth = web_fixtures.auth  # the web tests' login helper, shared rather than copied

#: Markers in posts hidden from the reader: hidden during play and after the end.
POST_SECRETS = ("MKGMPOST", "MKGMTITLE", "MKGMPOSTROLL", "MKWHISPER", "MKWHISPERROLL", "MKDELETED")
#: The alt text and keyword of the icon only the whisper uses (issue #33 item 1): shown with
#: the whisper only, but listed with Ada's icons, which are public like her
#: (`tests.routes.lists_icons`).
ICON_SECRETS = ("MKICONALT", "MKICONKEYWORD")
#: Labels of hidden rolls in a public post: hidden until the end reveals every roll.
ROLL_SECRETS = ("MKGMROLL", "MKBLINDROLL")
#: Ada's saved drafts, never posted: hidden from everyone but Ada, the GM included.
DRAFT_SECRETS = ("MKDRAFTPOST", "MKDRAFTTITLE", "MKDRAFTSCENE")


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    api_fixtures.wire(app)
    return app


@pytest.fixture
def hooks():
    with HookServer() as server:
        yield server


@pytest.fixture
def table(auth, db_session, hooks):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, users=users)
    opening = write(db_session, table, table.gm, "The rain on Water Street.\n/roll 2d6 # rain")
    thread = db_session.get(Thread, opening.thread_id)
    for user in (table.ada_user, table.bram_user, table.cleo_user):
        threads.set_watch(
            session=db_session, campaign=table.campaign, thread=thread, user=user, on=True, now=T0
        )
    for path, scene in (("/campaign", None), ("/scene", thread.id)):
        webhooks.add_webhook(
            session=db_session, campaign=table.campaign, actor=table.gm, platform="discord",
            url=hooks.url(path), thread_id=scene, allow_private=True, now=T0,
        )  # fmt: skip
    for user in (table.bram_user, table.cleo_user):
        push.subscribe(session=db_session, user=user, endpoint=f"https://push.example/{user.id}",
                       p256dh="k", auth="a", now=T0)  # fmt: skip
        member = campaigns.membership(session=db_session, campaign=table.campaign, user=user)
        set_preference(session=db_session, membership=member, preference="forum", on=True)
        save_preferences(session=db_session, membership=member, chosen=["push:forum"],
                         keys=["push:forum"])  # fmt: skip
    # Issue #33 item 1: Ada's default icon is everywhere she posts; her second is used on
    # the whisper only, so where it shows, the whisper does.
    for keyword, alt in (("plain", "Ada, plain"), ("MKICONKEYWORD", "MKICONALT")):
        whisper_icon = icons.add_icon(
            session=db_session, campaign=table.campaign, actor=table.ada_user,
            character_slug=table.ada.slug, keyword=keyword, alt=alt, data=picture(), now=T0,
        )  # fmt: skip
    plant = [
        # The hidden posts mention the readers' characters (issue #29 item 4): a mention
        # mails only those who may read the post.
        ("MKGMPOST I am the mole, @Bram and @Cleo.\n/roll 3d6 # MKGMPOSTROLL", {"audience": "gm"}),
        (
            "MKWHISPER meet me at midnight, @Bram; not a word to @Cleo.\n"
            "/roll d100 # MKWHISPERROLL",
            {
                "audience": "whisper",
                "recipient_ids": (table.bram_user.id,),
                "icon_id": whisper_icon.id,
            },
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
    write(
        db_session, table, table.ada_user, "MKGMPOST body @Cleo", title="MKGMTITLE", audience="gm"
    )
    for form, target_id, fields in (
        ("post", thread.id, {"body": "MKDRAFTPOST I have not decided", "audience": "all"}),
        ("scene", 0, {"title": "MKDRAFTTITLE", "body": "MKDRAFTSCENE"}),
    ):
        saved_drafts.save_draft(
            session=db_session,
            user=table.ada_user,
            campaign=table.campaign,
            form=form,
            target_id=target_id,
            fields=fields,
            now=T0,
        )
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
    secrets = DRAFT_SECRETS + (POST_SECRETS if ended else POST_SECRETS + ROLL_SECRETS)
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


def _search_hits(app, client, db_session, table, user, words) -> dict[str, int]:
    """Issue #33 item 2: the search page and the API searched for each word, as `user`
    (logged in as by `_fetch_everything`): the hits per URL."""
    headers = {}
    if user is not None:
        headers["Authorization"] = "Bearer " + api_fixtures.make_token(db_session, user)
        db_session.commit()
    urls = search_urls(app, table.campaign.slug, words)
    assert any(u.startswith("/api/") for u in urls) and any("/c/" in u for u in urls)
    found = {}
    for url in urls:
        page = client.get(url, headers=headers if url.startswith("/api/") else {})
        assert page.status_code == 200, (url, page.status_code)
        found[url] = hit_count(page)
    return found


def _text(page) -> str:
    """The body as text; a zip (the static archive, a book's EPUB) as the text of all its
    files."""
    if page.mimetype not in ("application/zip", "application/epub+zip"):
        return page.get_data(as_text=True)
    with zipfile.ZipFile(io.BytesIO(page.get_data())) as archive:
        return "\n".join(
            archive.read(name).decode("utf-8", "replace") for name in archive.namelist()
        )


def _chat(db_session, hooks, tmp_path) -> str:
    """Deliver the chat channels' posts to the loopback webhooks; all they received."""
    fetcher = Fetcher(allow_private=True, connect_timeout=2, read_timeout=2, total_timeout=3)
    sender = Sender(lambda: db_session, FolderTransport(tmp_path / "mail"), background=False,
                    channels={"chat": ChatChannel(fetcher)})  # fmt: skip
    sender.send(now=T0 + timedelta(days=2))
    return hooks.texts()


def _mail_to(db_session, user) -> list[str]:
    if user is None:
        return []
    # Their mails and their pushes (push rows are addressed to their owner too).
    rows = db_session.exec(select(OutboxMessage).where(OutboxMessage.recipient == user.email))
    return [f"{m.subject}\n{m.body_text}\n{m.body_html or ''}\n{m.headers}" for m in rows]


@pytest.mark.parametrize("ended", [False, True], ids=["during play", "after the end"])
def test_no_channel_carries_a_secret_to_someone_it_is_hidden_from(
    app, auth, client, db_session, table, ended, hooks, tmp_path
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
            assert any('"url":' in m for m in mails), f"the {who} has a post pushed"
        if who == "whisper recipient":  # the control: a mention they may read is mailed
            assert any("Ada mentioned Bram" in m and "MKWHISPER" in m for m in mails)
        hidden = _hidden(who, ended)
        searched = _search_hits(app, client, db_session, table, user, hidden)
        for url, hits in searched.items():
            assert hits == 0, f"the {who} finds a secret at {url}"
        if who != "whisper recipient":
            for url, text in seen.items():
                for needle in ICON_SECRETS if not lists_icons(url) else ():
                    assert needle not in text, f"the {who} meets the whisper's icon at {url}"
            for needle in ICON_SECRETS:
                assert not any(needle in mail for mail in mails), f"the {who} is mailed {needle}"
            searched = _search_hits(app, client, db_session, table, user, ICON_SECRETS)
            assert not any(searched.values()), f"the {who} finds the whisper by its icon"
        for needle in hidden:
            for url, text in seen.items():
                assert needle not in text, f"the {who} meets {needle} at {url}"
            if needle == "MKDELETED":
                continue  # mailed while the post was public; deleting it cannot unsend
            for mail in mails:
                assert needle not in mail, f"the {who} is mailed {needle}"
            checked += 1
    assert checked
    # The chat channels are public: nothing any reader may not see reaches them.
    chat = _chat(db_session, hooks, tmp_path)
    assert "Do I spot the tail?" in chat and hooks.to("/scene") and hooks.to("/campaign")
    for needle in POST_SECRETS + ROLL_SECRETS:
        assert needle not in chat, f"a chat channel is posted {needle}"


def test_the_markers_are_really_there_for_the_gm(app, auth, client, db_session, table):
    """The test above can fail: the GM's channels carry every marker."""
    seen = _fetch_everything(app, client, auth, db_session, table, "GM", table.gm)
    everything = "\n".join(seen.values())
    for needle in POST_SECRETS + ROLL_SECRETS:
        assert needle in everything, needle
    # A player's draft is theirs alone: the GM, who reads every post, reads no draft.
    everything += "\n".join(_mail_to(db_session, table.gm))
    for needle in DRAFT_SECRETS:
        assert needle not in everything, f"the GM meets {needle}"
    beside_posts = "\n".join(t for u, t in seen.items() if not lists_icons(u))
    for needle in ICON_SECRETS:  # the whisper's icon, where the whisper is
        assert needle in beside_posts, needle
    # Search finds the posts' own words for the GM (roll labels and thread titles are not
    # searched: tests/services/search), so the search half of the test above can fail too.
    words = ("MKGMPOST", "MKWHISPER", "MKDELETED")
    searched = _search_hits(app, client, db_session, table, table.gm, words)
    assert len(searched) == 2 * len(words) and all(searched.values()), searched


def test_the_draft_markers_are_really_there_for_their_writer(app, auth, client, db_session, table):
    """The draft markers can be met: Ada's reply form, new-scene form and the API show her
    own drafts (so the searches above search where a draft would show)."""
    seen = _fetch_everything(app, client, auth, db_session, table, "writer", table.ada_user)
    for needle in DRAFT_SECRETS:
        assert any(needle in text for url, text in seen.items() if not url.startswith("/api/"))
        assert any(needle in text for url, text in seen.items() if url.startswith("/api/"))


def test_replies_by_mail_carry_no_secret_out(app, auth, client, db_session, table):
    """Issue #31 item 3, the reply-by-email channel: every member answers every mail they
    got, quoting all of it, from their own address. A reply is a public post, so only the
    mails about public posts carry a reply address, and the quoted mail is not posted: no
    reader meets a marker more than before."""
    app.config["PBP_REPLY_DOMAIN"] = "reply.pbp.test"
    settings = MailSettings.from_config(app.config)
    # The table's mails again, now with reply addresses (the outbox keys them per post).
    db_session.exec(sa.delete(OutboxMessage))  # type: ignore[call-overload]
    everything = db_session.exec(select(Post).order_by(col(Post.id))).all()
    for post in everything:
        thread = db_session.get(Thread, post.thread_id)
        post_mail.notify(db_session, table.campaign, thread, post, settings, T0)
    db_session.commit()
    readers = [u for u in (table.cleo_user, table.bram_user, table.stranger, table.gm) if u]
    replies = 0
    for user in readers:
        for mail in db_session.exec(
            select(OutboxMessage).where(OutboxMessage.recipient == user.email)
        ):
            address = mail.headers.get("Reply-To")
            # A hidden post's mail takes no reply (the GM's mail of a public post may show
            # a hidden roll's label: its reply must leave the quote out).
            for marker in (m for m in POST_SECRETS if m != "MKDELETED"):
                if marker in mail.body_text:
                    assert address is None, f"a mail showing {marker} takes replies"
            if address is None:
                continue
            quoted = "\n".join("> " + line for line in mail.body_text.splitlines())
            reply = EmailMessage()
            reply["From"], reply["To"], reply["Subject"] = (
                user.email,
                address,
                "Re: " + mail.subject,
            )
            reply.set_content(f"Noted.\n\nOn 1 July 2026, pbp wrote:\n{quoted}\n")
            outcomes = mail_in_server.deliver(app, reply.as_bytes(), [address], user.email)
            assert [o.status for o in outcomes] == ["posted"], outcomes
            replies += 1
    assert replies, "some mail took a reply: the test can fail"
    for who, user in _readers(table).items():
        seen = _fetch_everything(app, client, auth, db_session, table, who, user)
        for needle in _hidden(who, ended=False):
            for url, text in seen.items():
                assert needle not in text, f"the {who} meets {needle} at {url}"
