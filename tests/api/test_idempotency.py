"""Idempotency-Key: a retried write returns the first answer and changes nothing more."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import select

from pbp.models import Entry, Turn
from pbp.models.api import IdempotencyRecord
from pbp.services import idempotency


def _entries(db_session, world) -> int:
    return len(
        db_session.exec(select(Entry).where(Entry.character_id == world.characters["Ada"].id)).all()
    )


def write(api, world, key, title="A quiet evening", token_role="player"):
    return api.post(
        f"/campaigns/{world.slug}/entries",
        token=world.tokens[token_role],
        headers={"Idempotency-Key": key},
        json={"title": title, "body": "Cards.", "mood": "Content"},
    )


def test_a_retry_returns_the_first_answer_and_writes_nothing(api, world, db_session):
    before = _entries(db_session, world)
    first = write(api, world, "key-1")
    again = write(api, world, "key-1")
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert _entries(db_session, world) == before + 1


def test_without_a_key_each_request_writes(api, world, db_session):
    before = _entries(db_session, world)
    for _ in range(2):
        response = api.post(
            f"/campaigns/{world.slug}/entries",
            token=world.tokens["player"],
            json={"title": "Again", "body": "", "mood": "Content"},
        )
        assert response.status_code == 201
    assert _entries(db_session, world) == before + 2


def test_the_same_key_with_another_request_is_refused(api, world, db_session):
    assert write(api, world, "key-2").status_code == 201
    other = write(api, world, "key-2", title="Something else")
    assert other.status_code == 422
    assert other.mimetype == "application/problem+json"
    assert "use a new key" in other.get_json()["detail"]


def test_keys_belong_to_their_user(api, world):
    mine = write(api, world, "shared-key")
    theirs = write(api, world, "shared-key", token_role="other_player")
    assert mine.status_code == theirs.status_code == 201
    assert mine.get_json()["character_slug"] == "ada"
    assert theirs.get_json()["character_slug"] == "bram"


def test_a_refused_request_is_not_remembered(api, world, db_session):
    """Nothing changed, so the same key may be used again once the cause is fixed."""
    refused = api.post(
        f"/campaigns/{world.slug}/entries",
        token=world.tokens["player"],
        headers={"Idempotency-Key": "key-3"},
        json={"title": "   ", "body": "", "mood": "Content"},
    )
    assert refused.status_code == 422
    stored = select(IdempotencyRecord).where(IdempotencyRecord.key == "key-3")
    assert db_session.exec(stored).all() == []
    assert write(api, world, "key-3").status_code == 201


def test_posting_an_event_twice_with_one_key_opens_one_turn(api, world, db_session):
    slug, referee = world.slug, world.tokens["referee"]
    for step in ("close", "resolve"):
        done = api.post(f"/campaigns/{slug}/turns/1/{step}", token=referee, json={})
        assert done.status_code == 200
    answers = [
        api.post(
            f"/campaigns/{slug}/turns",
            token=referee,
            headers={"Idempotency-Key": "event-2"},
            json={"text": "Dawn at the lake."},
        )
        for _ in range(2)
    ]
    assert [a.status_code for a in answers] == [201, 201]
    assert answers[0].get_json() == answers[1].get_json()
    numbers = db_session.exec(select(Turn.number).where(Turn.campaign_id == world.campaign.id))
    assert sorted(numbers) == [1, 2]


def test_a_key_that_committed_meanwhile_answers_the_retry(api, world, db_session, monkeypatch):
    """Two requests with one key at once: the second to commit hits the unique key, rolls
    back its change and answers as the first did."""
    first = write(api, world, "race")
    real_find = idempotency.find
    calls = []

    def blind_first_look(**kw):  # the check ran before the other request committed
        calls.append(1)
        return None if len(calls) == 1 else real_find(**kw)

    monkeypatch.setattr(idempotency, "find", blind_first_look)
    before = _entries(db_session, world)
    second = write(api, world, "race")
    assert second.status_code == 201 and second.get_json() == first.get_json()
    assert second.headers["Idempotent-Replayed"] == "true"
    assert _entries(db_session, world) == before
    assert len(calls) == 2


def test_a_bad_key_is_refused(api, world):
    response = write(api, world, "x" * 201)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.get_json()["detail"]


def test_keys_expire_after_a_day(db_session, world):
    from datetime import timedelta

    from tests.helpers import API_NOW as NOW

    user = world.users["player"]
    record = dict(
        session=db_session, user=user, key="old", method="POST", path="/x", fingerprint="f"
    )
    idempotency.remember(**record, status=201, body={"a": 1}, now=NOW)
    assert idempotency.find(**record, now=NOW + timedelta(hours=23)) is not None
    assert idempotency.find(**record, now=NOW + timedelta(days=2)) is None
    assert idempotency.purge(session=db_session, now=NOW) == 0
    mine = select(sa.func.count()).where(IdempotencyRecord.user_id == user.id)
    assert db_session.exec(mine).one() == 0


def test_the_scheduler_forgets_records_older_than_a_day(app, db_session, world):
    from datetime import timedelta

    from pbp.models import utcnow
    from scheduler.jobs import JOBS

    user = world.users["player"]
    for key, age in (("old", timedelta(days=2)), ("new", timedelta(hours=1))):
        idempotency.remember(
            session=db_session,
            user=user,
            key=key,
            method="POST",
            path="/x",
            fingerprint="f",
            status=201,
            body={},
            now=utcnow() - age,
        )
    db_session.commit()
    assert idempotency.forget_old in [func for func, _trigger in JOBS]
    assert idempotency.forget_old(app) >= 1  # (and any other test's old form tokens)
    keys = db_session.exec(
        select(IdempotencyRecord.key).where(IdempotencyRecord.user_id == user.id)
    ).all()
    assert keys == ["new"]
