"""SSRF for issue #31's addresses: a chat webhook is typed by a referee, a push endpoint
sent by a browser (or anyone pretending to be one), and pbp POSTs to both. They take the
feeds' guard (adapters/ssrf.py, in the style of tests/adapters/test_ssrf.py): a private
address is refused when the webhook is added, and again on the connected address of every
post, so a name that resolves elsewhere later (DNS rebinding) or a redirect reaches nothing.
The loopback servers count what reached them: nothing may."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest
from sqlmodel import select

from adapters.fetch import Fetcher
from pbp.errors import UserError
from pbp.models import ChatWebhook, OutboxMessage
from pbp.services.mail import chat, push, webhooks
from pbp.services.mail.chat_send import ChatChannel
from pbp.services.mail.push_send import PushChannel, vapid_key
from pbp.services.mail.send import FolderTransport, Sender
from pbp.services.mail.settings import MailSettings
from tests.adapters.test_ssrf import PRIVATE_URLS, PUBLIC_IP, fake_resolver
from tests.channelserver import Browser, HookServer
from tests.factories import make_campaign, make_user

NOW = datetime(2026, 5, 1, 18, 0, tzinfo=UTC)
MAIL = MailSettings("http://pbp.test", "k" * 32, "pbp <pbp@pbp.test>")


@pytest.fixture
def server():
    with HookServer() as hooks:
        yield hooks


@pytest.fixture
def game(db_session):
    rita = make_user(db_session, "Rita")
    return make_campaign(db_session, referee=rita), rita


def strict() -> Fetcher:
    return Fetcher(allow_private=False, connect_timeout=2, read_timeout=2, total_timeout=3)


def deliver(db_session, tmp_path, **channels) -> None:
    sender = Sender(
        lambda: db_session, FolderTransport(tmp_path), background=False, channels=channels
    )
    sender.send(now=NOW)


@pytest.mark.parametrize(("url", "reason"), PRIVATE_URLS)
def test_adding_a_webhook_on_a_private_address_is_refused(db_session, game, url, reason):
    campaign, rita = game
    with pytest.raises(UserError, match=reason):
        webhooks.add_webhook(session=db_session, campaign=campaign, actor=rita,
                             platform="discord", url=url, now=NOW)  # fmt: skip
    assert db_session.exec(select(ChatWebhook)).all() == []


@pytest.mark.parametrize("url", ["ftp://hooks.example/x", "file:///etc/passwd", "gopher://x/"])
def test_only_http_and_https_webhooks(db_session, game, url):
    campaign, rita = game
    with pytest.raises(UserError):
        webhooks.add_webhook(session=db_session, campaign=campaign, actor=rita,
                             platform="slack", url=url, now=NOW)  # fmt: skip


def _queue_one_post(db_session, campaign) -> None:
    chat.queue_chat(session=db_session, settings=MAIL, campaign=campaign, kind="chat_entry",
                    key="t:", text="hello", link="", now=NOW)  # fmt: skip
    db_session.commit()


def test_a_loopback_webhook_is_never_contacted(db_session, game, server, tmp_path):
    campaign, rita = game
    # Allowed when added (as in development), then posted by a production fetcher.
    webhooks.add_webhook(session=db_session, campaign=campaign, actor=rita, platform="discord",
                         url=server.url("/hook"), allow_private=True, now=NOW)  # fmt: skip
    _queue_one_post(db_session, campaign)
    deliver(db_session, tmp_path, chat=ChatChannel(strict()))
    assert server.posts == []
    db_session.expire_all()
    hook = db_session.exec(select(ChatWebhook)).one()
    assert hook.failures == 1 and "loopback" in (hook.last_error or "")
    # the same post goes when private addresses are allowed (so the test can fail)
    hook.retry_at = None
    db_session.add(hook)
    row = db_session.exec(select(OutboxMessage)).one()
    row.next_attempt_at = NOW
    db_session.add(row)
    db_session.commit()
    deliver(db_session, tmp_path, chat=ChatChannel(Fetcher(allow_private=True)))
    assert len(server.posts) == 1


def test_dns_rebinding_is_caught_when_posting(
    monkeypatch: pytest.MonkeyPatch, db_session, game, server, tmp_path
):
    """The name is public when the referee adds it and loopback when pbp posts to it."""
    campaign, rita = game
    answers = iter([[PUBLIC_IP], ["127.0.0.1"], ["127.0.0.1"]])
    real = socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):
        if host == "rebind.example":
            return fake_resolver({host: next(answers)})(host, port)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = f"http://rebind.example:{server.port}/hook"
    webhooks.add_webhook(session=db_session, campaign=campaign, actor=rita, platform="discord",
                         url=url, now=NOW)  # fmt: skip  # looks public when added
    _queue_one_post(db_session, campaign)
    deliver(db_session, tmp_path, chat=ChatChannel(strict()))
    assert server.posts == []
    db_session.expire_all()
    assert "loopback" in (db_session.exec(select(ChatWebhook)).one().last_error or "")


def test_a_webhook_redirecting_elsewhere_is_not_followed(db_session, game, tmp_path):
    campaign, rita = game
    with HookServer() as public, HookServer() as inside:
        public.answer("/hook", status=307, headers={"Location": inside.url("/admin")})
        webhooks.add_webhook(session=db_session, campaign=campaign, actor=rita,
                             platform="discord", url=public.url("/hook"), allow_private=True,
                             now=NOW)  # fmt: skip
        _queue_one_post(db_session, campaign)
        deliver(db_session, tmp_path, chat=ChatChannel(Fetcher(allow_private=True)))
        assert len(public.posts) == 1 and inside.posts == []
    db_session.expire_all()
    assert "307" in (db_session.exec(select(ChatWebhook)).one().last_error or "")


def test_a_push_endpoint_on_a_private_address_is_never_contacted(
    db_session, game, server, tmp_path
):
    campaign, rita = game
    browser = Browser()
    device = push.subscribe(session=db_session, user=rita, endpoint=server.url("/push"),
                            p256dh=browser.p256dh, auth=browser.auth_secret, now=NOW)  # fmt: skip
    from pbp.services.mail.queue import queue_message

    queue_message(session=db_session, settings=MAIL, kind="event", dedupe_key="p:1",
                  recipient=rita.email, subject="t", text='{"title": "t"}', now=NOW,
                  channel="push", push_subscription_id=device.id)  # fmt: skip
    db_session.commit()
    channel = PushChannel(strict(), vapid_key(tmp_path), "mailto:pbp@pbp.test")
    deliver(db_session, tmp_path, push=channel)
    assert server.posts == []
    db_session.expire_all()
    row = db_session.exec(select(OutboxMessage).where(OutboxMessage.channel == "push")).one()
    assert row.status == "queued" and "loopback" in (row.last_error or "")
