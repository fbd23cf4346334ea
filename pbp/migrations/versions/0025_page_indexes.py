"""Indexes that answer the planet's and the dashboard's slowest queries alone (issue #34
item 3), each of which read every row of the campaign's entries or notes:

- entries by character, hidden_at and published_at: picking a planet page's 50 shown
  entries read every entry row, bodies included, to test `hidden_at` (6 ms of a 24 x 60
  planet on SQLite; 0.3 ms with this index);
- the unmapped notes' index gains author_character_id, author_name and author_uri: the
  dashboard's count of unmapped commenters is answered from it, and SQLite's planner
  (without statistics) picks it over ix_note_entry_id (6 ms -> 1.4 ms).

Revision ID: 0025
Revises: 0024
"""

from alembic import op
import sqlalchemy as sa


revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None

UNMAPPED = {
    'sqlite_where': sa.text('author_character_id IS NULL'),
    'postgresql_where': sa.text('author_character_id IS NULL'),
}


def upgrade() -> None:
    with op.batch_alter_table('entry', schema=None) as batch_op:
        batch_op.create_index('ix_entry_character_hidden_published', ['character_id', 'hidden_at', 'published_at'], unique=False)
    with op.batch_alter_table('note', schema=None) as batch_op:
        batch_op.drop_index('ix_note_unmapped', **UNMAPPED)
        batch_op.create_index('ix_note_unmapped', ['entry_id', 'author_character_id', 'author_name', 'author_uri'], unique=False, **UNMAPPED)


def downgrade() -> None:
    with op.batch_alter_table('note', schema=None) as batch_op:
        batch_op.drop_index('ix_note_unmapped', **UNMAPPED)
        batch_op.create_index('ix_note_unmapped', ['entry_id'], unique=False, **UNMAPPED)
    with op.batch_alter_table('entry', schema=None) as batch_op:
        batch_op.drop_index('ix_entry_character_hidden_published')
