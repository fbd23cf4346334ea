"""Issue #31 item 1: every kind of notification that can mail can push, chosen per kind
and per channel; a push says what its mail says, to the same person."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlmodel import select

from pbp.models import Membership, OutboxMessage, User
from pbp.services.mail import notifications, push
from pbp.services.mail.preferences import PREFERENCE_OF, PREFERENCES, save_preferences
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import turns
from tests.factories import make_campaign, make_characters

NOW = datetime(2026, 5, 1, 18, 0, tzinfo=UTC)
MAIL = MailSettings("http://pbp.test", "k" * 32, "pbp <pbp@pbp.test>")


def test_every_kind_that_mails_under_a_preference_can_push():
    assert set(PREFERENCE_OF) <= set(push.PUSH_PREFERENCE_OF)
    assert set(push.PUSH_PREFERENCE_OF.values()) <= set(PREFERENCES)
    assert push.PUSH_PREFERENCE_OF["forum_post"] == "forum"


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo"))
    ada = chars[0]
    ada_user = db_session.get(User, ada.user_id)
    push.subscribe(session=db_session, user=ada_user, endpoint="https://push.example/ada",
                   p256dh="k", auth="a", now=NOW)  # fmt: skip
    member = db_session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == ada.user_id
        )
    ).one()
    return campaign, ada, member, ada_user


def _rows(db_session, email):
    db_session.expire_all()
    rows = db_session.exec(select(OutboxMessage).where(OutboxMessage.recipient == email))
    return sorted(row.channel for row in rows)


@pytest.mark.parametrize(
    ("chosen", "channels"),
    [
        ([], []),
        (["events"], ["mail"]),
        (["push:events"], ["push"]),
        (["events", "push:events"], ["mail", "push"]),
    ],
    ids=["neither", "mail only", "push only", "both"],
)
def test_each_channel_is_chosen_apart(db_session, game, chosen, channels):
    campaign, ada, member, ada_user = game
    save_preferences(session=db_session, membership=member, chosen=chosen,
                     keys=["events", "push:events"])  # fmt: skip
    turns.post_event(session=db_session, campaign=campaign, text="The ball.", actor=None,
                     now=NOW, mail=MAIL)  # fmt: skip
    assert _rows(db_session, ada_user.email) == channels


def test_a_push_says_what_the_mail_says_without_greeting_or_footer(db_session, game):
    campaign, ada, member, ada_user = game
    save_preferences(session=db_session, membership=member, chosen=["push:events"],
                     keys=["push:events"])  # fmt: skip
    turn = turns.post_event(session=db_session, campaign=campaign, text="The ball begins.",
                            actor=None, now=NOW, mail=MAIL)  # fmt: skip
    (row,) = db_session.exec(select(OutboxMessage).where(OutboxMessage.channel == "push"))
    data = json.loads(row.body_text)
    assert data["title"] == f"[{campaign.name}] Turn 1: a new event for Ada"
    assert data["body"].startswith("The ball begins. Turn 1 has begun.")
    assert "unsubscribe" not in data["body"].lower() and "Ada," not in data["body"]
    assert data["url"] == f"http://pbp.test/c/{campaign.slug}/turns/1"
    assert row.dedupe_key.startswith(notifications.event_batch_key(turn))  # the mails' batch


def test_a_reminder_is_pushed_to_a_player_who_has_turn_news_pushed(db_session, game):
    campaign, ada, member, ada_user = game
    save_preferences(session=db_session, membership=member, chosen=["push:events"],
                     keys=["events", "push:events"])  # fmt: skip
    turn = turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None,
                            now=NOW)  # fmt: skip
    notifications.queue_reminder(session=db_session, settings=MAIL, campaign=campaign,
                                 turn=turn, character=ada, player=ada_user, now=NOW)  # fmt: skip
    assert _rows(db_session, ada_user.email) == ["mail", "push"]  # the mail always goes
