"""Queueing, tailoring, rendering, preferences and unsubscribe tokens (no server needed)."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp import templating
from pbp.errors import NotFound, UserError
from pbp.models import Entry, Event, Invite, Membership, Note, OutboxMessage, Turn
from pbp.services.mail import notifications
from pbp.services.mail import preferences as mail_preferences
from pbp.services.mail import queue as mail_queue
from pbp.services.mail.notifications import EventText
from pbp.services.mail.outbox import outbox_counts, outbox_messages
from pbp.services.mail.queue import SUBJECT_MAX
from pbp.services.mail.send import build_email
from pbp.services.mail.settings import MailSettings
from tests.factories import make_campaign, make_characters, make_user

NOW = datetime(2026, 3, 14, 18, 0, tzinfo=UTC)
SETTINGS = MailSettings(
    base_url="http://pbp.test",
    secret_key="mail-test-secret-" + "k" * 32,
    mail_from="pbp <pbp@pbp.test>",
)


def post_event(session, campaign, general="A storm.", tailored=None, number=1) -> Turn:
    """A turn with its events (tailored: [(character, mode, text)]) and its mails queued."""
    turn = Turn(campaign_id=campaign.id, number=number, opened_at=NOW)
    session.add(turn)
    session.flush()
    if general is not None:
        session.add(Event(turn_id=turn.id, mode="all", text=general))
    for character, mode, text in tailored or ():
        session.add(Event(turn_id=turn.id, character_id=character.id, mode=mode, text=text))
    session.flush()
    notifications.queue_event_notifications(session=session, settings=SETTINGS, turn=turn, now=NOW)
    return turn


def outbox(session, campaign=None) -> list[OutboxMessage]:
    session.expire_all()
    query = select(OutboxMessage).order_by(OutboxMessage.id)
    if campaign is not None:
        query = query.where(OutboxMessage.campaign_id == campaign.id)
    return list(session.exec(query))


def membership_of(session, campaign, user) -> Membership:
    return session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == user.id
        )
    ).one()


def user_of(session, character):
    from pbp.models import User

    return session.get(User, character.user_id)


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, name="Salon of Knives")
    chars = make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo"))
    return campaign, chars


# -- queueing ---------------------------------------------------------------------------------


def test_one_message_per_player_character_none_for_the_referee(db_session, game):
    campaign, chars = game
    turn = post_event(db_session, campaign, "The lamps go out.")
    rows = outbox(db_session, campaign)
    assert sorted(r.recipient for r in rows) == sorted(user_of(db_session, c).email for c in chars)
    assert all(r.kind == "event" and r.status == "queued" for r in rows)
    assert all(r.dedupe_key.startswith(notifications.event_batch_key(turn)) for r in rows)
    first = rows[0]
    assert first.subject.startswith("[Salon of Knives] Turn 1")
    assert "http://pbp.test/c/salon-of-knives/turns/1" in first.body_text
    assert 'href="http://pbp.test/c/salon-of-knives/turns/1"' in first.body_html


def test_the_event_and_the_reminder_say_when_the_turn_closes_in_the_campaigns_zone(
    db_session, game
):
    """A player who reads the mail should not have to open the site to learn the deadline."""
    campaign, (ada, *_) = game
    campaign.time_zone = "Europe/Paris"
    deadline = datetime(2026, 3, 15, 19, 0, tzinfo=UTC)  # 20:00 in Paris, in winter
    turn = Turn(campaign_id=campaign.id, number=1, opened_at=NOW, deadline=deadline)
    db_session.add(turn)
    db_session.flush()
    db_session.add(Event(turn_id=turn.id, mode="all", text="The lamps go out."))
    db_session.flush()
    event, *_ = notifications.queue_event_notifications(
        session=db_session, settings=SETTINGS, turn=turn, now=NOW
    )
    reminder = notifications.queue_reminder(
        session=db_session, settings=SETTINGS, campaign=campaign, turn=turn, character=ada,
        player=user_of(db_session, ada), now=NOW,
    )  # fmt: skip
    for message in (event, reminder):
        assert "closes 2026-03-15 20:00 CET." in message.body_text
        assert "closes 2026-03-15 20:00 CET." in message.body_html
    no_deadline = post_event(db_session, campaign, "No hurry.", number=2)
    assert "closes" not in outbox(db_session, campaign)[-1].body_text
    assert no_deadline.deadline is None


def test_queueing_is_part_of_the_callers_transaction(db_session, game):
    campaign, _chars = game
    with pytest.raises(RuntimeError), db_session.begin_nested():
        post_event(db_session, campaign, "Undone.")
        raise RuntimeError("the turn change fails after queueing")
    assert outbox(db_session, campaign) == []


def test_a_retried_change_queues_nothing_twice(db_session, game):
    campaign, _chars = game
    turn = post_event(db_session, campaign)
    ids = [r.id for r in outbox(db_session, campaign)]
    again = notifications.queue_event_notifications(
        session=db_session, settings=SETTINGS, turn=turn, now=NOW
    )
    assert sorted(r.id for r in again) == ids
    assert [r.id for r in outbox(db_session, campaign)] == ids


def test_a_concurrent_duplicate_returns_the_row_already_queued(db_session, monkeypatch):
    """The unique dedupe_key, not the look-up, is what stops a race: simulate the race by
    hiding the first row from the look-up."""
    kw = dict(session=db_session, settings=SETTINGS, kind="invite", dedupe_key="race:1")
    first = mail_queue.queue_message(**kw, recipient="a@x.test", subject="s", text="t", now=NOW)
    looked_up = []

    def blind_once(session, key):
        looked_up.append(key)
        if len(looked_up) == 1:
            return None
        return session.exec(select(OutboxMessage).where(OutboxMessage.dedupe_key == key)).first()

    monkeypatch.setattr(mail_queue, "_by_key", blind_once)  # where queue_message looks
    second = mail_queue.queue_message(**kw, recipient="a@x.test", subject="s", text="t", now=NOW)
    assert second.id == first.id and len(looked_up) == 2
    assert len(db_session.exec(select(OutboxMessage)).all()) == 1


def test_message_id_and_date_are_fixed_at_queue_time(db_session, game):
    campaign, _chars = game
    post_event(db_session, campaign)
    row = outbox(db_session, campaign)[0]
    assert row.message_id.startswith("<") and row.message_id.endswith("@pbp.test>")
    message = build_email(row)
    assert message["Message-ID"] == row.message_id
    assert message["Date"].datetime == NOW
    assert build_email(row).as_bytes() == message.as_bytes()  # the same bytes on a retry


# -- tailoring --------------------------------------------------------------------------------


def test_each_character_gets_only_the_event_meant_for_them(db_session, game):
    campaign, (ada, bram, cleo) = game
    post_event(
        db_session,
        campaign,
        "GENERAL: a masked ball.",
        [(ada, "addition", "ADA-SECRET: you hold the key."), (bram, "replacement", "BRAM-ONLY")],
    )
    rows = {r.recipient: r for r in outbox(db_session, campaign)}
    body = {c.name: rows[user_of(db_session, c).email] for c in (ada, bram, cleo)}
    assert "GENERAL" in body["Ada"].body_text and "ADA-SECRET" in body["Ada"].body_text
    assert "For Ada alone" in body["Ada"].body_text
    assert "BRAM-ONLY" in body["Bram"].body_text and "GENERAL" not in body["Bram"].body_text
    assert "GENERAL" in body["Cleo"].body_text
    secrets = {"Ada": "ADA-SECRET", "Bram": "BRAM-ONLY"}
    for name, row in body.items():
        for owner, secret in secrets.items():
            if owner != name:
                assert secret not in row.body_text + row.body_html + row.subject, (name, owner)


def test_only_tailored_events_reach_only_their_characters(db_session, game):
    campaign, (ada, _bram, _cleo) = game
    post_event(db_session, campaign, None, [(ada, "replacement", "Only Ada knows.")])
    rows = outbox(db_session, campaign)
    assert [r.recipient for r in rows] == [user_of(db_session, ada).email]


def test_blank_general_text_counts_as_none(db_session, game):
    campaign, (ada, _bram, _cleo) = game
    post_event(db_session, campaign, "  ", [(ada, "addition", "Ada's part.")])
    rows = outbox(db_session, campaign)
    assert [r.recipient for r in rows] == [user_of(db_session, ada).email]
    assert "For Ada alone" not in rows[0].body_text


def test_event_text_for_modes():
    general = Event(turn_id=1, text="all")
    extra = Event(turn_id=1, character_id=1, mode="addition", text="plus")
    other = Event(turn_id=1, character_id=2, mode="replacement", text="instead")
    events = [general, extra, other]
    assert notifications.event_text_for(events, 1) == EventText("all", "plus")
    assert notifications.event_text_for(events, 2) == EventText(None, "instead")
    assert notifications.event_text_for(events, 3) == EventText("all", None)
    assert notifications.event_text_for([extra], 3) is None


# -- escaping ---------------------------------------------------------------------------------


def test_names_and_event_text_are_escaped_in_html_and_raw_in_text(db_session):
    campaign = make_campaign(db_session, name="Tea & <Treachery>")
    (char,) = make_characters(db_session, campaign, names=('Ada "<b>Bold</b>" & Co',))
    post_event(db_session, campaign, "<script>alert(1)</script>\n\nSecond & last.")
    row = outbox(db_session, campaign)[0]
    assert "<script>" not in row.body_html and "&lt;script&gt;" in row.body_html
    assert "<b>Bold</b>" not in row.body_html and "&lt;b&gt;Bold&lt;/b&gt;" in row.body_html
    assert "Tea &amp; &lt;Treachery&gt;" in row.body_html
    assert "<p>Second &amp; last.</p>" in row.body_html
    assert "<script>alert(1)</script>" in row.body_text and "&lt;" not in row.body_text
    assert 'Ada "<b>Bold</b>" & Co' in row.body_text
    assert row.subject == '[Tea & <Treachery>] Turn 1: a new event for Ada "<b>Bold</b>" & Co'


def test_no_header_injection_through_names(db_session):
    campaign = make_campaign(db_session, name="Line\r\nBreak")
    (char,) = make_characters(db_session, campaign, names=("Eve\r\nBcc: victim@evil.test",))
    post_event(db_session, campaign)
    row = outbox(db_session, campaign)[0]
    assert "\n" not in row.subject and "\r" not in row.subject
    message = build_email(row)
    assert message["Bcc"] is None
    head = message.as_string().split("\n\n", 1)[0]
    assert not [line for line in head.splitlines() if line.lower().startswith("bcc")]
    parsed = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    assert parsed["Bcc"] is None and parsed["To"] == row.recipient
    assert message["Subject"] == "[Line Break] Turn 1: a new event for Eve Bcc: victim@evil.test"


def test_header_text():
    assert mail_queue.header_text("a\r\nb\tc\x00d\u2028e") == "a b c d e"
    assert len(mail_queue.header_text("x" * 1000)) == SUBJECT_MAX
    assert mail_queue.header_text("  spaced   out ") == "spaced out"


def test_feed_links_only_as_web_links():
    web_url = templating.environment().filters["web_url"]  # what the mail templates use
    assert web_url("https://blog.test/1") == "https://blog.test/1"
    assert web_url("javascript:alert(1)") == ""
    assert web_url(None) == ""


# -- preferences ------------------------------------------------------------------------------


def test_preference_defaults():
    member = Membership(campaign_id=1, user_id=1, role="player")
    assert mail_preferences.preferences(member) == {
        "events": True,
        "digest": False,
        "notes_on_mine": True,
        "notes_as_mine": True,
        "replies_to_mine": True,
        "challenges": True,
        "judging": False,
        "forum": True,
        "mentions": True,
    }


def test_players_who_turned_events_off_get_none(db_session, game):
    campaign, (ada, bram, cleo) = game
    member = membership_of(db_session, campaign, user_of(db_session, bram))
    mail_preferences.set_preference(
        session=db_session, membership=member, preference="events", on=False
    )
    post_event(db_session, campaign)
    recipients = {r.recipient for r in outbox(db_session, campaign)}
    assert user_of(db_session, bram).email not in recipients and len(recipients) == 2


def test_unknown_preference_is_a_user_error(db_session, game):
    campaign, (ada, *_rest) = game
    member = membership_of(db_session, campaign, user_of(db_session, ada))
    with pytest.raises(UserError):
        mail_preferences.set_preference(
            session=db_session, membership=member, preference="spam", on=True
        )


# -- unsubscribe tokens -----------------------------------------------------------------------


def test_list_unsubscribe_headers_carry_a_signed_one_click_url(db_session, game):
    campaign, _chars = game
    post_event(db_session, campaign)
    row = outbox(db_session, campaign)[0]
    url = row.headers["List-Unsubscribe"].strip("<>")
    assert url.startswith("http://pbp.test/mail/unsubscribe/")
    assert row.headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert row.headers["List-Id"] == "<salon-of-knives.pbp.test>"
    assert url in row.body_text and url in row.body_html


def test_unsubscribe_token_round_trip(db_session, game):
    campaign, (ada, *_rest) = game
    member = membership_of(db_session, campaign, user_of(db_session, ada))
    token = mail_preferences.unsubscribe_token(
        secret_key=SETTINGS.secret_key, membership_id=member.id, preference="events"
    )
    sub = mail_preferences.read_unsubscribe(
        session=db_session, secret_key=SETTINGS.secret_key, token=token
    )
    assert (sub.membership.id, sub.preference, sub.on) == (member.id, "events", True)
    for _ in range(2):  # repeating it is harmless
        mail_preferences.apply_unsubscribe(
            session=db_session, secret_key=SETTINGS.secret_key, token=token
        )
    assert mail_preferences.wants(member, "events") is False
    assert mail_preferences.wants(member, "challenges") is True  # only that kind
    mail_preferences.apply_unsubscribe(
        session=db_session, secret_key=SETTINGS.secret_key, token=token, subscribe=True
    )
    assert mail_preferences.wants(member, "events") is True


@pytest.mark.parametrize("mangle", ["tamper", "other-key", "garbage"])
def test_forged_tokens_are_refused(db_session, game, mangle):
    campaign, (ada, *_rest) = game
    member = membership_of(db_session, campaign, user_of(db_session, ada))
    token = mail_preferences.unsubscribe_token(
        secret_key=SETTINGS.secret_key, membership_id=member.id, preference="events"
    )
    if mangle == "tamper":
        forged = mail_preferences.unsubscribe_token(
            secret_key="x", membership_id=member.id + 1, preference="e"
        )
        token = forged.split(".")[0] + "." + token.split(".")[1]
    elif mangle == "other-key":
        token = mail_preferences.unsubscribe_token(
            secret_key="another-site-" + "z" * 32, membership_id=member.id, preference="events"
        )
    else:
        token = "not-a-token"
    with pytest.raises(UserError, match="damaged"):
        mail_preferences.apply_unsubscribe(
            session=db_session, secret_key=SETTINGS.secret_key, token=token
        )
    assert mail_preferences.wants(member, "events") is True


def test_token_for_a_deleted_membership_is_not_found(db_session):
    token = mail_preferences.unsubscribe_token(
        secret_key=SETTINGS.secret_key, membership_id=987654, preference="events"
    )
    with pytest.raises(NotFound):
        mail_preferences.read_unsubscribe(
            session=db_session, secret_key=SETTINGS.secret_key, token=token
        )


# -- counts for the referee -------------------------------------------------------------------


def test_outbox_counts_per_campaign(db_session, game):
    campaign, _chars = game
    other = make_campaign(db_session, name="Elsewhere")
    make_characters(db_session, other, names=("Zed",))
    post_event(db_session, campaign)
    post_event(db_session, other)
    rows = outbox(db_session, campaign)
    rows[0].status, rows[0].last_error = "failed", "550 no such user"
    rows[1].status = "sent"
    db_session.flush()
    counts = outbox_counts(session=db_session, campaign_id=campaign.id)
    assert counts == {"queued": 1, "sending": 0, "sent": 1, "failed": 1}
    failed = outbox_messages(session=db_session, campaign_id=campaign.id, status="failed")
    assert [m.last_error for m in failed] == ["550 no such user"]


# -- the other mails --------------------------------------------------------------------------


def _entry(session, character, title, seen, url="https://blog.test/e"):
    from pbp.models import Blog

    blog = session.exec(select(Blog).where(Blog.character_id == character.id)).one()
    entry = Entry(
        blog_id=blog.id,
        character_id=character.id,
        source_id=f"{title}-{seen.isoformat()}",
        url=url,
        title=title,
        first_seen_at=seen,
        content_hash="h",
    )
    session.add(entry)
    session.flush()
    return entry


def test_notes_on_my_entry_notify_the_entrys_player_not_the_author(db_session, game):
    campaign, (ada, bram, cleo) = game
    entry = _entry(db_session, ada, "My <great> plan", NOW)
    note = Note(entry_id=entry.id, source_id="n1", author_character_id=bram.id, body_html="Yes!")
    own = Note(entry_id=entry.id, source_id="n2", author_character_id=ada.id)
    db_session.add_all([note, own])
    db_session.flush()
    row = notifications.queue_note_notification(
        session=db_session, settings=SETTINGS, entry=entry, notes=[note, own], now=NOW
    )
    assert row.recipient == user_of(db_session, ada).email and row.kind == "note"
    assert "Bram left a note" in row.body_text and "My <great> plan" in row.body_text
    assert "- Bram: Yes!" in row.body_text and "Ada:" not in row.body_text
    assert f"/c/salon-of-knives/ada/{entry.id}" in row.body_text
    assert "My &lt;great&gt; plan" in row.body_html
    assert (
        notifications.queue_note_notification(
            session=db_session, settings=SETTINGS, entry=entry, notes=[own], now=NOW
        )
        is None
    )


def test_many_notes_on_one_entry_make_one_message_listing_them(db_session, game):
    campaign, (ada, bram, cleo) = game
    entry = _entry(db_session, ada, "Plan", NOW)
    notes = [
        Note(entry_id=entry.id, source_id=f"n{i}", author_character_id=who.id, body_html=text)
        for i, (who, text) in enumerate([(bram, "First."), (cleo, "Second."), (bram, "Third.")])
    ]
    db_session.add_all(notes)
    db_session.flush()
    row = notifications.queue_note_notification(
        session=db_session, settings=SETTINGS, entry=entry, notes=notes, now=NOW
    )
    assert row.subject == "[Salon of Knives] 3 notes on Ada's entry"
    assert row.body_text.index("Bram: First.") < row.body_text.index("Cleo: Second.")
    assert "Bram: Third." in row.body_text
    assert row.dedupe_key == f"note:{notes[0].id}"


def test_challenges_notify_the_target(db_session, game):
    campaign, (ada, bram, _cleo) = game
    turn = post_event(db_session, campaign)
    entry = _entry(db_session, bram, "I challenge Ada", NOW)
    entry.turn_id = turn.id
    row = notifications.queue_challenge_notification(
        session=db_session, settings=SETTINGS, entry=entry, target_id=ada.id, now=NOW
    )
    assert row.recipient == user_of(db_session, ada).email
    assert row.subject == "[Salon of Knives] Bram challenges Ada"
    assert "/c/salon-of-knives/turns/1" in row.body_text
    again = notifications.queue_challenge_notification(
        session=db_session, settings=SETTINGS, entry=entry, target_id=ada.id, now=NOW
    )
    assert again.id == row.id


def test_digest_is_off_by_default_and_covers_yesterday_once(db_session, game):
    campaign, (ada, bram, _cleo) = game
    campaign.status = "running"
    yesterday = NOW - timedelta(days=1)
    _entry(db_session, ada, "Yesterday's entry", yesterday)
    _entry(db_session, bram, "Today's entry", NOW)
    _entry(db_session, bram, "Older entry", NOW - timedelta(days=3))
    assert notifications.queue_all_digests(session=db_session, settings=SETTINGS, now=NOW) == []
    member = membership_of(db_session, campaign, user_of(db_session, bram))
    mail_preferences.set_preference(
        session=db_session, membership=member, preference="digest", on=True
    )
    (row,) = notifications.queue_all_digests(session=db_session, settings=SETTINGS, now=NOW)
    assert row.recipient == user_of(db_session, bram).email
    assert "Yesterday's entry" in row.body_text
    assert "Today's entry" not in row.body_text and "Older entry" not in row.body_text
    later = NOW + timedelta(hours=3)
    again = notifications.queue_all_digests(session=db_session, settings=SETTINGS, now=later)
    assert [r.id for r in again] == [row.id]


def test_turn_results_and_final_notice(db_session, game):
    campaign, _chars = game
    turn = post_event(db_session, campaign)
    results = notifications.queue_turn_results(
        session=db_session, settings=SETTINGS, turn=turn, summary="Ada wins <all>.", now=NOW
    )
    assert len(results) == 3 and "Ada wins &lt;all&gt;." in results[0].body_html
    final = notifications.queue_final_notice(
        session=db_session, settings=SETTINGS, campaign=campaign, text="Bram wins.", now=NOW
    )
    assert len(final) == 4  # the players and the referee
    assert all(r.subject == "[Salon of Knives] The game is over" for r in final)


def test_invites_and_password_resets_have_no_unsubscribe(db_session, game):
    campaign, _chars = game
    referee = make_user(db_session, "Rita")
    invite = Invite(
        campaign_id=campaign.id,
        email="new@player.test",
        created_by=referee.id,
        expires_at=NOW + timedelta(days=7),
    )
    db_session.add(invite)
    db_session.flush()
    url = "http://pbp.test/invite/abc"
    row = notifications.queue_invite(
        session=db_session, settings=SETTINGS, invite=invite, url=url, now=NOW
    )
    assert row.recipient == "new@player.test" and url in row.body_text
    assert "Rita invites you" in row.body_text and "List-Unsubscribe" not in row.headers
    reset = notifications.queue_password_reset(
        session=db_session, settings=SETTINGS, user=referee, url="http://pbp.test/r/1", now=NOW
    )
    assert reset.campaign_id is None and "http://pbp.test/r/1" in reset.body_text
    again = notifications.queue_password_reset(
        session=db_session, settings=SETTINGS, user=referee, url="http://pbp.test/r/2", now=NOW
    )
    assert again.id != reset.id  # a new request, a new mail
