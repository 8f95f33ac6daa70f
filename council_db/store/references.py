"""Records that refer to a missing row (an orphan): found by ``db check``, deleted by ``--repair``.

council-db itself never writes one: the importer only uses ids that it read or inserted in
the same transaction under the write lock, and a session's delete takes its records along.
But neither backend checks every edit by hand: SQLite's own shell leaves foreign keys off,
and on PostgreSQL scores, session_stats and sessions.import_id have no per-row foreign keys
(migration 0008; triggers there refuse removing a row that records use, but do not check an
insert). An orphan record cannot be named in a report or an export, so ``--repair`` deletes
it; a session or a record whose import is gone is kept and loses its import_id.

One scan of each table checks all its references at once: a LEFT JOIN per reference, which
PostgreSQL runs as hash joins and SQLite as primary-key look-ups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from council_db.store.check_memory import BY_SESSION
from council_db.store.derived import EXAMPLES, Finding

if TYPE_CHECKING:
    from council_db.store.database import Database

# (table, column, referred table): every reference from a row council-db writes to another row's id
REFERENCES = (
    ("scores", "session_id", "sessions"),
    ("scores", "reviewer_id", "models"),
    ("scores", "model_id", "models"),
    ("scores", "scale_id", "scales"),
    ("scores", "exclusion_id", "exclusion_reasons"),
    ("scores", "envelope_id", "record_envelopes"),
    ("scores", "import_id", "imports"),
    ("session_stats", "session_id", "sessions"),
    ("session_stats", "scale_id", "scales"),
    ("sessions", "import_id", "imports"),
    ("score_dimensions", "dimension_id", "dimension_names"),
    ("models", "model_of", "models"),  # a reviewer with provenance: its model's row (revision 0016)
)
# a session or a record outlives its import's row: --repair empties the column (a record without
# one belongs to its session's import, see store/provenance.py); a reviewer whose model's row is
# gone keeps its records, named by its label, and loses only the link
KEPT = {("sessions", "import_id"), ("scores", "import_id"), ("models", "model_of")}
# (table, its rows' key in scores): rows that are part of one record and go with it (a cascade on
# SQLite, a statement trigger on PostgreSQL); an edit by hand can leave one behind its record
RECORD_KEY = ("session_id", "reviewer_id", "model_id", "position")
RECORD_PARTS = (("answer_styles", RECORD_KEY), ("score_dimensions", RECORD_KEY))
RECORD = "record"  # the finding's column name for a part whose record is gone


def _tables() -> list[str]:
    return list(dict.fromkeys(table for table, _, _ in REFERENCES))


def _missing(column: str, referred: str, alias: str) -> str:
    """SQL true where the row's ``column`` names no row of ``referred`` (NULL names none)."""
    return (f"({alias}.{column} IS NOT NULL AND "
            f"NOT EXISTS (SELECT 1 FROM {referred} AS p WHERE p.id = {alias}.{column}))")


def _within(table: str, alias: str, sessions: tuple[tuple[int, int], ...] | None) -> str:
    """SQL true for the rows of ``table`` (as ``alias``) in the session-id ranges (every row
    where None, or where the table has no session column: check_memory's tables by session)."""
    column = BY_SESSION.get(table)
    if sessions is None or column is None:
        return "1 = 1"
    return "(" + (" OR ".join(f"{alias}.{column} BETWEEN {int(first)} AND {int(last)}" for first, last in sessions)
                  or "1 = 0") + ")"


def _count_sql(table: str, references: list[tuple[str, str]], where: str) -> str:
    """One row: the table's rows (``where``), then per reference how many name a missing row."""
    sums = ", ".join(f"SUM(CASE WHEN c.{column} IS NOT NULL AND p{number}.id IS NULL THEN 1 ELSE 0 END)"
                     for number, (column, _) in enumerate(references))
    joins = " ".join(f"LEFT JOIN {referred} AS p{number} ON p{number}.id = c.{column}"
                     for number, (column, referred) in enumerate(references))
    return f"SELECT COUNT(*), {sums} FROM {table} AS c {joins} WHERE {where}"


