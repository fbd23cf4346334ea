"""Issue #31 items 1 and 2 through the pages and the API: one event reaches a member's
phone (Web Push), the campaign's chat channel and everyone's mailbox at the same moment.

Everything is real: the referee's forms, a member's API calls, an SMTP server
(tests/smtpserver.py), a push service and a Discord-style webhook on loopback
(tests/channelserver.py). The push service cannot read a push: the test holds the
subscription's private key and auth secret, as a browser does, and decrypts it.
"""

from __future__ import annotations

import stat
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import select

from pbp.models import ChatWebhook, OutboxMessage, PushSubscription
from tests.channelserver import Browser, HookServer, vapid_claims
from tests.helpers import wire
from tests.smtpserver import SmtpServer
from tests.web.test_mail_promises import NOW, make_game

HOOK = "/api/webhooks/99/token-that-is-a-secret"
PUSH = "/push/v2/device-abc"


@pytest.fixture
def app(app):
    wire(app)
    app.config["PBP_CLOCK"] = lambda: NOW + timedelta(hours=1)
    app.extensions["pbp_schema_ok"] = True
    return app


@pytest.fixture
def servers():
    with SmtpServer() as smtp, HookServer() as hooks, HookServer() as pushes:
        pushes.answer(PUSH, status=201)
        yield smtp, hooks, pushes


def _set_up(app, db_session, client, servers):
    smtp, hooks, pushes = servers
    app.config["SMTP_URL"] = f"smtp://{smtp.host}:{smtp.port}?timeout=10"
    game = make_game(db_session, client)
    browser = Browser()
    added = game.call("Ada", "POST", "/me/push-devices", json={
        "endpoint": pushes.url(PUSH), "p256dh": browser.p256dh,
        "auth": browser.auth_secret, "label": "Ada's phone",
    })  # fmt: skip
    assert added.status_code == 201, added.get_data(as_text=True)
    chosen = game.call("Ada", "PUT", f"/campaigns/{game.slug}/me/push", json={"events": True})
    assert chosen.status_code == 200 and chosen.get_json()["events"] is True
    game.login("referee")
    page = game.auth.post(
        f"/c/{game.slug}/referee/chat", {"platform": "discord", "url": hooks.url(HOOK)}
    )
    assert page.status_code == 302, page.get_data(as_text=True)[:800]
    return game, browser


def test_one_event_reaches_push_chat_and_mail_within_a_second(app, db_session, client, servers):
    smtp, hooks, pushes = servers
    game, browser = _set_up(app, db_session, client, servers)
    assert game.auth.post(f"/c/{game.slug}/referee/close").status_code == 302
    assert game.auth.post(f"/c/{game.slug}/referee/resolve").status_code == 302
    ada = game.characters["Ada"]
    page = game.auth.post(f"/c/{game.slug}/referee/event", {
        "text": "The duel at dawn.", "expected_number": "2",
        f"tailor_{ada.id}": "MKFORADA only Ada knows the pistol is empty.",
    })  # fmt: skip
    assert page.status_code == 302
    # the mail
    (mail,) = [
        m for m in smtp.received_by(game.users["Ada"].email) if "Turn 2" in m.message["Subject"]
    ]
    assert "The duel at dawn." in mail.message.get_body(("plain",)).get_content()
    # the push: decrypted with the subscription's own keys, and signed with pbp's VAPID key
    pushed = [(p, browser.read(p)) for p in pushes.to(PUSH)]
    ((push_post, push),) = [(p, d) for p, d in pushed if "Turn 2" in d["title"]]
    assert "The duel at dawn." in push["body"] and "MKFORADA" in push["body"]  # hers
    assert push["url"].endswith(f"/c/{game.slug}/turns/2")
    claims, key = vapid_claims(push_post)
    assert claims["aud"] == f"http://127.0.0.1:{pushes.port}"
    assert claims["sub"].startswith("mailto:") and key
    assert push_post.headers["TTL"] and push_post.headers["Urgency"] == "normal"
    # the chat channel: the general text, never Ada's own
    (chat,) = [p for p in hooks.to(HOOK) if "Turn 2 has begun" in p.json["content"]]
    assert "The duel at dawn." in chat.json["content"]
    assert "MKFORADA" not in hooks.texts()
    # at the same moment
    times = {"mail": mail.received_at, "push": push_post.at, "chat": chat.at}
    spread = max(times.values()) - min(times.values())
    first = min(times.values())
    each = ", ".join(f"{k} +{(t - first) * 1000:.1f} ms" for k, t in times.items())
    print(f"\nissue #31: one event's mail, push and chat within {spread * 1000:.1f} ms ({each})")
    assert spread < 1.0


