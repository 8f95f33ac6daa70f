"""Records that refer to a missing row (an orphan): found by ``db check``, deleted by ``--repair``.

council-db itself never writes one: the importer only uses ids that it read or inserted in
the same transaction under the write lock, and a session's delete takes its records along.
But neither backend checks every edit by hand: SQLite's own shell leaves foreign keys off,
and on PostgreSQL scores and session_stats have no per-row foreign keys (migration 0008;
triggers there refuse removing a row that records use, but do not check an insert). An
orphan cannot be named in a report or an export, so ``--repair`` deletes it.

One scan of each table checks all its references at once: a LEFT JOIN per reference, which
PostgreSQL runs as hash joins and SQLite as primary-key look-ups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from council_db.store.derived import EXAMPLES, Finding

if TYPE_CHECKING:
    from council_db.store.database import Database

# (table, column, referred table): every reference of a record to another table's id
REFERENCES = (
    ("scores", "session_id", "sessions"),
    ("scores", "reviewer_id", "models"),
    ("scores", "model_id", "models"),
    ("scores", "scale_id", "scales"),
    ("scores", "exclusion_id", "exclusion_reasons"),
    ("scores", "envelope_id", "record_envelopes"),
    ("session_stats", "session_id", "sessions"),
    ("session_stats", "scale_id", "scales"),
)


def _tables() -> list[str]:
    return list(dict.fromkeys(table for table, _, _ in REFERENCES))


def _missing(column: str, referred: str, alias: str = "c") -> str:
    """SQL true where the row's ``column`` names no row of ``referred`` (NULL names none)."""
    return (f"({alias}.{column} IS NOT NULL AND "
            f"NOT EXISTS (SELECT 1 FROM {referred} AS p WHERE p.id = {alias}.{column}))")


def _count_sql(table: str, references: list[tuple[str, str]]) -> str:
    """One row: the table's rows, then per reference how many name a missing row."""
    sums = ", ".join(f"SUM(CASE WHEN c.{column} IS NOT NULL AND p{number}.id IS NULL THEN 1 ELSE 0 END)"
                     for number, (column, _) in enumerate(references))
    joins = " ".join(f"LEFT JOIN {referred} AS p{number} ON p{number}.id = c.{column}"
                     for number, (column, referred) in enumerate(references))
    return f"SELECT COUNT(*), {sums} FROM {table} AS c {joins}"


def orphans(db: Database, *, repair: bool = False) -> list[Finding]:
    """Per reference, a Finding named ``table.column``: the table's rows, and as ``extra`` those
    referring to a missing row; with ``repair``, those rows are deleted (under the write lock)."""
    from sqlalchemy import text

    findings = []
    for table in _tables():
        references = [(column, referred) for name, column, referred in REFERENCES if name == table]
        with db.engine.connect() as connection:
            found = connection.execute(text(_count_sql(table, references))).one()
            for (column, referred), count in zip(references, found[1:]):
                finding = Finding(f"{table}.{column}", rows=found[0], extra=count or 0)
                if finding.extra:
                    finding.examples = [f"{column}={value}" for value, in connection.execute(text(
                        f"SELECT DISTINCT c.{column} FROM {table} AS c WHERE {_missing(column, referred)} "
                        f"ORDER BY 1 LIMIT {EXAMPLES}"))]
                findings.append(finding)
        if repair and any(finding.extra for finding in findings[-len(references):]):
            with db.writer() as connection, connection.begin():
                connection.execute(text(f"DELETE FROM {table} WHERE "
                                        + " OR ".join(_missing(c, r, table) for c, r in references)))
            for finding in findings[-len(references):]:
                finding.repaired = bool(finding.extra)
    return findings


def describe(finding: Finding) -> str:
    """One line for the terminal."""
    table, column = finding.table.split(".")
    referred = next(r for t, c, r in REFERENCES if (t, c) == (table, column))
    if not finding.extra:
        return f"{finding.table} ({finding.rows:,} rows): every one names a stored {referred} row"
    return (f"{finding.table} ({finding.rows:,} rows): {finding.extra:,} name no stored {referred} row"
            + ("; deleted" if finding.repaired else "; council-db db check --repair deletes them"))
