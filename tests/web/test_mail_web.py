"""The unsubscribe pages: a GET that only asks, the RFC 8058 one-click POST, and the whole
flow from a List-Unsubscribe header received over real SMTP to the next event."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from sqlmodel import Session, select

from pbp.models import Membership, OutboxMessage, Turn
from pbp.services.mail import notifications
from pbp.services.mail import preferences as mail_preferences
from pbp.services.mail.send import SmtpTransport, send_pending
from pbp.services.mail.settings import MailSettings
from pbp.web import mail as mail_web
from tests.factories import make_campaign, make_characters
from tests.services.mail.test_outbox import NOW, user_of
from tests.smtpserver import SmtpServer


@pytest.fixture
def app(app):
    if "mail" not in app.blueprints:  # until create_app registers it
        app.register_blueprint(mail_web.bp)
    # The once-per-app schema check opens its own connection; on SQLite, inside a POST
    # (BEGIN IMMEDIATE) it would wait for the test's open transaction. The suite's
    # migrations already ran: mark the check done, as the first GET would.
    app.extensions["pbp_schema_ok"] = True
    return app


@pytest.fixture
def settings(app):
    return MailSettings.from_config(app.config)


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, name="Salon <of> Knives")
    chars = make_characters(db_session, campaign, names=("Ada", "Bram"))
    db_session.commit()
    return campaign, chars


def member(db_session, campaign, character) -> Membership:
    db_session.expire_all()
    return db_session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == character.user_id
        )
    ).one()


def token_for(app, membership, preference="events") -> str:
    return mail_preferences.unsubscribe_token(
        secret_key=app.config["SECRET_KEY"], membership_id=membership.id, preference=preference
    )


def test_get_only_asks(app, client, db_session, game):
    campaign, (ada, _bram) = game
    token = token_for(app, member(db_session, campaign, ada))
    page = client.get(f"/mail/unsubscribe/{token}")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "Salon &lt;of&gt; Knives" in text and "new events" in text
    assert 'value="unsubscribe"' in text
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert mail_preferences.wants(member(db_session, campaign, ada), "events") is True


def test_one_click_post_unsubscribes_without_a_csrf_token(app, client, db_session, game):
    campaign, (ada, bram) = game
    token = token_for(app, member(db_session, campaign, ada))
    for _ in range(2):  # clients may repeat it
        page = client.post(
            f"/mail/unsubscribe/{token}",
            data="List-Unsubscribe=One-Click",
            content_type="application/x-www-form-urlencoded",
        )
        assert page.status_code == 200 and "gets no more emails" in page.get_data(as_text=True)
    assert mail_preferences.wants(member(db_session, campaign, ada), "events") is False
    assert mail_preferences.wants(member(db_session, campaign, ada), "challenges") is True
    assert mail_preferences.wants(member(db_session, campaign, bram), "events") is True


def test_undo_subscribes_again(app, client, db_session, game):
    campaign, (ada, _bram) = game
    token = token_for(app, member(db_session, campaign, ada), "digest")
    mail_preferences.set_preference(
        session=db_session,
        membership=member(db_session, campaign, ada),
        preference="digest",
        on=True,
    )
    db_session.commit()
    client.post(f"/mail/unsubscribe/{token}", data={"action": "unsubscribe"})
    assert mail_preferences.wants(member(db_session, campaign, ada), "digest") is False
    page = client.post(f"/mail/unsubscribe/{token}", data={"action": "subscribe"})
    assert "again" in page.get_data(as_text=True)
    assert mail_preferences.wants(member(db_session, campaign, ada), "digest") is True


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_damaged_token_is_a_clear_400(client, method):
    page = getattr(client, method)("/mail/unsubscribe/eyJub3QiOiJ2YWxpZCJ9.forged")
    assert page.status_code == 400
    assert "damaged" in page.get_data(as_text=True)


def test_unsubscribe_flow_from_a_received_mail(app, client, db_session, connection, settings, game):
    """Deliver an event over SMTP, follow its List-Unsubscribe header with the one-click
    POST, and the next event no longer goes to that player (but still to the other)."""
    campaign, (ada, bram) = game

    def post_turn(number):
        turn = Turn(campaign_id=campaign.id, number=number, opened_at=NOW)
        db_session.add(turn)
        db_session.flush()
        from pbp.models import Event

        db_session.add(Event(turn_id=turn.id, text=f"Event {number}"))
        db_session.flush()
        queued = notifications.queue_event_notifications(
            session=db_session, settings=settings, turn=turn, now=NOW
        )
        db_session.commit()
        return queued

    post_turn(1)
    with SmtpServer() as smtp:
        send_pending(
            engine_or_sessionmaker=lambda: Session(
                bind=connection, join_transaction_mode="create_savepoint"
            ),
            transport=SmtpTransport(smtp.host, smtp.port, timeout=10),
            now=NOW,
        )
        (received,) = smtp.received_by(user_of(db_session, ada).email)
    message = received.message
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    url = urlsplit(message["List-Unsubscribe"].strip("<>"))
    assert f"{url.scheme}://{url.netloc}" == app.config["PBP_BASE_URL"]
    page = client.post(url.path, data={"List-Unsubscribe": "One-Click"})
    assert page.status_code == 200
    second = post_turn(2)
    assert [r.recipient for r in second] == [user_of(db_session, bram).email]
    assert db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "event")).all()
