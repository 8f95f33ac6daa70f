"""rejected lines keep no text: byte length, keyed hash, error byte, known values

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23

The ``raw`` column held a redacted copy of each rejected line, and redaction by pattern let
query text through (issue 14). It is dropped; on SQLite with secure_delete on, so the pages
that held it are zeroed rather than left free in the file. Lines rejected before keep their
reason only, with any value it quoted (up to 60 characters, as JSON) withheld. A downgrade
gives them an empty ``raw``.
"""

import re
import secrets

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('local_keys',
    sa.Column('name', sa.String(length=32), nullable=False),
    sa.Column('value', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_local_keys'))
    )
    op.bulk_insert(sa.table('local_keys', sa.column('name'), sa.column('value')),
                   [{'name': 'line_hash', 'value': secrets.token_hex(32)}])
    if op.get_bind().dialect.name == 'sqlite':
        op.execute('PRAGMA secure_delete = ON')
    op.execute("UPDATE rejected_lines SET raw = ''")
    _withhold_quoted_values()
    with op.batch_alter_table('rejected_lines', schema=None) as batch_op:
        batch_op.add_column(sa.Column('byte_length', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('error_column', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('line_hash', sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column('unknown_keys', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('known_values', sa.Text(), nullable=True))
        batch_op.drop_column('raw')


# A JSON string as old reasons quoted it, its closing quote missing when cut at 60 characters.
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"?')


def _withhold_quoted_values() -> None:
    """Old reasons quoted the value they refused, which may be query text: keep the words."""
    connection = op.get_bind()
    rows = connection.execute(sa.text("SELECT id, reason FROM rejected_lines WHERE reason LIKE '%\"%'"))
    changed = [{"id": row_id, "reason": _QUOTED.sub('"[withheld]"', reason)}
               for row_id, reason in rows.fetchall()]
    if changed:
        connection.execute(sa.text("UPDATE rejected_lines SET reason = :reason WHERE id = :id"), changed)


def downgrade() -> None:
    """rejected_lines made again exactly as 0001 made it (a batch alteration would leave its
    schema text different), the lines kept, each with an empty ``raw``."""
    op.execute('CREATE TABLE _rejected_lines_0007 AS SELECT id, import_id, line_number, field, reason '
               'FROM rejected_lines')
    with op.batch_alter_table('rejected_lines', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_rejected_lines_import_id'))
    op.drop_table('rejected_lines')
    op.create_table('rejected_lines',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('import_id', sa.Integer(), nullable=False),
    sa.Column('line_number', sa.BigInteger(), nullable=False),
    sa.Column('field', sa.Text(), nullable=True),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('raw', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['import_id'], ['imports.id'], name=op.f('fk_rejected_lines_import_id_imports'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rejected_lines'))
    )
    with op.batch_alter_table('rejected_lines', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_rejected_lines_import_id'), ['import_id'], unique=False)
    op.execute("INSERT INTO rejected_lines (id, import_id, line_number, field, reason, raw) "
               "SELECT id, import_id, line_number, field, reason, '' FROM _rejected_lines_0007")
    op.drop_table('_rejected_lines_0007')
    op.drop_table('local_keys')