def test_a_push_service_answering_410_loses_the_subscription(app, db_session, client, servers):
    _smtp, _hooks, pushes = servers
    game, _browser = _set_up(app, db_session, client, servers)
    pushes.answer(PUSH, status=410)
    assert game.auth.post(f"/c/{game.slug}/referee/close").status_code == 302
    assert game.auth.post(f"/c/{game.slug}/referee/resolve").status_code == 302  # results
    assert len(pushes.to(PUSH)) == 1
    db_session.expire_all()
    assert db_session.exec(select(PushSubscription)).all() == []
    (row,) = db_session.exec(select(OutboxMessage).where(OutboxMessage.channel == "push"))
    assert row.status == "failed" and "410" in (row.last_error or "")


def test_the_vapid_key_is_made_once_and_kept_private(app, client, db_session, auth):
    user = auth.create_user()
    auth.login(user)
    first = client.get("/account/devices")
    assert first.status_code == 200
    path = Path(app.instance_path) / "vapid_private.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    before = path.read_bytes()
    client.get("/account/devices")
    assert path.read_bytes() == before


def test_the_service_worker_covers_the_site_under_the_csp(client):
    answer = client.get("/sw.js")
    assert answer.status_code == 200
    assert answer.mimetype == "text/javascript"
    assert answer.headers["Service-Worker-Allowed"] == "/"
    assert "script-src 'self'" in answer.headers["Content-Security-Policy"]
    assert b"showNotification" in answer.data


def test_the_notifications_page_offers_push_per_kind_and_this_device(app, db_session, client):
    game = make_game(db_session, client)
    game.login("Ada")
    page = client.get(f"/c/{game.slug}/me/mail").get_data(as_text=True)
    assert "<h1>Notifications from" in page
    assert 'value="push:events"' in page and 'value="events"' in page
    assert "Notify me on this device" in page and "data-push-key=" in page
    saved = game.auth.post(f"/c/{game.slug}/me/mail", {"on": ["push:events", "digest"]})
    assert saved.status_code == 302
    prefs = game.call("Ada", "GET", f"/campaigns/{game.slug}/me/push").get_json()
    assert prefs["events"] is True and prefs["forum"] is False
    mail = game.call("Ada", "GET", f"/campaigns/{game.slug}/me/mail").get_json()
    assert mail["events"] is False and mail["digest"] is True  # each channel apart


def test_pages_never_show_a_webhooks_address(app, db_session, client, servers):
    _smtp, hooks, _pushes = servers
    game, _ = _set_up(app, db_session, client, servers)
    for url in (f"/c/{game.slug}/referee/", f"/c/{game.slug}/referee/chat"):
        text = client.get(url).get_data(as_text=True)
        assert "Chat channel" in text and "token-that-is-a-secret" not in text
    assert "Discord — 127.0.0.1" in client.get(f"/c/{game.slug}/referee/chat").get_data(
        as_text=True
    )
    listed = game.call("referee", "GET", f"/campaigns/{game.slug}/chat-webhooks").get_json()
    assert listed["webhooks"][0]["host"] == "127.0.0.1"
    assert "token-that-is-a-secret" not in str(listed)
    hook_id = listed["webhooks"][0]["id"]
    gone = game.call("referee", "DELETE", f"/campaigns/{game.slug}/chat-webhooks/{hook_id}")
    assert gone.status_code == 200 and gone.get_json()["webhooks"] == []
    assert db_session.exec(select(ChatWebhook)).all() == []


def test_a_failing_webhook_shows_on_the_dashboard(app, db_session, client, servers):
    _smtp, hooks, _pushes = servers
    game, _ = _set_up(app, db_session, client, servers)
    hooks.answer(HOOK, status=404)
    assert game.auth.post(f"/c/{game.slug}/referee/close").status_code == 302
    assert len(hooks.to(HOOK)) == 1  # tried once, at the close
    board = client.get(f"/c/{game.slug}/referee/").get_data(as_text=True)
    assert "chat channel (127.0.0.1) is failing" in board and "404" in board


def test_only_the_referee_adds_a_chat_channel(app, db_session, client, servers):
    _smtp, hooks, _pushes = servers
    game = make_game(db_session, client)
    answer = game.call("Ada", "POST", f"/campaigns/{game.slug}/chat-webhooks",
                       json={"platform": "discord", "url": hooks.url(HOOK)})  # fmt: skip
    assert answer.status_code == 403
    assert db_session.exec(select(ChatWebhook)).all() == []
