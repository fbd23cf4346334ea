"""ONE combat in a scene (issue #33 item 4): `forum_combat_step`, one row per step of a
thread's combat, with the pure tracker's state after it, so the service continues from the
last step and can replay the history, which the thread and the export show.

Revision ID: 0024
Revises: 0023
"""

from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('forum_combat_step',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('thread_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.Column('state', sa.JSON(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('actor_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['actor_id'], ['user.id'], name=op.f('fk_forum_combat_step_actor_id_user'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['thread_id'], ['forum_thread.id'], name=op.f('fk_forum_combat_step_thread_id_forum_thread'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_forum_combat_step')),
    sa.UniqueConstraint('thread_id', 'number', name=op.f('uq_forum_combat_step_thread_id_number'))
    )
    with op.batch_alter_table('forum_combat_step', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_forum_combat_step_actor_id'), ['actor_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_forum_combat_step_thread_id'), ['thread_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('forum_combat_step', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_forum_combat_step_thread_id'))
        batch_op.drop_index(batch_op.f('ix_forum_combat_step_actor_id'))

    op.drop_table('forum_combat_step')
