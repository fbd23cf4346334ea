"""Migration 0012 (issue #35 item 1): a forum campaign made before seeds came with the
campaign, and still without one (no roll yet), gets its seed and commitment at the upgrade,
so its commitment is published before its first roll; other campaigns are left alone."""

from __future__ import annotations

import hashlib
from datetime import datetime

import sqlalchemy as sa
from alembic import command

from pbp import migrate
from tests.foundation.test_migrations import _fresh_engine

BEFORE = "0011"
T = datetime(2026, 1, 1, 12, 0)


def _campaign(conn, slug, ruleset):
    conn.execute(
        sa.text(
            "INSERT INTO campaign (slug, name, ruleset, status, settings, time_zone, created_at,"
            " content_version) VALUES (:slug, :slug, :ruleset, 'setup', '{}', 'UTC', :t, 0)"
        ),
        {"slug": slug, "ruleset": ruleset, "t": T},
    )
    return conn.execute(sa.text("SELECT id FROM campaign WHERE slug = :s"), {"s": slug}).scalar()


def test_the_upgrade_gives_every_forum_campaign_its_commitment(database_url, tmp_path):
    engine, cleanup = _fresh_engine(database_url, tmp_path, "seeds")
    try:
        with engine.begin() as conn:
            command.upgrade(migrate.alembic_config(conn), BEFORE)
            noir = _campaign(conn, "old-noir", "noir")
            blogs = _campaign(conn, "old-blogs", "noteworthy")
            rolled = _campaign(conn, "rolled-one", "one")
            conn.execute(
                sa.text(
                    "INSERT INTO campaign_secret (campaign_id, seed, commitment, created_at)"
                    " VALUES (:c, 'aa', 'kept', :t)"
                ),
                {"c": rolled, "t": T},
            )
        migrate.upgrade(engine)
        with engine.connect() as conn:
            rows = {
                r.campaign_id: r
                for r in conn.execute(
                    sa.text("SELECT campaign_id, seed, commitment, created_at FROM campaign_secret")
                )
            }
        assert set(rows) == {noir, rolled} and blogs not in rows
        made = rows[noir]
        assert made.commitment == hashlib.sha256(bytes.fromhex(made.seed)).hexdigest()
        assert len(bytes.fromhex(made.seed)) == 32 and made.created_at is not None
        assert rows[rolled].commitment == "kept"  # a seed once made is never replaced
    finally:
        cleanup()
