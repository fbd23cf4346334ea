"""websub security: callback tokens, push counters, one credited-notes mail a day

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02

Issue #28 items 2 and 4. The columns are as autogenerate writes them; the data steps are
by hand:
- every subscription gets its callback token (the last part of its new callback address);
- subscriptions made with the old address (`/websub/<id>`, which now answers 410 Gone, so
  the hubs drop them) are asked for again with the new one: pending and active rows go
  back to `wanted`, due at once, and their blogs are polled at once (until the hub
  verifies the new callback they are polled, and the poll reads what a hub may have
  pushed meanwhile); rows being cancelled end (the 410 cancels them at the hub).
"""

import secrets
from datetime import UTC, datetime

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('websub_subscription', schema=None) as batch_op:
        batch_op.add_column(sa.Column('callback_token', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True))
        batch_op.add_column(sa.Column('minute_started_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('minute_deliveries', sa.BigInteger(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('usage_day', sa.Date(), nullable=True))
        batch_op.add_column(sa.Column('day_bytes', sa.BigInteger(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('day_new_entries', sa.BigInteger(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('day_refused', sa.BigInteger(), server_default='0', nullable=False))
        batch_op.add_column(sa.Column('last_refused_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('last_refusal', sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True))

    subs = sa.table(
        'websub_subscription',
        sa.column('id', sa.Integer()),
        sa.column('blog_id', sa.Integer()),
        sa.column('callback_token', sa.String()),
        sa.column('state', sa.String()),
        sa.column('next_attempt_at', sa.DateTime()),
        sa.column('expires_at', sa.DateTime()),
        sa.column('renew_at', sa.DateTime()),
        sa.column('failure_count', sa.Integer()),
    )
    blogs = sa.table('blog', sa.column('id', sa.Integer()), sa.column('next_poll_at', sa.DateTime()))
    bind = op.get_bind()
    for (row_id,) in bind.execute(sa.select(subs.c.id)).all():
        bind.execute(
            subs.update().where(subs.c.id == row_id).values(callback_token=secrets.token_urlsafe(32))
        )
    now = datetime.now(UTC).replace(tzinfo=None)  # naive UTC, as pbp stores times
    live = subs.c.state.in_(('pending', 'active'))
    bind.execute(
        blogs.update()
        .where(blogs.c.id.in_(sa.select(subs.c.blog_id).where(live, subs.c.blog_id.is_not(None))))
        .values(next_poll_at=now)
    )
    bind.execute(
        subs.update()
        .where(live)
        .values(state='wanted', next_attempt_at=now, expires_at=None, renew_at=None, failure_count=0)
    )
    bind.execute(
        subs.update()
        .where(subs.c.state.in_(('unsubscribing', 'unsubscribe_pending')))
        .values(state='ended', next_attempt_at=None)
    )

    with op.batch_alter_table('websub_subscription', schema=None) as batch_op:
        batch_op.alter_column('callback_token', existing_type=sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False)

    with op.batch_alter_table('note', schema=None) as batch_op:
        batch_op.add_column(sa.Column('credit_mail_id', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('note', schema=None) as batch_op:
        batch_op.drop_column('credit_mail_id')

    with op.batch_alter_table('websub_subscription', schema=None) as batch_op:
        batch_op.drop_column('last_refusal')
        batch_op.drop_column('last_refused_at')
        batch_op.drop_column('day_refused')
        batch_op.drop_column('day_new_entries')
        batch_op.drop_column('day_bytes')
        batch_op.drop_column('usage_day')
        batch_op.drop_column('minute_deliveries')
        batch_op.drop_column('minute_started_at')
        batch_op.drop_column('callback_token')