def _repair_sql(table: str, column: str, referred: str, where: str) -> str:
    if (table, column) in KEPT:
        return f"UPDATE {table} SET {column} = NULL WHERE {_missing(column, referred, table)} AND {where}"
    return f"DELETE FROM {table} WHERE {_missing(column, referred, table)} AND {where}"


def orphans(db: Database, *, repair: bool = False, sessions: tuple[tuple[int, int], ...] | None = None
            ) -> list[Finding]:
    """Per reference, a Finding named ``table.column``: the table's rows, and as ``extra`` those
    referring to a missing row; with ``repair``, those rows are deleted (or the column
    emptied, for KEPT), under the write lock. Where ``sessions`` is given, a table with a
    session column is read only in those session-id ranges."""
    from sqlalchemy import text

    findings = []
    for table in _tables():
        references = [(column, referred) for name, column, referred in REFERENCES if name == table]
        where = _within(table, "c", sessions)
        with db.engine.connect() as connection:
            total, *counts = connection.execute(text(_count_sql(table, references, where))).one()
            for (column, referred), count in zip(references, counts):
                finding = Finding(f"{table}.{column}", rows=total, extra=count or 0)
                if finding.extra:
                    finding.examples = [f"{column}={value}" for value, in connection.execute(text(
                        f"SELECT DISTINCT c.{column} FROM {table} AS c WHERE {_missing(column, referred, 'c')} "
                        f"AND {where} ORDER BY 1 LIMIT {EXAMPLES}"))]
                findings.append(finding)
    parts = [_record_part(db, table, key, sessions) for table, key in RECORD_PARTS]
    if repair and any(finding.extra for finding in findings + parts):
        with db.writer() as connection, connection.begin():
            for (table, column, referred), finding in zip(REFERENCES, findings):
                if finding.extra:
                    connection.execute(text(_repair_sql(table, column, referred, _within(table, table, sessions))))
                    finding.repaired = True
            for (table, key), finding in zip(RECORD_PARTS, parts):
                if finding.extra:
                    connection.execute(text(f"DELETE FROM {table} WHERE {_no_record(table, key)} "
                                            f"AND {_within(table, table, sessions)}"))
                    finding.repaired = True
    return findings + parts


def _no_record(alias: str, key: tuple[str, ...]) -> str:
    """SQL true where the row (``alias``) names no stored record by its ``key``."""
    return f"NOT EXISTS (SELECT 1 FROM scores AS p WHERE {' AND '.join(f'p.{c} = {alias}.{c}' for c in key)})"


def _record_part(db: Database, table: str, key: tuple[str, ...], sessions: tuple[tuple[int, int], ...] | None
                 ) -> Finding:
    """A Finding named ``table.record``: the table's rows (of the ``sessions`` ranges, where
    given), and as ``extra`` those whose record is gone."""
    from sqlalchemy import text

    where = _within(table, "c", sessions)
    with db.engine.connect() as connection:
        total, count = connection.execute(text(
            f"SELECT COUNT(*), SUM(CASE WHEN {_no_record('c', key)} THEN 1 ELSE 0 END) FROM {table} AS c "
            f"WHERE {where}")).one()
        finding = Finding(f"{table}.{RECORD}", rows=total, extra=count or 0)
        if finding.extra:
            finding.examples = [", ".join(f"{c}={v}" for c, v in zip(key, row)) for row in connection.execute(text(
                f"SELECT DISTINCT {', '.join(f'c.{c}' for c in key)} FROM {table} AS c WHERE {_no_record('c', key)} "
                f"AND {where} ORDER BY 1, 2, 3, 4 LIMIT {EXAMPLES}"))]
    return finding


def describe(finding: Finding) -> str:
    """One line for the terminal."""
    table, column = finding.table.split(".")
    referred = "scores" if column == RECORD else next(r for t, c, r in REFERENCES if (t, c) == (table, column))
    if not finding.extra:
        return f"{finding.table} ({finding.rows:,} rows): every one names a stored {referred} row"
    done = "emptied" if (table, column) in KEPT else "deleted"
    return (f"{finding.table} ({finding.rows:,} rows): {finding.extra:,} name no stored {referred} row"
            + (f"; {done}" if finding.repaired else f"; council-db db check --repair: {done}"))
