"""Delivery against a real SMTP server (aiosmtpd, in-process): one connection per batch,
tailoring on the wire, failures, outages, and a sender killed between two messages."""

from __future__ import annotations

import email
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from datetime import timedelta
from email.policy import default as default_policy
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.errors import ConfigError
from pbp.models import (
    Blog,
    Campaign,
    Character,
    Entry,
    Membership,
    OutboxMessage,
    utcnow,
)
from pbp.services.mail import notifications
from pbp.services.mail import send as mail_send
from pbp.services.mail.outbox import outbox_counts
from pbp.services.mail.send import FolderTransport, Sender, SmtpTransport, send_pending
from tests.factories import drop_committed_campaign, make_campaign, make_characters
from tests.services.mail.test_outbox import NOW, outbox, post_event, user_of
from tests.smtpserver import SmtpServer

LATER = NOW + mail_send.LEASE + timedelta(seconds=1)


@pytest.fixture
def sessions(connection):
    """Sessions for the sender on the test's connection: its commits release savepoints,
    and the test's transaction still rolls everything back."""
    return lambda: Session(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, name=f"Salon {uuid.uuid4().hex[:6]}")
    chars = make_characters(db_session, campaign)
    return campaign, chars


def transport(server: SmtpServer, **kw) -> SmtpTransport:
    return SmtpTransport(host=server.host, port=server.port, timeout=10, **kw)


def send(sessions, server, now=NOW, batch_key=None):
    return send_pending(
        engine_or_sessionmaker=sessions, transport=transport(server), now=now, batch_key=batch_key
    )


def statuses(session, campaign) -> Counter:
    return Counter(r.status for r in outbox(session, campaign))


# -- delivery ---------------------------------------------------------------------------------


def test_an_event_goes_out_as_one_batch_over_one_connection(db_session, sessions, smtp, game):
    campaign, chars = game
    turn = post_event(db_session, campaign, "The lamps go out.")
    db_session.commit()
    report = send(sessions, smtp, batch_key=notifications.event_batch_key(turn))
    assert len(report.sent) == 6 and report.connections == 1
    assert smtp.connection_count() == 1
    assert {m.connection for m in smtp.messages} == {0}
    assert sorted(smtp.recipients()) == sorted(user_of(db_session, c).email for c in chars)
    assert statuses(db_session, campaign) == {"sent": 6}
    assert all(r.sent_at == NOW and r.attempts == 1 for r in outbox(db_session, campaign))
    assert send(sessions, smtp).claimed == 0 and smtp.message_count() == 6


def test_headers_and_parts_on_the_wire(db_session, sessions, smtp, game):
    campaign, (ada, *_rest) = game
    post_event(db_session, campaign, "Fog & <mist>.")
    db_session.commit()
    send(sessions, smtp)
    row = next(
        r for r in outbox(db_session, campaign) if r.recipient == user_of(db_session, ada).email
    )
    (received,) = smtp.received_by(row.recipient)
    message = received.message
    assert message["Message-ID"] == row.message_id
    assert message["Subject"] == f"[{campaign.name}] Turn 1: a new event for Ada"
    assert message["From"] == "pbp <pbp@pbp.test>" and message["To"] == row.recipient
    assert message["List-Unsubscribe"].startswith("<http://pbp.test/mail/unsubscribe/")
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["Auto-Submitted"] == "auto-generated"
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "Fog & <mist>." in text and "Fog &amp; &lt;mist&gt;." in html
    assert f"http://pbp.test/c/{campaign.slug}/turns/1" in text
    assert received.mail_from == "pbp@pbp.test"


def test_tailored_events_on_the_wire(db_session, sessions, smtp, game):
    campaign, chars = game
    secrets = {c.name: f"SECRET-{c.name.upper()}-{i}" for i, c in enumerate(chars[:3])}
    tailored = [
        (c, "addition" if i % 2 else "replacement", secrets[c.name])
        for i, c in enumerate(chars[:3])
    ]
    post_event(db_session, campaign, "EVERYONE", tailored)
    db_session.commit()
    send(sessions, smtp)
    for character in chars:
        (received,) = smtp.received_by(user_of(db_session, character).email)
        raw = received.data.decode()
        message = received.message
        bodies = "".join(part.get_content() for part in message.iter_parts())
        for name, secret in secrets.items():
            if name == character.name:
                assert secret in bodies
            else:
                assert secret not in bodies and secret not in raw, (character.name, name)


