"""Nudges sent and players' absences (issue #30 items 1 and 3).

`nudge`: one row per turn, person and kind of nudge, under a unique key, so two scheduler
workers send each nudge once. `hiatus`: a player's "away until", kept after they are back
so the activity check of past turns knows who was excused.

Revision ID: 0016
Revises: 0015
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('hiatus',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('starts_at', sa.DateTime(), nullable=False),
    sa.Column('until', sa.DateTime(), nullable=False),
    sa.Column('note', sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
    sa.Column('ended_at', sa.DateTime(), nullable=True),
    sa.Column('back_noted_at', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id'], name=op.f('fk_hiatus_campaign_id_campaign'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], name=op.f('fk_hiatus_user_id_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_hiatus'))
    )
    with op.batch_alter_table('hiatus', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_hiatus_campaign_id'), ['campaign_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_hiatus_user_id'), ['user_id'], unique=False)

    op.create_table('nudge',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('turn_key', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaign.id'], name=op.f('fk_nudge_campaign_id_campaign'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['user.id'], name=op.f('fk_nudge_user_id_user'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_nudge')),
    sa.UniqueConstraint('campaign_id', 'turn_key', 'user_id', 'kind', name=op.f('uq_nudge_campaign_id_turn_key_user_id_kind'))
    )
    with op.batch_alter_table('nudge', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_nudge_campaign_id'), ['campaign_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_nudge_user_id'), ['user_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('nudge', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_nudge_user_id'))
        batch_op.drop_index(batch_op.f('ix_nudge_campaign_id'))

    op.drop_table('nudge')
    with op.batch_alter_table('hiatus', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_hiatus_user_id'))
        batch_op.drop_index(batch_op.f('ix_hiatus_campaign_id'))

    op.drop_table('hiatus')
