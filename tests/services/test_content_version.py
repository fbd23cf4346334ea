"""Campaign content versions on real commits: bumped after the commit, from a connection
the committing session has already given back (pbp.content_version)."""

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp import content_version
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


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _rename_in(engine, batch, character_id: int, name: str) -> None:
    with writing(), Session(engine) as session:
        batch.join(session)
        session.get(Character, character_id).name = name
        session.commit()


def test_a_batch_gathers_bumps_and_runs_them_once_a_second_and_when_closed(tiny_pool, committed):
    """A poll pass's stores join one batch: their commits land at once, the campaign's
    version moves once per `every` seconds and at the close, never before a commit."""
    campaign, (ada, bram, cleo, *_) = committed
    clock = _Clock()
    batch = content_version.Batch(tiny_pool, every=1.0, clock=clock)
    before = _version(tiny_pool, campaign)

    _rename_in(tiny_pool, batch, ada.id, "Ada II")
    _rename_in(tiny_pool, batch, bram.id, "Bram II")
    assert _version(tiny_pool, campaign) == before  # gathered, not yet bumped

    clock.now = 1.0
    _rename_in(tiny_pool, batch, cleo.id, "Cleo II")  # a second since the last bump
    assert _version(tiny_pool, campaign) == before + 1

    _rename_in(tiny_pool, batch, ada.id, "Ada III")
    batch.close()
    assert _version(tiny_pool, campaign) == before + 2
    batch.close()  # nothing left: no further bump
    assert _version(tiny_pool, campaign) == before + 2


def test_a_rolled_back_store_adds_nothing_to_its_batch(tiny_pool, committed):
    campaign, (ada, *_) = committed
    batch = content_version.Batch(tiny_pool, every=0.0, clock=_Clock())
    before = _version(tiny_pool, campaign)
    with Session(tiny_pool) as session:
        batch.join(session)
        session.get(Character, ada.id).name = "Not to be"
        session.flush()
        session.rollback()
    batch.close()
    assert _version(tiny_pool, campaign) == before