def test_a_5xx_for_one_address_fails_that_one_and_delivers_the_rest(
    db_session, sessions, smtp, game
):
    campaign, (ada, *rest) = game
    post_event(db_session, campaign)
    db_session.commit()
    bad = user_of(db_session, ada).email
    smtp.refuse_recipient(bad, "550 5.1.1 mailbox unavailable")
    report = send(sessions, smtp)
    assert len(report.failed) == 1 and len(report.sent) == 5 and smtp.connection_count() == 1
    failed = next(r for r in outbox(db_session, campaign) if r.recipient == bad)
    assert failed.status == "failed" and failed.last_error.startswith("550")
    assert smtp.received_by(bad) == [] and smtp.message_count() == 5
    counts = outbox_counts(session=db_session, campaign_id=campaign.id)
    assert counts == {"queued": 0, "sending": 0, "sent": 5, "failed": 1}
    assert send(sessions, smtp, now=LATER + timedelta(days=3)).claimed == 0  # never retried


def test_a_4xx_for_one_address_is_retried_later(db_session, sessions, smtp, game):
    campaign, (ada, *rest) = game
    post_event(db_session, campaign)
    db_session.commit()
    busy = user_of(db_session, ada).email
    smtp.refuse_recipient(busy, "450 4.2.1 mailbox busy")
    report = send(sessions, smtp)
    assert len(report.deferred) == 1 and len(report.sent) == 5
    row = next(r for r in outbox(db_session, campaign) if r.recipient == busy)
    assert row.status == "queued" and row.next_attempt_at == NOW + mail_send.backoff(1)
    smtp.refuse.clear()
    assert send(sessions, smtp, now=NOW + timedelta(seconds=30)).claimed == 0
    assert send(sessions, smtp, now=NOW + timedelta(minutes=1)).sent == [row.id]
    assert len(smtp.received_by(busy)) == 1


def test_backoff_grows_and_is_capped():
    assert [mail_send.backoff(n).total_seconds() for n in (1, 2, 3, 4)] == [60, 120, 240, 480]
    assert mail_send.backoff(40) == mail_send.BACKOFF_MAX


# -- outages and crashes ----------------------------------------------------------------------


def test_server_down_then_up_delivers_each_message_exactly_once(db_session, sessions, game):
    campaign, chars = game
    server = SmtpServer()  # not started: the mail server is down
    post_event(db_session, campaign)
    db_session.commit()
    report = send(sessions, server)
    assert report.sent == [] and len(report.deferred) == 6 and "cannot connect" in report.error
    rows = outbox(db_session, campaign)
    assert {(r.status, r.attempts) for r in rows} == {("queued", 1)}
    assert all(r.last_error and r.next_attempt_at == NOW + timedelta(minutes=1) for r in rows)
    assert outbox_counts(session=db_session, campaign_id=campaign.id)["queued"] == 6
    with server:
        assert send(sessions, server, now=NOW + timedelta(seconds=59)).claimed == 0
        report = send(sessions, server, now=NOW + timedelta(minutes=1))
        assert len(report.sent) == 6 and server.connection_count() == 1
        assert send(sessions, server, now=LATER + timedelta(days=1)).claimed == 0
    assert Counter(server.recipients()) == Counter(user_of(db_session, c).email for c in chars)
    assert set(Counter(server.recipients()).values()) == {1}
    assert {m.message["Message-ID"] for m in server.messages} == {r.message_id for r in rows}
    assert statuses(db_session, campaign) == {"sent": 6}


def test_server_dying_mid_batch_keeps_the_rest_queued(db_session, sessions, smtp, game):
    campaign, chars = game
    post_event(db_session, campaign)
    db_session.commit()
    hold = smtp.hold_after(2)
    result = {}
    sender = threading.Thread(target=lambda: result.update(report=send(sessions, smtp)))
    sender.start()
    assert hold.engaged.wait(10)
    smtp.stop()  # the server goes away in the middle of the batch
    sender.join(10)
    report = result["report"]
    assert len(report.sent) == 2 and len(report.deferred) == 4 and report.error
    assert statuses(db_session, campaign) == {"sent": 2, "queued": 4}
    smtp.start()
    smtp.release()
    assert len(send(sessions, smtp, now=NOW + timedelta(minutes=1)).sent) == 4
    assert sorted(smtp.recipients()) == sorted(user_of(db_session, c).email for c in chars)


def test_a_stale_claim_is_retried_but_a_live_one_is_not(db_session, sessions, smtp, game):
    campaign, _chars = game
    post_event(db_session, campaign)
    db_session.commit()
    row = outbox(db_session, campaign)[0]
    db_session.execute(
        sa.update(OutboxMessage)
        .where(OutboxMessage.id == row.id)
        .values(status="sending", attempts=1, next_attempt_at=NOW + mail_send.LEASE)
    )
    db_session.commit()
    assert row.id not in send(sessions, smtp, now=NOW).sent
    assert send(sessions, smtp, now=LATER).sent == [row.id]
    assert len(smtp.received_by(row.recipient)) == 1


