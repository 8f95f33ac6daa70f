"""each session's usable records packed into byte strings, opt-in per store (issue 32)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28

`anomalies --every-session` tests every session of a window against the sample's fit, and
reads every record to do it: 16M rows at a million 4x4 sessions, 37 s of CPU, SQLite's cost
per row the floor. ``packed_records`` holds per (session, scale, part) the session's usable
records as one byte string (24 bytes a record, little-endian: reviewer id, candidate id and
display slot, -1 for none, as int32; answer length in characters, -1 unknown, as int32; the
score as float64; docs/storage.md), read with ``np.frombuffer``: a million rows, not 16M.
A part is what one write added (store/packed_writes.py).

The copy costs ~455 bytes a 4x4 session, past the product's 1 KB a session, so it is a
store's choice: ``store_options`` holds it (a row ``packed_records`` once `council-db db pack`
turned it on, store/packing.py), and this revision packs nothing: no backfill, instant. A
session's parts go with it: a foreign key ON DELETE CASCADE on SQLite, a statement trigger
on PostgreSQL (revision 0008's reasons).
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

PARTS_GONE = """
CREATE FUNCTION council_db_packed_records_gone() RETURNS trigger LANGUAGE plpgsql AS $$
-- Revision 0020: a deleted session's packed records go with it (SQLite: ON DELETE CASCADE).
BEGIN
    DELETE FROM packed_records AS p USING removed AS r WHERE p.session_id = r.id;
    RETURN NULL;
END $$;
CREATE TRIGGER sessions_delete_packed_records AFTER DELETE ON sessions REFERENCING OLD TABLE AS removed
FOR EACH STATEMENT EXECUTE FUNCTION council_db_packed_records_gone();
CREATE FUNCTION council_db_packed_records_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE packed_records;
    RETURN NULL;
END $$;
CREATE TRIGGER sessions_truncate_packed_records AFTER TRUNCATE ON sessions
FOR EACH STATEMENT EXECUTE FUNCTION council_db_packed_records_truncated();
"""


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    references = [] if postgresql else [
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"], name=op.f("fk_packed_records_session_id_sessions"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["scale_id"], ["scales.id"], name=op.f("fk_packed_records_scale_id_scales"))]
    op.create_table(
        "packed_records",
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("scale_id", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        *references,
        sa.PrimaryKeyConstraint("session_id", "scale_id", "part", name=op.f("pk_packed_records")),
        sqlite_with_rowid=False,
    )
    if postgresql:
        op.execute(PARTS_GONE)
    op.create_table(
        "store_options",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_store_options")),
    )


def downgrade() -> None:
    op.drop_table("store_options")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER sessions_delete_packed_records ON sessions")
        op.execute("DROP TRIGGER sessions_truncate_packed_records ON sessions")
        op.execute("DROP FUNCTION council_db_packed_records_gone()")
        op.execute("DROP FUNCTION council_db_packed_records_truncated()")
    op.drop_table("packed_records")
