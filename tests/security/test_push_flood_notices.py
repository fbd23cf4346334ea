"""Issue #28 item 4: what a flood of pushed deliveries makes pbp tell people.

- "Your note counts as Bram's": 10 deliveries queued 10 such mails to Bram's player. Now
  at most one a day per character, listing the notes
  (pbp.services.mail.notifications.queue_credited_notes).
- The referee's dashboard flags a blog whose deliveries were refused.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlmodel import col, select

from pbp.models import Note, OutboxMessage, User, WebSubSubscription
from pbp.services.noteworthy import blog_settings, play_mail
from tests.factories import make_campaign, make_characters
from tests.services.mail.test_outbox import NOW, SETTINGS, _entry, post_event


def _credited_note(session, entry, author, n: int) -> Note:
    note = Note(
        entry_id=entry.id, source_id=f"pushed-{n}", author_character_id=author.id,
        body_html=f"<p>Note {n}: I support this.</p>", stance="support",
    )  # fmt: skip
    session.add(note)
    session.flush()
    return note


def _credited_mails(session, user: User) -> list[OutboxMessage]:
    return list(
        session.exec(
            select(OutboxMessage)
            .where(OutboxMessage.kind == "credited", OutboxMessage.recipient == user.email)
            .order_by(col(OutboxMessage.id))
        )
    )


def test_ten_deliveries_make_one_identity_mail_a_day_listing_every_note(db_session):
    campaign = make_campaign(db_session, name="Flooded Salon")
    ada, bram, _cleo = make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo"))
    turn = post_event(db_session, campaign)
    entry = _entry(db_session, ada, "Ada's", NOW)
    entry.turn_id = turn.id
    bram_user = db_session.get(User, bram.user_id)

    # Ten deliveries of Ada's feed, each with a new note in Bram's name. After the fifth,
    # a sender takes the day's mail.
    for n in range(10):
        note = _credited_note(db_session, entry, bram, n)
        play_mail.notes_credited(
            session=db_session, mail=SETTINGS, notes=[note], now=NOW + timedelta(minutes=n)
        )
        if n == 4:
            db_session.execute(
                sa.update(OutboxMessage)
                .where(col(OutboxMessage.kind) == "credited")
                .values(status="sent", sent_at=NOW + timedelta(minutes=4))
            )

    today, tomorrow = _credited_mails(db_session, bram_user)
    assert today.subject.endswith("5 notes count as Bram's")
    assert all(f"Note {n}:" in today.body_text for n in range(5))
    assert not any(f"Note {n}:" in today.body_text for n in range(5, 10))
    # The rest wait for the next day's mail, not sent before that day begins.
    assert tomorrow.subject.endswith("5 notes count as Bram's")
    assert all(f"Note {n}:" in tomorrow.body_text for n in range(5, 10))
    assert tomorrow.next_attempt_at == datetime(2026, 3, 15, tzinfo=UTC)

    # Next day, a note before that mail is sent joins it: still one mail that day.
    later = _credited_note(db_session, entry, bram, 10)
    play_mail.notes_credited(
        session=db_session, mail=SETTINGS, notes=[later], now=NOW + timedelta(hours=7)
    )
    assert [m.id for m in _credited_mails(db_session, bram_user)] == [today.id, tomorrow.id]
    db_session.refresh(tomorrow)
    assert tomorrow.subject.endswith("6 notes count as Bram's") and "Note 10:" in tomorrow.body_text


def test_the_dashboard_flags_a_blog_whose_deliveries_were_refused(client, auth, db_session):
    referee = auth.create_user(display_name="Referee")
    campaign = make_campaign(db_session, referee=referee, settings={"opening_turns": 0})
    flooded, quiet = make_characters(db_session, campaign, names=("Ada", "Bram"))
    blogs = []
    for character in (flooded, quiet):
        blog = blog_settings.blog_of(session=db_session, character=character)
        blog.kind, blog.feed_url = "external", f"https://{character.slug}.example/feed/"
        db_session.add(blog)
        blogs.append(blog)
    db_session.flush()
    refused_at = datetime(2026, 7, 1, 8, 30, tzinfo=UTC)
    db_session.add(
        WebSubSubscription(
            blog_id=blogs[0].id, hub_url="https://hub.example/", topic_url=blogs[0].feed_url,
            secret="s" * 64, state="active", expires_at=refused_at + timedelta(days=5),
            usage_day=refused_at.date(), day_refused=12, last_refused_at=refused_at,
            last_refusal="more than 6 deliveries in a minute",
        )
    )  # fmt: skip
    db_session.commit()
    auth.login(referee)

    page = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)

    def row(feed: str) -> str:
        start = page.index(feed)
        return page[start : page.index("</tr>", start)]

    flagged = row(blogs[0].feed_url)
    assert "deliveries refused" in flagged
    assert "(12× that day): more than 6 deliveries in a minute" in flagged
    assert "deliveries refused" not in row(blogs[1].feed_url)
