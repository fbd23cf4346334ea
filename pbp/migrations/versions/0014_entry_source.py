"""entry, entryrevision: the Markdown source of entries written on pbp's own blog

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03

Written as autogenerate writes it (issue #27 item 6): the edit page shows the Markdown the
player typed, not the HTML it became. Rows written before stay NULL.
"""

from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('entry', schema=None) as batch_op:
        batch_op.add_column(sa.Column('body_source', sa.Text(), nullable=True))

    with op.batch_alter_table('entryrevision', schema=None) as batch_op:
        batch_op.add_column(sa.Column('body_source', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('entryrevision', schema=None) as batch_op:
        batch_op.drop_column('body_source')

    with op.batch_alter_table('entry', schema=None) as batch_op:
        batch_op.drop_column('body_source')
