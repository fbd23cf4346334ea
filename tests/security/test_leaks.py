"""Issue #16 item 7: three leaks found on a running instance, each kept shut.

- a deleted forum post's text on its edit page (GET), for every member;
- after the end, the API's roll view carrying the label of a roll in a GM-only post or a
  whisper inside ``result.command``;
- the referee's export promising no email addresses while its audit log held invitees';
- a chat channel (issue #31) told of an entry its author hid before the post left.

And issue #27 item 2: an entry its author hid, and the notes on it, reach no other player,
stranger or visitor on any GET route (pages, feeds, the API, the archive) or in the digest,
or in a search for them (issue #33 item 2).
Issue #29 item 5: a player's saved drafts (an entry and a note not yet posted) reach no one
else on those channels, the referee included.
"""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta

import pytest
from sqlmodel import select

from adapters.fetch import Fetcher
from pbp.models import Character, Membership, OutboxMessage, User
from pbp.models.forum import Thread
from pbp.services import export, icons, saved_drafts
from pbp.services.accounts import logins as accounts
from pbp.services.forum.posts import delete_post
from pbp.services.mail import notifications, webhooks
from pbp.services.mail.chat_send import ChatChannel
from pbp.services.mail.preferences import set_preference
from pbp.services.mail.send import FolderTransport, Sender
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hidden_entries, hosted_blog, turns
from pbp.web import forum as forum_web
from tests.api import conftest as api_fixtures
from tests.channelserver import HookServer
from tests.factories import make_campaign, make_characters, make_user
from tests.helpers import API_NOW as NOW
from tests.helpers import PASSWORD, make_token, wire
from tests.routes import every_get_url, hit_count, lists_icons, search_urls
from tests.services.forum.tables import T0, make_table, write
from tests.services.icons.pictures import picture
from tests.services.noteworthy.test_history import play_campaign
from tests.web import conftest as web_fixtures

# The web and API tests' fixtures, shared rather than copied.
auth = web_fixtures.auth
api, world, forum_world = api_fixtures.api, api_fixtures.world, api_fixtures.forum_world


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    wire(app)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, users=users)


def _deleted_post(db_session, table):
    opening = write(db_session, table, table.gm, "The rain on Water Street.")
    thread = db_session.get(Thread, opening.thread_id)
    post = write(db_session, table, table.ada_user, "DELETEDTEXT I regret this.", thread=thread)
    delete_post(
        session=db_session, campaign=table.campaign, post=post, actor=table.ada_user, now=T0
    )
    db_session.commit()
    return post


@pytest.mark.parametrize("who", ["author", "other player"])
def test_a_deleted_posts_edit_page_shows_no_text(auth, client, db_session, table, who):
    post = _deleted_post(db_session, table)
    auth.login(table.ada_user if who == "author" else table.cleo_user)
    page = client.get(f"/c/{table.campaign.slug}/forum/posts/{post.id}/edit")
    assert page.status_code == 403
    assert "DELETEDTEXT" not in page.get_data(as_text=True)


def test_someone_elses_post_has_no_edit_page(auth, client, db_session, table):
    opening = write(db_session, table, table.ada_user, "Ada's own words.")
    db_session.commit()
    auth.login(table.cleo_user)
    page = client.get(f"/c/{table.campaign.slug}/forum/posts/{opening.id}/edit")
    assert page.status_code == 403
    assert "and the GM can change it, until the end" in page.get_data(as_text=True)


def test_the_author_still_edits_a_live_post(auth, client, db_session, table):
    opening = write(db_session, table, table.ada_user, "LIVETEXT as written.")
    db_session.commit()
    auth.login(table.ada_user)
    page = client.get(f"/c/{table.campaign.slug}/forum/posts/{opening.id}/edit")
    assert page.status_code == 200 and "LIVETEXT as written." in page.get_data(as_text=True)


