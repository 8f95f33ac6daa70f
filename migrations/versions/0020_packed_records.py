"""each session's usable records packed into byte strings (issue 32)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28

`anomalies --every-session` tests every session of a window against the sample's fit, and
read every record to do it: 16M rows at a million 4x4 sessions, 37 s of CPU, SQLite's cost
per row the floor. ``packed_records`` holds per (session, scale, part) the session's usable
records as one byte string (24 bytes a record, little-endian: reviewer id, candidate id and
display slot, -1 for none, as int32; answer length in characters, -1 unknown, as int32; the
score as float64; docs/storage.md), read with ``np.frombuffer``: a million rows, not 16M.
A part is what one write added (store/packed_writes.py).

The upgrade packs the stored sessions a range of ids at a time (memory stays bounded), in
the key's order within a session. Written out here, not imported from store/packed_records:
a migration must do the same thing forever. A session's parts go with it: a foreign key ON
DELETE CASCADE on SQLite, a statement trigger on PostgreSQL (revision 0008's reasons).
"""

import numpy as np
import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

SESSIONS_AT_ONCE = 20_000
LAYOUT = np.dtype([("reviewer", "<i4"), ("model", "<i4"), ("slot", "<i4"), ("length", "<i4"), ("score", "<f8")])
ROW = np.dtype([("session", "<i8"), ("scale", "<i8"), *((name, LAYOUT[name]) for name in LAYOUT.names)])
SCORES = """SELECT session_id, scale_id, reviewer_id, model_id, CASE WHEN display_order THEN position ELSE -1 END,
       response_length_chars, score_value
FROM scores WHERE session_id BETWEEN {mark} AND {mark} AND exclusion_id IS NULL
ORDER BY session_id, scale_id, reviewer_id, model_id, position"""

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
    _pack_stored_sessions()


def _pack_stored_sessions() -> None:
    """One part per stored (session, scale), SESSIONS_AT_ONCE session ids at a time, through
    the driver's own cursor (16M rows through SQLAlchemy's would cost several times as long)."""
    bind = op.get_bind()
    first, last = bind.execute(sa.text("SELECT MIN(id), MAX(id) FROM sessions")).one()
    if first is None:
        return
    mark = "?" if bind.dialect.paramstyle == "qmark" else "%s"
    cursor = bind.connection.driver_connection.cursor()
    insert = f"INSERT INTO packed_records (session_id, scale_id, part, data) VALUES ({mark}, {mark}, 0, {mark})"
    for low in range(first, last + 1, SESSIONS_AT_ONCE):
        cursor.execute(SCORES.format(mark=mark), (low, low + SESSIONS_AT_ONCE - 1))
        rows = cursor.fetchall()
        if rows:
            cursor.executemany(insert, _parts(np.fromiter(rows, dtype=ROW, count=len(rows))))


def _parts(rows: np.ndarray) -> list[tuple[int, int, bytes]]:
    """(session, scale, packed string) for each (session, scale) of rows in that order."""
    new = np.r_[True, (rows["session"][1:] != rows["session"][:-1]) | (rows["scale"][1:] != rows["scale"][:-1])]
    starts = np.flatnonzero(new).tolist()
    packed = np.empty(len(rows), LAYOUT)
    for name in LAYOUT.names:
        packed[name] = rows[name]
    data, size = packed.tobytes(), LAYOUT.itemsize
    ends = [*starts[1:], len(rows)]
    return [(int(rows["session"][start]), int(rows["scale"][start]), data[start * size:end * size])
            for start, end in zip(starts, ends)]


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER sessions_delete_packed_records ON sessions")
        op.execute("DROP TRIGGER sessions_truncate_packed_records ON sessions")
        op.execute("DROP FUNCTION council_db_packed_records_gone()")
        op.execute("DROP FUNCTION council_db_packed_records_truncated()")
    op.drop_table("packed_records")