def test_a_message_that_keeps_failing_is_given_up(db_session, sessions, game):
    campaign, _chars = game
    post_event(db_session, campaign)
    db_session.execute(sa.update(OutboxMessage).values(attempts=mail_send.MAX_ATTEMPTS - 1))
    db_session.commit()
    report = send(sessions, SmtpServer())  # down
    assert len(report.failed) == 6
    assert all(
        r.status == "failed" and r.last_error.startswith("gave up after")
        for r in outbox(db_session, campaign)
    )


# -- right after commit -----------------------------------------------------------------------


def test_sent_right_after_commit_and_not_before(db_session, sessions, smtp, game):
    campaign, _chars = game
    sender = Sender(sessions, transport(smtp))
    turn = post_event(db_session, campaign)
    sender.send_after_commit(
        session=db_session, batch_key=notifications.event_batch_key(turn), background=False
    )
    assert smtp.message_count() == 0
    db_session.commit()
    assert smtp.message_count() == 6 and smtp.connection_count() == 1


def test_nothing_is_sent_for_a_rolled_back_change(db_session, sessions, smtp, game):
    campaign, _chars = game
    db_session.commit()
    sender = Sender(sessions, transport(smtp))
    post_event(db_session, campaign)
    sender.send_after_commit(session=db_session, background=False)
    db_session.rollback()
    db_session.commit()  # a later, unrelated commit does not run the dropped send
    assert smtp.message_count() == 0 and outbox(db_session, campaign) == []


def test_sent_in_the_background_after_commit(db_session, sessions, smtp, game):
    campaign, _chars = game
    sender = Sender(sessions, transport(smtp))
    turn = post_event(db_session, campaign)
    sender.send_after_commit(session=db_session, batch_key=notifications.event_batch_key(turn))
    db_session.commit()
    for thread in sender.threads:
        thread.join(10)
    assert smtp.message_count() == 6


# -- real commits: other processes and threads -------------------------------------------------


@pytest.fixture
def committed(engine):
    """A campaign with six players and a queued event, committed for real so another
    process can send it; deleted afterwards."""
    with Session(engine, expire_on_commit=False) as session:
        campaign = make_campaign(session, name=f"Committed {uuid.uuid4().hex[:8]}")
        chars = make_characters(session, campaign)
        turn = post_event(session, campaign)
        emails = [user_of(session, c).email for c in chars]
        session.commit()
    yield campaign, turn, emails
    drop_committed_campaign(engine, campaign)


KILLABLE_SENDER = """
import sys
from datetime import datetime
from pbp.db import make_engine
from pbp.services.mail.send import SmtpTransport, send_pending
url, port, now, batch = sys.argv[1:]
send_pending(
    engine_or_sessionmaker=make_engine(url),
    transport=SmtpTransport("127.0.0.1", int(port), timeout=60),
    now=datetime.fromisoformat(now),
    batch_key=batch,
)
"""


@pytest.mark.slow
def test_sender_killed_between_two_messages_then_restarted(engine, database_url, committed, smtp):
    campaign, turn, emails = committed
    hold = smtp.hold_after(1)  # stall the second message until the sender is dead
    args = [database_url, str(smtp.port), NOW.isoformat(), notifications.event_batch_key(turn)]
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLABLE_SENDER, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert hold.engaged.wait(60), "the sender never reached the second message"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    smtp.release()
    with Session(engine) as session:
        assert statuses(session, campaign) == {"sent": 1, "sending": 5}
    # A sender started at once leaves the dead one's claims alone until the lease ends...
    assert (
        send_pending(engine_or_sessionmaker=engine, transport=transport(smtp), now=NOW).claimed == 0
    )
    # ...then sends only what was not delivered.
    report = send_pending(engine_or_sessionmaker=engine, transport=transport(smtp), now=LATER)
    assert len(report.sent) == 5
    assert Counter(smtp.recipients()) == Counter(emails)
    with Session(engine) as session:
        rows = outbox(session, campaign)
        assert statuses(session, campaign) == {"sent": 6}
    received_ids = sorted(m.message["Message-ID"] for m in smtp.messages)
    assert received_ids == sorted(r.message_id for r in rows)


def test_two_senders_at_once_deliver_each_message_once(engine, committed, smtp):
    campaign, turn, emails = committed
    barrier = threading.Barrier(2)
    reports = []

    def run():
        barrier.wait()
        reports.append(
            send_pending(engine_or_sessionmaker=engine, transport=transport(smtp), now=NOW)
        )

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(sum((r.sent for r in reports), [])) == sorted(
        r.id for r in outbox(Session(engine), campaign)
    )
    assert Counter(smtp.recipients()) == Counter(emails)