def test_after_the_end_hidden_posts_roll_labels_stay_hidden_in_the_api(api, forum_world):
    w = forum_world
    base = f"/campaigns/{w.extra['forum']}/forum"
    posts = f"{base}/threads/{w.extra['thread']}/posts"
    rolls = {}
    for audience, extra in (("gm", {}), ("whisper", {"recipient_ids": [w.users["referee"].id]})):
        made = api.post(
            posts,
            token=w.tokens["player"],
            json={"body": f"/roll 3d6 # LABEL{audience.upper()}", "audience": audience, **extra},
        )
        assert made.status_code == 201, made.get_data(as_text=True)
        rolls[audience] = made.get_json()["rolls"][0]["id"]
    ended = api.post(f"{base}/end", token=w.tokens["referee"])
    assert ended.status_code == 200
    for audience, roll_id in rolls.items():
        for role in ("other_player", "stranger", "anonymous"):
            answer = api.get(f"{base}/rolls/{roll_id}", token=w.tokens[role])
            assert answer.status_code == 200
            body = answer.get_json()
            roll = body["roll"]
            assert roll["state"] == "shown" and body["post"] is None
            assert roll["result"]["command"] == roll["command"] == "/roll 3d6", (audience, role)
            assert "LABEL" not in json.dumps(body), (audience, role)
    # The GM and the roller still read the label.
    mine = api.get(f"{base}/rolls/{rolls['gm']}", token=w.tokens["player"]).get_json()
    assert mine["roll"]["result"]["command"] == "/roll 3d6 # LABELGM"


def test_the_export_carries_no_invitees_address(db_session):
    referee = make_user(db_session, "Referee")
    game = play_campaign(db_session, referee=referee)
    issued = accounts.create_invite(
        session=db_session,
        campaign=game.campaign,
        created_by=referee,
        secret_key="k" * 32,
        base_url="http://pbp.test",
        now=NOW,
        email="Invitee.Secret@Mail.Example",
    )
    assert issued
    data = export.export_campaign(session=db_session, campaign=game.campaign)
    text = json.dumps(data).lower()
    assert "invitee.secret" not in text and "@mail.example" not in text
    invited = [a for a in data["audit_log"] if a["action"] == "invite.created"]
    assert len(invited) == 1 and invited[0]["detail"]["invite_id"]  # the event itself stays


# -- an entry its author hid (issue #27 item 2) --------------------------------------------

HIDDEN = ("MKHIDDENTITLE", "MKHIDDENBODY", "MKHIDDENNOTE")
#: The alt text and keyword of the icon Ada picked for the hidden entry alone (issue #33
#: item 1): shown beside it only, and in her icon list (`tests.routes.lists_icons`).
HIDDEN_ICON = ("MKHIDDENICONALT", "MKHIDDENICONKEY")
#: Ada's saved drafts: hidden from everyone but Ada, the referee included.
DRAFTS = ("MKDRAFTENTRYTITLE", "MKDRAFTENTRY", "MKDRAFTNOTE")


@pytest.fixture
def hooks():
    with HookServer() as server:
        yield server


