"""which import stored each record, and what undoing an import takes from the others

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

``delete --import N`` deleted whole sessions, whoever stored their records, and another
import that had read them stayed ``complete``, so its file was never read again (issue 27).
Now:

- ``scores.import_id`` names the import that stored the record (nullable, no index and no
  foreign key: a few bytes a record). A record stored before this revision has none, and
  belongs to its session's ``import_id``, the only provenance kept until now.
- ``import_overlaps`` says which imports an import read records (or bad lines) of that they
  had stored first, as a range of ids: deleting one of those takes records this one read too.
- ``imports.records_lost`` marks such an import: its file is read again by the next import.
- ``imports.options`` keeps an import's format options (``--answers``, ``--bench``,
  ``--judge``, as JSON): a file is resumed only by an import with the same ones.

Imports made before this revision may have added records to each other's sessions, which
belong to the session's first import: each one that read records gets a range over every
import then stored, so deleting any of those marks it.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

EARLIER_READERS = """
INSERT INTO import_overlaps (import_id, first_id, last_id)
SELECT id, (SELECT MIN(id) FROM imports), (SELECT MAX(id) FROM imports) FROM imports
WHERE inserted + duplicates > 0 AND status <> 'strict-failed' AND (SELECT COUNT(*) FROM imports) > 1
"""


def upgrade() -> None:
    op.add_column("scores", sa.Column("import_id", sa.Integer(), nullable=True))
    op.add_column("imports", sa.Column("options", sa.Text(), nullable=True))
    op.add_column("imports", sa.Column("records_lost", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table(
        "import_overlaps",
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("first_id", sa.Integer(), nullable=False),
        sa.Column("last_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["import_id"], ["imports.id"], name="fk_import_overlaps_import_id_imports",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("import_id", "first_id", "last_id", name="pk_import_overlaps"),
    )
    op.execute(EARLIER_READERS)


def downgrade() -> None:
    op.drop_table("import_overlaps")
    # ALTER TABLE DROP COLUMN (SQLite 3.35 and later), not a batch copy: rebuilding imports would
    # delete its rejected lines (ON DELETE CASCADE), rebuilding scores would copy every record.
    for table, column in (("imports", "records_lost"), ("imports", "options"), ("scores", "import_id")):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
