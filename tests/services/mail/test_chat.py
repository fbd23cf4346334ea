"""Issue #31 item 2: chat channels. What is posted (public events only), how (each
platform's body, Discord's 2,000 characters and 5 requests per 2 s), and what a failing
webhook does (backs off, shows, never holds up a mail). Real HTTP: a webhook on loopback
(tests/channelserver.py); real SMTP (tests/smtpserver.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from adapters.fetch import Fetcher
from pbp.models import ChatWebhook, OutboxMessage, utcnow
from pbp.services.mail import chat, chat_send, webhooks
from pbp.services.mail.send import Sender, SmtpTransport
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import referee, turns
from tests.channelserver import HookServer
from tests.factories import make_campaign, make_characters, make_user
from tests.helpers import session_on
from tests.smtpserver import SmtpServer

NOW = datetime(2026, 5, 1, 18, 0, tzinfo=UTC)
MAIL = MailSettings("http://pbp.test", "k" * 32, "pbp <pbp@pbp.test>")
HOOK = "/api/webhooks/1/secret-token"


@pytest.fixture
def hooks():
    with HookServer() as server:
        yield server


def fetcher() -> Fetcher:
    return Fetcher(allow_private=True, connect_timeout=2, read_timeout=2, total_timeout=3)


@pytest.fixture
def game(db_session):
    rita = make_user(db_session, "Rita")
    campaign = make_campaign(db_session, referee=rita, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo"))
    return campaign, chars, rita


def add_hook(db_session, campaign, actor, url, platform="discord", thread_id=None) -> int:
    return webhooks.add_webhook(
        session=db_session,
        campaign=campaign,
        actor=actor,
        platform=platform,
        url=url,
        thread_id=thread_id,
        allow_private=True,
        now=NOW,
    ).id


def chat_rows(db_session) -> list[OutboxMessage]:
    db_session.expire_all()
    return list(
        db_session.exec(
            select(OutboxMessage).where(OutboxMessage.channel == "chat").order_by(OutboxMessage.id)  # type: ignore[arg-type]
        )
    )


# -- splitting -----------------------------------------------------------------------------


def test_a_text_past_discords_limit_is_split_at_words_and_each_part_fits():
    text = " ".join(f"word{i}" for i in range(700))  # about 5,000 characters
    parts = chat.split_text(text, 2000, "https://pbp.test/t/1")
    assert len(parts) == 3 and all(len(p) <= 2000 for p in parts)
    assert " ".join(parts) == text  # nothing lost, nothing cut inside a word


def test_a_text_too_long_for_three_messages_ends_with_its_link():
    text = "x " * 5000
    parts = chat.split_text(text, 2000, "https://pbp.test/t/1")
    assert len(parts) == chat.MAX_PARTS and all(len(p) <= 2000 for p in parts)
    assert parts[-1].endswith("… https://pbp.test/t/1")


def test_each_platform_gets_its_own_body():
    discord = chat_send.payload("discord", "@everyone <b>hi</b> & bye")
    assert b'"allowed_mentions": {"parse": []}' in discord  # no one is pinged
    assert b'"content": "@everyone <b>hi</b> & bye"' in discord
    slack = chat_send.payload("slack", "@everyone <b>hi</b> & bye")
    assert b'"text": "@everyone &lt;b&gt;hi&lt;/b&gt; &amp; bye"' in slack
    assert b'"text": "plain"' in chat_send.payload("matrix", "plain")


# -- what is posted ------------------------------------------------------------------------


def test_a_turn_opens_in_chat_with_the_general_text_only(db_session, game, hooks):
    campaign, chars, rita = game
    add_hook(db_session, campaign, rita, hooks.url(HOOK))
    tailored = [turns.Tailored(character_id=chars[0].id, mode="addition", text="MKTAILORED")]
    turn = referee.open_turn(
        session=db_session, campaign=campaign, actor=rita, now=NOW, text="The ball begins.",
        tailored=tailored, mail=MAIL,
    )  # fmt: skip
    (row,) = chat_rows(db_session)
    assert row.dedupe_key.startswith(f"event:{turn.id}:")  # in the event mails' batch
    assert "The ball begins." in row.body_text and "MKTAILORED" not in row.body_text
    assert f"http://pbp.test/c/{campaign.slug}/turns/1" in row.body_text


def test_close_and_resolve_are_posted(db_session, game, hooks):
    campaign, _chars, rita = game
    referee.open_turn(session=db_session, campaign=campaign, actor=rita, now=NOW, text="Go.")
    add_hook(db_session, campaign, rita, hooks.url(HOOK), platform="slack")
    later = NOW + timedelta(days=1)
    referee.close(session=db_session, campaign=campaign, actor=rita, now=later, mail=MAIL)
    referee.resolve(session=db_session, campaign=campaign, actor=rita, now=later, mail=MAIL)
    texts = [row.body_text for row in chat_rows(db_session)]
    assert texts[0].startswith("Turn 1 of") and "is closed" in texts[0]
    assert texts[1].startswith("Turn 1 of") and "is resolved" in texts[1]


def test_a_scene_webhook_hears_only_its_scene(db_session, hooks):
    from tests.services.forum.tables import make_table, write

    table = make_table(db_session)
    first = write(db_session, table, table.gm, "Fog on the docks.", title="Docks")
    other = write(db_session, table, table.gm, "Rain at the mill.", title="Mill")
    add_hook(db_session, table.campaign, table.gm, hooks.url(HOOK), thread_id=first.thread_id)
    write(db_session, table, table.ada_user, "I look around.", thread=_thread(db_session, first))
    write(db_session, table, table.ada_user, "I run.", thread=_thread(db_session, other))
    write(db_session, table, table.ada_user, "MKWHISPERX", thread=_thread(db_session, first),
          audience="whisper", recipient_ids=(table.bram_user.id,))  # fmt: skip
    texts = "\n".join(row.body_text for row in chat_rows(db_session))
    assert "I look around." in texts
    assert "I run." not in texts and "MKWHISPERX" not in texts


def _thread(db_session, post):
    from pbp.models.forum import Thread

    return db_session.get(Thread, post.thread_id)


# -- delivery ------------------------------------------------------------------------------


def _sender(connection, smtp) -> Sender:
    return Sender(
        lambda: session_on(connection),
        SmtpTransport(smtp.host, smtp.port, timeout=5),
        background=False,
        channels={"chat": chat_send.ChatChannel(fetcher())},
    )


def test_a_post_reaches_the_webhook_as_discord_takes_it(db_session, connection, game, hooks):
    campaign, _chars, rita = game
    add_hook(db_session, campaign, rita, hooks.url(HOOK))
    with SmtpServer() as smtp:
        sender = _sender(connection, smtp)
        referee.open_turn(session=db_session, campaign=campaign, actor=rita, now=NOW,
                          text="The ball begins.", mail=MAIL, sender=sender)  # fmt: skip
        db_session.commit()
        (post,) = hooks.to(HOOK)
        assert post.json["content"].startswith("Turn 1 has begun in")
        assert post.json["allowed_mentions"] == {"parse": []}
        assert post.headers["Content-Type"] == "application/json"
        assert {r.status for r in chat_rows(db_session)} == {"sent"}
        assert len(smtp.messages) == 3  # the mails went too, in the same batch


def test_a_failing_webhook_backs_off_shows_and_never_holds_up_the_mail(
    db_session, connection, game, hooks
):
    campaign, _chars, rita = game
    hook_id = add_hook(db_session, campaign, rita, hooks.url(HOOK))
    hooks.answer(HOOK, status=500, delay=1.0)  # slow, then failing
    with SmtpServer() as smtp:
        sender = _sender(connection, smtp)
        referee.open_turn(session=db_session, campaign=campaign, actor=rita, now=NOW,
                          text="The ball begins.", mail=MAIL, sender=sender)  # fmt: skip
        db_session.commit()
        assert len(smtp.messages) == 3
        mailed = max(m.received_at for m in smtp.messages)
        assert mailed < hooks.to(HOOK)[0].at  # the mail did not wait for the webhook
    db_session.expire_all()
    hook = db_session.get(ChatWebhook, hook_id)
    assert hook.failures == 1 and "500" in (hook.last_error or "")
    assert hook.retry_at is not None and hook.retry_at > NOW
    (row,) = chat_rows(db_session)
    assert row.status == "queued" and row.next_attempt_at >= hook.retry_at - timedelta(seconds=1)
    shown = webhooks.list_webhooks(session=db_session, campaign=campaign)
    assert shown[0].failing and "500" in (shown[0].last_error or "")
    # While it backs off, its posts wait untried; once past, they go and it is well again.
    hooks.answer(HOOK, status=204)
    report = sender.send(now=NOW + timedelta(seconds=10))
    assert report.sent == [] and len(hooks.to(HOOK)) == 1
    report = sender.send(now=hook.retry_at + timedelta(seconds=1))
    assert report.sent == [row.id] and len(hooks.to(HOOK)) == 2
    db_session.expire_all()
    assert db_session.get(ChatWebhook, hook_id).failures == 0


def test_a_429_waits_as_long_as_discord_asks(db_session, connection, game, hooks):
    campaign, _chars, rita = game
    hook_id = add_hook(db_session, campaign, rita, hooks.url(HOOK))
    hooks.answer(HOOK, status=429, headers={"Retry-After": "30"})
    with SmtpServer() as smtp:
        referee.open_turn(session=db_session, campaign=campaign, actor=rita, now=NOW,
                          text="Go.", mail=MAIL, sender=_sender(connection, smtp))  # fmt: skip
        db_session.commit()
    db_session.expire_all()
    hook = db_session.get(ChatWebhook, hook_id)
    waits = (hook.retry_at - utcnow()).total_seconds()  # sent at the commit, on the real clock
    assert 25 < waits <= 30


def test_no_more_than_five_posts_in_two_seconds_to_one_discord_webhook(
    db_session, connection, game, hooks
):
    campaign, _chars, rita = game
    add_hook(db_session, campaign, rita, hooks.url(HOOK))
    for n in range(7):
        chat.queue_chat(session=db_session, settings=MAIL, campaign=campaign, kind="chat_entry",
                        key=f"t{n}:", text=f"post {n}", link="", now=NOW)  # fmt: skip
    db_session.commit()
    clock = [1000.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    channel = chat_send.ChatChannel(
        fetcher(), windows=chat_send.RateWindow(clock=lambda: clock[0]), sleep=sleep
    )
    sender = Sender(lambda: session_on(connection), SmtpTransport("127.0.0.1", 1), False,
                    channels={"chat": channel})  # fmt: skip
    report = sender.send(now=NOW)
    assert len(report.sent) == 7 and len(hooks.to(HOOK)) == 7
    assert slept == [pytest.approx(2.0)]  # the sixth waited for the window; no more
