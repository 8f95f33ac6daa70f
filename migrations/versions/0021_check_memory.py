"""db check's memory: which ranges changed since the last check that found the store clean (issue 32)

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29

`council-db db check` recomputes every derived row from the records: 85-95 s at a million
sessions, most of it SQLite sorting every record. It now checks only what may have changed
since the last check that found the store clean (store/check_memory.py):

- ``check_marks``: a range marked changed (``sessions``: session ids ``number * 20000`` to
  ``number * 20000 + 19999``; ``days``: day-totals days ``number * 7`` to ``number * 7 + 6``;
  ``refs``: a referred row went, every reference is checked; ``all``: check everything).
  ``changes`` grows with every mark, so a check deletes only the marks it saw.
- ``check_counts``: each range's rows per table when the last clean check ran; a row inserted
  by hand changes its range's count (imports only insert, so no INSERT trigger costs them).
- ``clean_checks``: when the last clean check ran, and what it checked.

Row triggers (SQLite) and statement triggers with transition tables (PostgreSQL, as 0008 and
0010) mark the ranges of rows UPDATEd or DELETEd, by council-db or by hand; a store upgraded to
this revision has no clean check yet, so its first check is a full one.
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

SESSIONS = 20_000  # session ids a range: derived.py's session_stats step and packed_check.STEP
DAYS = 7  # days a range: derived.py's day-totals step
DAY = "COALESCE(({ts} + 62135596800000000) / 86400000000 + 1, 0)"  # store/day_totals.py's day; undated: 0
# (table, its session-id column) marked by session range, (table, day column) by day range
BY_SESSION = (("scores", "session_id"), ("session_stats", "session_id"), ("packed_records", "session_id"),
              ("answer_styles", "session_id"), ("score_dimensions", "session_id"), ("sessions", "id"))
BY_DAY = ("reviewer_day_totals", "model_day_totals", "pair_day_totals", "day_totals", "slot_day_totals")
REFERRED = ("models", "scales", "exclusion_reasons", "record_envelopes", "imports", "dimension_names")
UPSERT = " ON CONFLICT (unit, number) DO UPDATE SET changes = check_marks.changes + 1"


def _sqlite_marks(table: str, row: str) -> list[str]:
    """(unit, number) value lists a row ``row`` (OLD or NEW) of ``table`` marks."""
    column = dict(BY_SESSION).get(table)
    if column:
        marks = [f"('sessions', {row}.{column} / {SESSIONS})"]
        if table == "sessions":  # a session's day: its deleted or moved records' day totals
            marks.append(f"('days', {DAY.format(ts=f'{row}.ts_us')} / {DAYS})")
        return marks
    return [f"('days', {row}.day / {DAYS})"]


def _sqlite_triggers() -> list[str]:
    found = []
    for table in [name for name, _ in BY_SESSION] + list(BY_DAY):
        for event, rows in (("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            values = ", ".join(mark for row in rows for mark in _sqlite_marks(table, row))
            found.append(f"CREATE TRIGGER {table}_{event.lower()}_check_marks AFTER {event} ON {table} FOR EACH ROW "
                         f"BEGIN INSERT INTO check_marks (unit, number) VALUES {values}{UPSERT}; END")
    for table in REFERRED:
        for event in ("UPDATE OF id", "DELETE"):
            found.append(f"CREATE TRIGGER {table}_{event.split()[0].lower()}_check_marks AFTER {event} ON {table} "
                         f"FOR EACH ROW BEGIN INSERT INTO check_marks (unit, number) VALUES ('refs', 0){UPSERT}; END")
    return found


def _pg_function(name: str, selects: list[str]) -> str:
    return (f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
            "-- Revision 0021: mark the ranges of the rows changed (store/check_memory.py).\nBEGIN\n"
            "    INSERT INTO check_marks (unit, number) SELECT DISTINCT unit, number "
            f"FROM ({' UNION ALL '.join(selects)}) AS changed (unit, number){UPSERT};\n"
            "    RETURN NULL;\nEND $$")


def _pg_selects(table: str, rows: tuple[str, ...]) -> list[str]:
    column = dict(BY_SESSION).get(table)
    selects = []
    for source in rows:
        if column:
            selects.append(f"SELECT 'sessions', {column} / {SESSIONS} FROM {source}")
            if table == "sessions":
                selects.append(f"SELECT 'days', {DAY.format(ts='ts_us')} / {DAYS} FROM {source}")
        else:
            selects.append(f"SELECT 'days', day / {DAYS} FROM {source}")
    return selects


def _pg_statements() -> list[str]:
    found = [_pg_function("council_db_check_marks_refs", ["SELECT 'refs', 0"]),
             _pg_function("council_db_check_marks_all", ["SELECT 'all', 0"])]
    for table in [name for name, _ in BY_SESSION] + list(BY_DAY):
        found += [_pg_function(f"council_db_{table}_updated_marks", _pg_selects(table, ("old_rows", "new_rows"))),
                  _pg_function(f"council_db_{table}_deleted_marks", _pg_selects(table, ("old_rows",))),
                  f"CREATE TRIGGER {table}_update_check_marks AFTER UPDATE ON {table} "
                  "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
                  f"FOR EACH STATEMENT EXECUTE FUNCTION council_db_{table}_updated_marks()",
                  f"CREATE TRIGGER {table}_delete_check_marks AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows "
                  f"FOR EACH STATEMENT EXECUTE FUNCTION council_db_{table}_deleted_marks()",
                  f"CREATE TRIGGER {table}_truncate_check_marks AFTER TRUNCATE ON {table} "
                  "FOR EACH STATEMENT EXECUTE FUNCTION council_db_check_marks_all()"]
    for table in REFERRED:
        found += [f"CREATE TRIGGER {table}_change_check_marks AFTER UPDATE OF id OR DELETE OR TRUNCATE ON {table} "
                  "FOR EACH STATEMENT EXECUTE FUNCTION council_db_check_marks_refs()"]
    return found


def upgrade() -> None:
    op.create_table(
        "check_marks",
        sa.Column("unit", sa.String(length=8), nullable=False),
        sa.Column("number", sa.BigInteger(), nullable=False),
        sa.Column("changes", sa.BigInteger(), server_default="1", nullable=False),
        sa.PrimaryKeyConstraint("unit", "number", name=op.f("pk_check_marks")),
    )
    op.create_table(
        "check_counts",
        sa.Column("table_name", sa.String(length=32), nullable=False),
        sa.Column("number", sa.BigInteger(), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_name", "number", name=op.f("pk_check_counts")),
    )
    op.create_table(
        "clean_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("checked_at", sa.DateTime(), nullable=False),
        sa.Column("every_range", sa.Boolean(), nullable=False),
        sa.Column("ranges", sa.Integer(), nullable=False),
        sa.Column("checked", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clean_checks")),
    )
    postgresql = op.get_bind().dialect.name == "postgresql"
    for statement in _pg_statements() if postgresql else _sqlite_triggers():
        op.execute(statement)


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for table in [name for name, _ in BY_SESSION] + list(BY_DAY) + list(REFERRED):
        if postgresql:
            for event in ("update", "delete", "truncate", "change"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_{event}_check_marks ON {table}")
            op.execute(f"DROP FUNCTION IF EXISTS council_db_{table}_updated_marks()")
            op.execute(f"DROP FUNCTION IF EXISTS council_db_{table}_deleted_marks()")
        else:
            for event in ("update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_{event}_check_marks")
    if postgresql:
        op.execute("DROP FUNCTION council_db_check_marks_refs()")
        op.execute("DROP FUNCTION council_db_check_marks_all()")
    op.drop_table("clean_checks")
    op.drop_table("check_counts")
    op.drop_table("check_marks")
