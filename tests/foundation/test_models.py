"""The database itself keeps bad data out."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from pbp.models import Blog, Character, Entry, Event, Turn
from tests.factories import make_campaign, make_characters


def _violates(db_session, row):
    db_session.add(row)
    with pytest.raises(sa.exc.IntegrityError):
        db_session.flush()
    db_session.rollback()


def test_turn_numbers_are_unique_per_campaign(db_session):
    campaign = make_campaign(db_session)
    db_session.add(Turn(campaign_id=campaign.id, number=1))
    db_session.commit()
    _violates(db_session, Turn(campaign_id=campaign.id, number=1))


def test_character_slug_unique_per_campaign(db_session):
    campaign = make_campaign(db_session)
    db_session.add(Character(campaign_id=campaign.id, name="Ada", slug="ada"))
    db_session.commit()
    _violates(db_session, Character(campaign_id=campaign.id, name="Ada Two", slug="ada"))


def test_status_vocabulary_is_checked(db_session):
    campaign = make_campaign(db_session)
    db_session.commit()
    _violates(db_session, Character(campaign_id=campaign.id, name="X", slug="x", status="ghost"))


def test_foreign_keys_are_enforced(db_session):
    _violates(db_session, Turn(campaign_id=987654, number=1))


def test_external_blog_needs_a_feed_url(db_session):
    campaign = make_campaign(db_session)
    bare = Character(campaign_id=campaign.id, name="Bare", slug="bare")
    db_session.add(bare)
    db_session.commit()
    _violates(db_session, Blog(character_id=bare.id, kind="external"))


def test_event_mode_matches_recipient(db_session):
    campaign = make_campaign(db_session)
    turn = Turn(campaign_id=campaign.id, number=1)
    db_session.add(turn)
    db_session.commit()
    _violates(db_session, Event(turn_id=turn.id, mode="addition", text="for nobody"))


def test_entry_source_id_unique_per_blog(db_session):
    campaign = make_campaign(db_session)
    (ada,) = make_characters(db_session, campaign, names=("Ada",))
    blog = db_session.exec(sa.select(Blog).where(Blog.character_id == ada.id)).scalar_one()
    row = dict(blog_id=blog.id, character_id=ada.id, source_id="g1", content_hash="h")
    db_session.add(Entry(**row))
    db_session.commit()
    _violates(db_session, Entry(**row))


def test_times_come_back_aware_utc(db_session):
    campaign = make_campaign(db_session)
    local = datetime(2026, 3, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    turn = Turn(campaign_id=campaign.id, number=1, opened_at=local)
    db_session.add(turn)
    db_session.commit()
    db_session.expire_all()
    loaded = db_session.get(Turn, turn.id)
    assert loaded.opened_at == local
    assert loaded.opened_at.tzinfo == UTC and loaded.opened_at.hour == 10