# -- transports and configuration -------------------------------------------------------------


def test_without_smtp_messages_go_to_the_instance_outbox_folder(
    db_session, sessions, tmp_path, game
):
    campaign, _chars = game
    folder = mail_send.transport_from_config({"SMTP_URL": None}, tmp_path)
    assert folder == FolderTransport(tmp_path / "outbox")
    post_event(db_session, campaign, "Fog & <mist>.")
    db_session.commit()
    report = send_pending(engine_or_sessionmaker=sessions, transport=folder, now=NOW)
    files = sorted((tmp_path / "outbox").glob("*.eml"))
    assert len(report.sent) == 6 and len(files) == 6
    parsed = [email.message_from_bytes(f.read_bytes(), policy=default_policy) for f in files]
    assert {m["Message-ID"] for m in parsed} == {r.message_id for r in outbox(db_session, campaign)}
    # A resend (say after a crash before the commit) rewrites the same file.
    db_session.execute(sa.update(OutboxMessage).values(status="queued"))
    db_session.commit()
    send_pending(engine_or_sessionmaker=sessions, transport=folder, now=NOW)
    assert sorted((tmp_path / "outbox").glob("*")) == files


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://mail.test", SmtpTransport("mail.test", 25, "plain")),
        ("smtp://mail.test:2525", SmtpTransport("mail.test", 2525, "plain")),
        (
            "smtp://me%40x.test:p%3Ass@mail.test?starttls=1&timeout=5",
            SmtpTransport("mail.test", 587, "starttls", "me@x.test", "p:ss", 5.0),
        ),
        ("smtps://u:p@mail.test", SmtpTransport("mail.test", 465, "tls", "u", "p")),
    ],
)
def test_smtp_url(url, expected, tmp_path):
    assert mail_send.transport_from_config({"SMTP_URL": url}, tmp_path) == expected


@pytest.mark.parametrize(
    "url",
    ["http://mail.test", "smtp://", "smtps://h?starttls=1", "smtp://h:port", "smtp://h?timeout=x"],
)
def test_bad_smtp_url_is_a_config_error(url, tmp_path):
    with pytest.raises(ConfigError):
        mail_send.transport_from_config({"SMTP_URL": url}, tmp_path)


def test_scheduler_jobs_queue_digests_and_sweep(committed, engine, app, smtp):
    """The two jobs as the worker runs them: on the app's engine, with its SMTP_URL."""
    campaign, _turn, emails = committed
    yesterday = utcnow() - timedelta(days=1)
    with Session(engine, expire_on_commit=False) as session:
        session.get(Campaign, campaign.id).status = "running"
        reader = session.exec(
            select(Membership).where(
                Membership.campaign_id == campaign.id, Membership.role == "player"
            )
        ).first()
        reader.notify = {"digest": True}
        session.add(reader)
        character = session.exec(
            select(Character).where(Character.campaign_id == campaign.id)
        ).first()
        blog = session.exec(select(Blog).where(Blog.character_id == character.id)).one()
        session.add(
            Entry(
                blog_id=blog.id,
                character_id=character.id,
                source_id="digest-1",
                title="Yesterday's news",
                first_seen_at=yesterday,
                content_hash="h",
            )
        )
        session.commit()
    app.config["SMTP_URL"] = f"smtp://{smtp.host}:{smtp.port}?timeout=10"
    assert notifications.queue_daily_digests(app) == 1
    report = mail_send.send_outbox(app)
    assert len(report.sent) == 7 and smtp.connection_count() == 1
    digests = [m for m in smtp.messages if "Digest" in m.message["Subject"]]
    assert len(digests) == 1 and "Yesterday's news" in digests[0].data.decode()
    assert notifications.queue_daily_digests(app) == 1  # the same day's digest, not a second one
    assert mail_send.send_outbox(app).claimed == 0


def test_the_apps_sender_writes_to_the_instance_outbox_after_commit(app, db_session, game):
    """The embedded default (no SMTP_URL): the demo's mail lands in <instance>/outbox/."""
    campaign, _chars = game
    sender = mail_send.sender_for_app(app)
    folder = Path(app.instance_path) / "outbox"
    assert sender.transport == FolderTransport(folder) and sender.background is False
    turn = post_event(db_session, campaign)
    sender.send_after_commit(session=db_session, batch_key=notifications.event_batch_key(turn))
    assert not folder.exists()
    db_session.commit()
    assert len(list(folder.glob("*.eml"))) == 6
    assert outbox_counts(session=db_session, campaign_id=campaign.id)["sent"] == 6
