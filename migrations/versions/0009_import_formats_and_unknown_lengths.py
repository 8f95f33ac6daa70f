"""import formats and unknown answer lengths

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

``imports.format`` names the format a file was read as (``council-db import --from``): a file
is resumed only by an import of the same format, so reading it first as the wrong one does not
hide its lines from the right one. Earlier imports were all llm-council's.

``session_stats.known_lengths`` counts a session's usable scores whose answer length is known
(a judge log imported without its answers stores -1): the naive pooled length-score r sums
over those. Every score stored before this revision has its length, so it equals ``usable``.
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('imports', sa.Column('format', sa.String(length=32), server_default='llm-council', nullable=False))
    op.add_column('session_stats', sa.Column('known_lengths', sa.Integer(), server_default='0', nullable=False))
    op.execute('UPDATE session_stats SET known_lengths = usable')


def downgrade() -> None:
    # ALTER TABLE DROP COLUMN (SQLite 3.35 and later), not a batch copy: rebuilding imports would
    # delete its rejected lines (ON DELETE CASCADE) and unlink its sessions.
    op.execute('ALTER TABLE session_stats DROP COLUMN known_lengths')
    op.execute('ALTER TABLE imports DROP COLUMN format')
