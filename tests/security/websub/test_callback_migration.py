"""Issue #28 item 2, for subscriptions made before the fix: their hubs know the old
callback address (`/websub/<id>`, no token), which now answers 410 Gone. The migration
gives every row its token and asks again for the live ones, with the new address; their
blogs are polled at once meanwhile."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory
from sqlmodel import Session, select

from pbp import migrate
from pbp.models import Blog, WebSubSubscription
from pbp.services import campaigns
from tests.foundation.test_migrations import _fresh_engine

REVISION = "0011"
LONG_AGO = datetime(2026, 1, 1, 12, 0)  # naive UTC, as stored


def _before_the_fix(engine) -> None:
    """The schema as it was just before this migration, whatever precedes it."""
    script = ScriptDirectory.from_config(migrate.alembic_config())
    previous = script.get_revision(REVISION).down_revision
    with engine.begin() as conn:
        command.upgrade(migrate.alembic_config(conn), str(previous))


def test_old_subscriptions_get_a_token_and_are_asked_for_again(database_url, tmp_path):
    engine, cleanup = _fresh_engine(database_url, tmp_path, "before-0011")
    try:
        _before_the_fix(engine)
        with Session(engine) as session:
            referee = campaigns.create_user(
                session=session, email="ref@old.test", display_name="Ref"
            )
            campaign = campaigns.create_campaign(session=session, referee=referee, name="Old")
            for name in ("Ada", "Bram", "Cleo"):
                campaigns.add_character(
                    session=session, campaign=campaign, name=name,
                    feed_url=f"https://{name.lower()}.example/feed/",
                )  # fmt: skip
            session.flush()
            blog_ids = list(session.exec(select(Blog.id).order_by(Blog.id)))
            session.execute(sa.update(Blog).values(next_poll_at=LONG_AGO + timedelta(days=400)))
            session.commit()
        states = {"active": blog_ids[0], "pending": blog_ids[1], "unsubscribing": blog_ids[2]}
        with engine.begin() as conn:
            for state, blog_id in states.items():
                conn.execute(
                    sa.text(
                        "INSERT INTO websub_subscription (blog_id, hub_url, topic_url, secret,"
                        " state, next_attempt_at, requested_at, expires_at, renew_at,"
                        " failure_count, created_at) VALUES (:blog, 'https://hub.example/',"
                        " :topic, :secret, :state, NULL, :t, :exp, :exp, 0, :t)"
                    ),
                    {"blog": blog_id, "topic": f"https://t/{state}", "secret": "s" * 64,
                     "state": state, "t": LONG_AGO, "exp": datetime(2121, 1, 1)},
                )  # fmt: skip

        before = datetime.now(UTC)
        migrate.upgrade(engine)

        with Session(engine) as session:
            rows = {
                r.topic_url.rsplit("/", 1)[1]: r for r in session.exec(select(WebSubSubscription))
            }
            blogs = {b.id: b for b in session.exec(select(Blog))}
        tokens = {r.callback_token for r in rows.values()}
        assert len(tokens) == 3 and all(len(t) >= 43 for t in tokens)
        for state in ("active", "pending"):
            row = rows[state]
            assert row.state == "wanted" and before <= row.next_attempt_at <= datetime.now(UTC)
            assert row.expires_at is None and row.renew_at is None  # not counted as push
            assert before <= blogs[states[state]].next_poll_at <= datetime.now(UTC)
        assert rows["unsubscribing"].state == "ended"
        assert blogs[states["unsubscribing"]].next_poll_at > datetime.now(UTC)
    finally:
        cleanup()
