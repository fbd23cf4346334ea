"""forum: every forum campaign has its dice seed and published commitment (issue #35 item 1)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02

Data only, no schema change. Forum campaigns now get their secret seed when they are created
(pbp.services.forum.seeds), so the commitment is public before any roll. A campaign made
earlier got its seed at its first roll, its start or its first card table; one that has none
yet (no roll made) gets it here, so its commitment is on its pages before anyone can roll,
and GETs stay reads (no seed made while a page is shown). Written by hand: the seed comes
from `secrets` and its SHA-256 is the commitment, as `seeds.new_secret` makes them.
"""

import hashlib
import secrets
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

FORUM_RULESETS = ("one", "noir", "sex-and-violence", "one-can-have-her")
SEED_BYTES = 32

campaign = sa.table("campaign", sa.column("id", sa.Integer), sa.column("ruleset", sa.String))
campaign_secret = sa.table(
    "campaign_secret",
    sa.column("campaign_id", sa.Integer),
    sa.column("seed", sa.String),
    sa.column("commitment", sa.String),
    sa.column("created_at", sa.DateTime),
)


def upgrade() -> None:
    bind = op.get_bind()
    without = (
        bind.execute(
            sa.select(campaign.c.id).where(
                campaign.c.ruleset.in_(FORUM_RULESETS),
                ~sa.exists().where(campaign_secret.c.campaign_id == campaign.c.id),
            )
        )
        .scalars()
        .all()
    )
    now = datetime.now(UTC).replace(tzinfo=None)  # naive UTC, as pbp stores times
    rows = []
    for campaign_id in without:
        seed = secrets.token_bytes(SEED_BYTES)
        rows.append(
            {
                "campaign_id": campaign_id,
                "seed": seed.hex(),
                "commitment": hashlib.sha256(seed).hexdigest(),
                "created_at": now,
            }
        )
    if rows:
        op.bulk_insert(campaign_secret, rows)


def downgrade() -> None:
    # Nothing to undo: a seed, once its commitment may have been seen, is never replaced.
    pass
