"""Tables the importer keeps that the records alone determine, checked and rebuilt from them.

``session_stats`` is written in the import's transaction, so council-db keeps it true; an
edit of ``scores`` by hand (sqlite3, psql, Datasette) does not touch it, and the report,
which sums it, goes wrong. ``check`` recomputes every row from the records in SQL, a range
of keys at a time (memory stays bounded, whatever the size), and compares; ``repair``
rebuilds the ranges where they differ.

A new derived table (a summary per reviewer, scale and day, say) joins ``DERIVED`` with its
SQL: a SELECT of the rows the records imply for a range :first..:last of one integer column,
and the query giving that column's bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from council_db.resources import read_sql
from council_db.store.session_stats import COLUMNS as SESSION_STATS_COLUMNS

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.store.database import Database

# Sums computed by numpy at import and by SQL here add in different orders: equal to this.
RELATIVE_TOLERANCE = 1e-9
EXAMPLES = 5


@dataclass(frozen=True)
class DerivedTable:
    name: str
    columns: tuple[str, ...]  # every column, in the order rows_sql gives them
    key: tuple[str, ...]  # its primary key
    sums: tuple[str, ...]  # floats (NULL allowed), compared to RELATIVE_TOLERANCE; the rest exactly
    rows_sql: str  # sql/NAME.sql: the rows for :first..:last of range_column
    range_column: str
    bounds: str  # one row: the least and greatest range_column value there is or should be
    step: int  # range_column values per range
    # (column, SQL condition on the recomputed row ``e``): where it holds, the column is
    # rounding noise whichever way it is computed, and is not compared
    noise: tuple[tuple[str, str], ...] = ()

    @property
    def counts(self) -> tuple[str, ...]:
        return tuple(name for name in self.columns if name not in self.key and name not in self.sums)


DERIVED = (
    DerivedTable(
        name="session_stats", columns=SESSION_STATS_COLUMNS, key=("session_id", "scale_id"),
        sums=("score_sum", "score_sq_sum", "length_sum", "length_sq_sum", "length_score_sum", "answer_sxx",
              "answer_syy", "answer_sxy", "answer_z"),
        rows_sql="session_stats", range_column="session_id", step=20_000,
        # answers whose mean scores (or lengths) are all equal leave answer_syy (answer_sxx) at
        # rounding level, not 0, and answer_z the atanh of a ratio of rounding errors, which
        # numpy at import and SQL here round differently (4 sessions in a million simulated)
        noise=(("answer_z", "e.answer_syy <= 1e-12 * (1 + e.score_sq_sum) "
                            "OR e.answer_sxx <= 1e-12 * (1 + e.answers)"),),
        bounds="SELECT MIN(low), MAX(high) FROM (SELECT MIN(id) AS low, MAX(id) AS high FROM sessions "
               "UNION ALL SELECT MIN(session_id), MAX(session_id) FROM session_stats) AS both_tables"),
)


@dataclass
class Finding:
    """What one derived table's check found (and repaired)."""

    table: str
    rows: int = 0  # rows the table holds, before any repair
    missing: int = 0  # rows the records imply that the table lacks
    extra: int = 0  # rows the table has that no record implies
    differing: int = 0  # rows present in both with other values
    repaired: bool = False
    examples: list[str] = field(default_factory=list)  # keys of the first rows found wrong

    @property
    def wrong(self) -> int:
        return self.missing + self.extra + self.differing

    def as_row(self) -> dict:
        return {"table": self.table, "rows": self.rows, "missing": self.missing, "extra": self.extra,
                "differing": self.differing, "repaired": self.repaired, "examples": ", ".join(self.examples)}


def check(db: Database, *, repair: bool = False,
          tables: tuple[DerivedTable, ...] = DERIVED) -> list[Finding]:
    """Compare every derived row with the records; with ``repair``, rebuild each range that
    differs (under the write lock, in its own transaction, checked again inside it)."""
    return [_check_table(db, table, repair) for table in tables]


def _check_table(db: Database, table: DerivedTable, repair: bool) -> Finding:
    from sqlalchemy import text

    finding = Finding(table.name)
    with db.engine.connect() as connection:
        finding.rows = connection.execute(text(f"SELECT COUNT(*) FROM {table.name}")).scalar_one()
        low, high = connection.execute(text(table.bounds)).one()
    if low is None:
        return finding
    for first in range(low, high + 1, table.step):
        bounds = {"first": first, "last": min(first + table.step - 1, high)}
        with (db.writer() if repair else db.engine.connect()) as connection, connection.begin():
            wrong = _differences(connection, table, bounds, finding)
            if wrong and repair:
                _rebuild(connection, table, bounds)
                finding.repaired = True
    return finding


def _differences(connection: Connection, table: DerivedTable, bounds: dict, finding: Finding) -> int:
    """Count a range's missing, extra and differing rows into ``finding``; returns how many."""
    from sqlalchemy import text

    found = 0
    for problem, *key in connection.execute(text(_comparison(table)), bounds):
        found += 1
        setattr(finding, problem, getattr(finding, problem) + 1)
        if len(finding.examples) < EXAMPLES:
            finding.examples.append(f"{problem} ({', '.join(f'{n}={v}' for n, v in zip(table.key, key))})")
    return found


def _comparison(table: DerivedTable) -> str:
    """One query listing (problem, key...) for each wrong row of a range."""
    keys = ", ".join(f"e.{name}" for name in table.key)
    joined = " AND ".join(f"t.{name} = e.{name}" for name in table.key)
    same: list[str] = [f"t.{name} = e.{name}" for name in table.counts]
    noise = dict(table.noise)
    same += [f"((t.{n} IS NULL AND e.{n} IS NULL) OR (abs(t.{n} - e.{n}) <= "
             f"{RELATIVE_TOLERANCE} * (1 + abs(t.{n}) + abs(e.{n})))"
             + (f" OR {noise[n]}" if n in noise else "") + ")" for n in table.sums]
    return (
        f"WITH e AS ({read_sql(table.rows_sql)}) "
        f"SELECT CASE WHEN t.{table.key[0]} IS NULL THEN 'missing' ELSE 'differing' END, {keys} "
        f"FROM e LEFT JOIN {table.name} AS t ON {joined} "
        f"WHERE t.{table.key[0]} IS NULL OR NOT ({' AND '.join(same)}) "
        f"UNION ALL "
        f"SELECT 'extra', {keys.replace('e.', 't.')} FROM {table.name} AS t "
        f"WHERE t.{table.range_column} BETWEEN :first AND :last AND NOT EXISTS (SELECT 1 FROM e WHERE {joined})"
    )


def _rebuild(connection: Connection, table: DerivedTable, bounds: dict) -> None:
    from sqlalchemy import text

    connection.execute(text(f"DELETE FROM {table.name} WHERE {table.range_column} BETWEEN :first AND :last"),
                       bounds)
    connection.execute(text(f"INSERT INTO {table.name} ({', '.join(table.columns)}) " + read_sql(table.rows_sql)),
                       bounds)


def describe(finding: Finding) -> str:
    """One line for the terminal."""
    if not finding.wrong:
        return f"{finding.table} ({finding.rows:,} rows): true to the records"
    return (f"{finding.table} ({finding.rows:,} rows): {finding.missing:,} missing, {finding.extra:,} extra, "
            f"{finding.differing:,} differing from the records"
            + ("; rebuilt from them" if finding.repaired else "; council-db db check --repair rebuilds them"))
