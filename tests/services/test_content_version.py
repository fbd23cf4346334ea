"""Campaign content versions on real commits: bumped after the commit, from a connection
the committing session has already given back (pbp.content_version)."""

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp.db import make_engine, writing
from pbp.models import Campaign, Character
from tests.factories import make_campaign, make_characters


@pytest.fixture
def tiny_pool(engine, database_url):  # engine: the migrated database
    """Two connections at most and no waiting: a commit that needed a second connection
    for its bump while holding its own would fail here at once."""
    engine = make_engine(database_url, pool_size=2, max_overflow=0, pool_timeout=1)
    yield engine
    engine.dispose()


@pytest.fixture
def committed(tiny_pool):
    with Session(tiny_pool, expire_on_commit=False) as session:
        campaign = make_campaign(session, name=f"Versions {uuid.uuid4().hex[:8]}")
        characters = make_characters(session, campaign)
        session.commit()
    yield campaign, characters
    with tiny_pool.begin() as conn:
        conn.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))


def _version(engine, campaign) -> int:
    with Session(engine) as session:
        query = select(Campaign.content_version).where(Campaign.id == campaign.id)
        return session.exec(query).one()


def _rename(engine, character_id: int, name: str) -> None:
    with writing(), Session(engine) as session:  # a writer, as jobs and POSTs are
        session.get(Character, character_id).name = name
        session.commit()


def test_threads_committing_together_never_need_two_connections_each(tiny_pool, committed):
    campaign, characters = committed
    before = _version(tiny_pool, campaign)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda c: _rename(tiny_pool, c.id, c.name + " II"), characters))
    assert _version(tiny_pool, campaign) == before + len(characters)


def test_a_rollback_after_a_flush_bumps_nothing(tiny_pool, committed):
    campaign, (ada, *_) = committed
    before = _version(tiny_pool, campaign)
    with Session(tiny_pool) as session:
        session.get(Character, ada.id).name = "Not to be"
        session.flush()
        session.rollback()
    assert _version(tiny_pool, campaign) == before
