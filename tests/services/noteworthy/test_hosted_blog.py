"""The built-in blog writes through the same ingest path as feeds."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.errors import Forbidden, UserError
from pbp.models import EntryRevision, Turn, User
from pbp.services.noteworthy import hosted_blog
from tests.factories import make_campaign, make_characters

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session)
    chars = make_characters(db_session, campaign)
    db_session.add(Turn(campaign_id=campaign.id, number=1, opened_at=NOW - timedelta(hours=1)))
    db_session.flush()
    return campaign, chars


def test_post_entry_renders_markdown_and_sanitizes(db_session, game):
    _, (ada, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Day one",
        body_markdown="**Bold** <script>alert(1)</script>",
        mood="Smug",
        now=NOW,
    )
    assert "<strong>Bold</strong>" in entry.body_html and "<script" not in entry.body_html
    assert entry.mood == "smug" and entry.turn_id is not None


def test_entry_needs_a_mood(db_session, game):
    _, (ada, *_) = game
    with pytest.raises(UserError, match="Current mood"):
        hosted_blog.store_entry(
            session=db_session, character=ada, title="t", body_markdown="b", mood=" ", now=NOW
        )


def test_edit_by_owner_is_a_revision_and_others_are_refused(db_session, game):
    campaign, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session, character=ada, title="t", body_markdown="b", mood="Challenging", now=NOW
    )
    later = NOW + timedelta(minutes=5)

    def edit(character):
        return hosted_blog.edit_entry(
            session=db_session,
            actor=db_session.get(User, character.user_id),
            campaign=campaign,
            entry_id=entry.id,
            title="t",
            mood="Calm",
            body="b",
            now=later,
            mail=None,
        )

    outcome = edit(ada)
    moods = db_session.exec(
        select(EntryRevision.mood)
        .where(EntryRevision.entry_id == entry.id)
        .order_by(EntryRevision.id)
    ).all()
    assert outcome == "changed" and moods == ["challenging", "calm"]
    with pytest.raises(Forbidden):
        edit(bram)


def test_note_with_picked_stance_and_fate(db_session, game):
    _, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session, character=ada, title="t", body_markdown="b", mood="Challenging", now=NOW
    )
    note = hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=bram,
        body_markdown="Go on.",
        stance="oppose",
        fate="Ada leaves town",
        now=NOW,
    )
    assert note.stance == "oppose" and note.author_character_id == bram.id
    assert note.fate_text == "Ada leaves town"