@pytest.fixture
def hidden(auth, db_session, hooks):
    """Turn 1 open: Ada wrote a shown entry and one she hid, which Bram had noted; every
    member asked for the digest, which is queued the next day. The campaign has a chat
    channel (issue #31), a webhook on loopback, told of new entries."""
    referee = auth.create_user(display_name="Referee")
    campaign = make_campaign(db_session, referee=referee, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign)
    ada, bram = chars[0], chars[1]
    for character in chars:
        db_session.get(User, character.user_id).password_hash = accounts.hash_password(PASSWORD)
    turns.post_event(
        session=db_session, campaign=campaign, text="Go.", actor=None, now=NOW,
        tailored=[turns.Tailored(ada.id, "addition", "MKTAILORED")],
    )  # fmt: skip
    mail = MailSettings("http://pbp.test", "k" * 32, "pbp@pbp.test")
    webhooks.add_webhook(
        session=db_session, campaign=campaign, actor=referee, platform="discord",
        url=hooks.url("/chat"), allow_private=True, now=NOW,
    )  # fmt: skip
    later = NOW + timedelta(hours=1)
    shown = hosted_blog.store_entry(
        session=db_session, character=ada, title="MKSHOWN", body_markdown="Out loud.",
        mood="Calm", now=later, mail=mail,
    )  # fmt: skip
    secret = hosted_blog.store_entry(
        session=db_session, character=ada, title="MKHIDDENTITLE", body_markdown="MKHIDDENBODY",
        mood="Brooding", now=later, mail=mail,
    )  # fmt: skip
    hosted_blog.store_note(
        session=db_session, entry=secret, author=bram, body_markdown="MKHIDDENNOTE", now=later
    )
    ada_user = db_session.get(User, ada.user_id)
    for keyword, alt in (("plain", "Ada, plain"), (HIDDEN_ICON[1], HIDDEN_ICON[0])):
        icon = icons.add_icon(
            session=db_session, campaign=campaign, actor=ada_user, character_slug=ada.slug,
            keyword=keyword, alt=alt, data=picture(), now=later,
        )  # fmt: skip
    secret.icon_id = icon.id  # the shown entry has Ada's default, "plain"
    db_session.add(secret)
    for form, target_id, fields in (
        ("entry", 0, {"title": "MKDRAFTENTRYTITLE", "mood": "Calm", "body": "MKDRAFTENTRY"}),
        ("note", shown.id, {"body": "MKDRAFTNOTE", "stance": "none"}),
    ):
        saved_drafts.save_draft(
            session=db_session, user=ada_user, campaign=campaign, form=form,
            target_id=target_id, fields=fields, now=later,
        )  # fmt: skip
    hidden_entries.hide_entry(
        session=db_session,
        actor=db_session.get(User, ada.user_id),
        campaign=campaign,
        entry_id=secret.id,
        now=later + timedelta(minutes=5),
    )
    for member in db_session.exec(select(Membership).where(Membership.campaign_id == campaign.id)):
        set_preference(session=db_session, membership=member, preference="digest", on=True)
    notifications.queue_digests(
        session=db_session, settings=mail, campaign=campaign, now=NOW + timedelta(days=1)
    )
    db_session.commit()
    readers = {
        "other player": db_session.get(User, bram.user_id),
        "stranger": auth.create_user(display_name="Stranger"),
        "visitor": None,
    }
    values = {
        "slug": [campaign.slug],
        "character": [c.slug for c in chars],
        "character_id": [c.id for c in chars],
        "entry_id": [secret.id, shown.id],
        "number": [1],
        "key": ["entry", f"note-{shown.id}"],
    }
    return campaign, referee, readers, values


def _everything(app, client, auth, db_session, user, values) -> dict[str, str]:
    auth.logout()
    headers = {}
    if user is not None:
        auth.login(user)
        headers["Authorization"] = "Bearer " + make_token(db_session, user)
        db_session.commit()
    seen = {}
    for url in every_get_url(app, values):
        page = client.get(url, headers=headers if url.startswith("/api/") else {})
        assert page.status_code in (200, 302, 400, 401, 403, 404, 409, 422), (url, page.status_code)
        if page.mimetype in ("application/zip", "application/epub+zip"):  # archive, book
            with zipfile.ZipFile(io.BytesIO(page.get_data())) as archive:
                seen[url] = "\n".join(
                    archive.read(n).decode("utf-8", "replace") for n in archive.namelist()
                )
        else:
            seen[url] = page.get_data(as_text=True)
    return seen


def _searched(app, client, db_session, user, slug, words) -> dict[str, int]:
    """Issue #33 item 2: the hits of the search page and the API's search for each word, as
    `user` (logged in by `_everything`)."""
    headers = {}
    if user is not None:
        headers["Authorization"] = "Bearer " + make_token(db_session, user)
        db_session.commit()
    urls = search_urls(app, slug, words)
    assert len(urls) == 2 * len(words)
    return {
        u: hit_count(client.get(u, headers=headers if u.startswith("/api/") else {})) for u in urls
    }


def _mail_to(db_session, user) -> str:
    rows = db_session.exec(select(OutboxMessage).where(OutboxMessage.recipient == user.email))
    return "\n".join(f"{m.subject}\n{m.body_text}\n{m.body_html or ''}" for m in rows)


def test_no_route_or_mail_shows_a_hidden_entry_to_anyone_else(
    app, auth, client, db_session, hidden
):
    campaign, _, readers, values = hidden
    for who, user in readers.items():
        seen = _everything(app, client, auth, db_session, user, values)
        assert any(u.startswith("/api/") for u in seen) and any(".atom" in u for u in seen)
        assert "MKSHOWN" in "\n".join(seen.values()), who  # the reads did read entries
        # The part of the event tailored for Ada is hers and the referee's (issue #33 item 3:
        # the book and its EPUB show it to no one else either).
        for needle in (*HIDDEN, *DRAFTS, "MKTAILORED"):
            for url, text in seen.items():
                assert needle not in text, f"the {who} meets {needle} at {url}"
        for url, text in seen.items():
            for needle in HIDDEN_ICON if not lists_icons(url) else ():
                assert needle not in text, f"the {who} meets the hidden entry's icon at {url}"
        assert "Ada, plain" in "\n".join(seen.values()), who  # icons were shown: the control
        words = (*HIDDEN, *DRAFTS, *HIDDEN_ICON, "MKTAILORED")
        searched = _searched(app, client, db_session, user, campaign.slug, words)
        assert not any(searched.values()), (who, searched)
        assert all(_searched(app, client, db_session, user, campaign.slug, ["MKSHOWN"]).values())
        if user is not None and who == "other player":
            mail = _mail_to(db_session, user)
            assert "MKSHOWN" in mail  # the digest was sent, with the shown entry
            assert not any(needle in mail for needle in HIDDEN + DRAFTS + HIDDEN_ICON), mail


def test_no_chat_channel_is_told_of_a_hidden_entry(db_session, hidden, hooks, tmp_path):
    """The entry was public for five minutes, and its chat post queued then; by delivery
    its author had hidden it, and the post is not made (issue #31 item 2)."""
    fetcher = Fetcher(allow_private=True, connect_timeout=2, read_timeout=2, total_timeout=3)
    sender = Sender(lambda: db_session, FolderTransport(tmp_path / "mail"), background=False,
                    channels={"chat": ChatChannel(fetcher)})  # fmt: skip
    sender.send(now=NOW + timedelta(days=1))
    chat = hooks.texts()
    assert "MKSHOWN" in chat  # the webhook was told of the shown entry
    assert not any(needle in chat for needle in HIDDEN), chat


def test_the_referee_still_reads_the_hidden_entry(app, auth, client, db_session, hidden):
    """The test above can fail: the referee's channels carry every marker."""
    campaign, referee, _, values = hidden
    everything = "\n".join(_everything(app, client, auth, db_session, referee, values).values())
    for needle in (*HIDDEN, *HIDDEN_ICON):  # the icon beside the hidden entry, on its page
        assert needle in everything, needle
    everything += _mail_to(db_session, referee)
    for needle in DRAFTS:  # a player's draft is theirs alone, even to the referee
        assert needle not in everything, needle
    words = (*HIDDEN, "MKTAILORED")  # the referee reads every tailored text
    assert all(_searched(app, client, db_session, referee, campaign.slug, words).values())


def test_the_writer_reads_their_own_drafts(app, auth, client, db_session, hidden):
    """The draft markers can be met where a draft would show: Ada's write form, her note
    form on the shown entry and the API."""
    campaign, _, _, values = hidden
    first = db_session.exec(
        select(Character).where(Character.campaign_id == campaign.id).order_by(Character.id)
    ).first()  # Ada, the first character make_characters makes
    ada = db_session.get(User, first.user_id)
    seen = _everything(app, client, auth, db_session, ada, values)
    for needle in DRAFTS:
        assert any(needle in text for url, text in seen.items() if not url.startswith("/api/"))
        assert any(needle in text for url, text in seen.items() if url.startswith("/api/"))
    # Drafts are never found (not even by their writer: they are not the story yet); the
    # text tailored for Ada is, by her.
    assert not any(_searched(app, client, db_session, ada, campaign.slug, DRAFTS).values())
    assert all(_searched(app, client, db_session, ada, campaign.slug, ["MKTAILORED"]).values())
