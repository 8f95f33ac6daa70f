"""Tables the importer keeps that the records alone determine, checked and rebuilt from them.

``session_stats`` is written in the import's transaction, so council-db keeps it true; an
edit of ``scores`` by hand (sqlite3, psql, Datasette) does not touch it, and the report,
which sums it, goes wrong. ``check`` recomputes every row from the records in SQL, a range
of keys at a time (memory stays bounded, whatever the size), and compares; ``repair``
rebuilds the ranges where they differ.

A new derived table joins ``DERIVED`` with its SQL: a SELECT of the rows the records imply
for a range :first..:last of one integer column, the query giving that column's bounds, and,
where its values leave gaps (days), the query giving the next value there is after a range.
The day totals (store/day_totals.py) are checked a few days at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from council_db.resources import read_sql
from council_db.store.day_totals import TABLES as DAY_TOTALS
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
    # the least range_column value above :last there is or should be (NULL if none); empty:
    # every value is checked, :last + 1 next
    following: str = ""
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
    *(DerivedTable(
        name=totals.name, columns=totals.columns, key=totals.key, sums=totals.sums, rows_sql=totals.name,
        range_column="day", step=7,
        # a session's day is (ts_us + FROM_YEAR_ONE) / US_PER_DAY + 1 (store/day_totals.py), 0 undated
        bounds="SELECT MIN(low), MAX(high) FROM ("
               "SELECT (MIN(ts_us) + 62135596800000000) / 86400000000 + 1 AS low, "
               "(MAX(ts_us) + 62135596800000000) / 86400000000 + 1 AS high FROM sessions "
               "UNION ALL SELECT 0, 0 WHERE EXISTS (SELECT 1 FROM sessions WHERE ts_us IS NULL) "
               f"UNION ALL SELECT MIN(day), MAX(day) FROM {totals.name}) AS both_tables",
        following="SELECT MIN(day) FROM ("
                  "SELECT (MIN(ts_us) + 62135596800000000) / 86400000000 + 1 AS day FROM sessions "
                  "WHERE ts_us >= :last * 86400000000 - 62135596800000000 "
                  f"UNION ALL SELECT MIN(day) FROM {totals.name} WHERE day > :last) AS both_tables")
      for totals in DAY_TOTALS),
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


# (connection, table name, bounds): True where a range of the table is known to be true to
# its records without comparing its rows (store/day_screen.py)
Screen = Callable[["Connection", str, dict], bool]


# per range column (session_id, day): the (first, last) ranges to check, in place of every range
Ranges = dict[str, tuple[tuple[int, int], ...]]


def check(db: Database, *, repair: bool = False, tables: tuple[DerivedTable, ...] = DERIVED,
          screen: Screen | None = None, ranges: Ranges | None = None) -> list[Finding]:
    """Compare every derived row with the records (only those of ``ranges``, where given: a
    finding's ``rows`` are then theirs); with ``repair``, rebuild each range that differs
    (under the write lock, in its own transaction, checked again inside it). A range that
    ``screen`` passes is not compared."""
    return [_check_table(db, table, repair, screen, None if ranges is None else ranges[table.range_column])
            for table in tables]


def _check_table(db: Database, table: DerivedTable, repair: bool, screen: Screen | None = None,
                 ranges: tuple[tuple[int, int], ...] | None = None) -> Finding:
    from sqlalchemy import text

    finding = Finding(table.name)
    if ranges is not None:
        with db.engine.connect() as connection:
            finding.rows = rows_in(connection, table.name, table.range_column, ranges)
        for first, last in ranges:
            _check_range(db, table, repair, screen, {"first": first, "last": last}, finding)
        return finding
    with db.engine.connect() as connection:
        finding.rows = connection.execute(text(f"SELECT COUNT(*) FROM {table.name}")).scalar_one()
        low, high = connection.execute(text(table.bounds)).one()
    first = low
    while first is not None and first <= high:
        first = _check_range(db, table, repair, screen, {"first": first, "last": min(first + table.step - 1, high)},
                             finding)
    return finding


def rows_in(connection: Connection, table: str, column: str, ranges: tuple[tuple[int, int], ...]) -> int:
    """The rows of ``table`` whose ``column`` is in one of the (first, last) ``ranges``: a
    check of some ranges states the rows it read."""
    from sqlalchemy import text

    return sum(connection.execute(text(f"SELECT COUNT(*) FROM {table} WHERE {column} BETWEEN :first AND :last"),
                                  {"first": first, "last": last}).scalar_one() for first, last in ranges)


def _check_range(db: Database, table: DerivedTable, repair: bool, screen: Screen | None, bounds: dict,
                 finding: Finding) -> int | None:
    """Check (and with ``repair`` rebuild) one range into ``finding``; returns the first value
    of the range after it."""
    from sqlalchemy import text

    with (db.writer() if repair else db.engine.connect()) as connection, connection.begin():
        passed = screen is not None and screen(connection, table.name, bounds)
        wrong = 0 if passed else _differences(connection, table, bounds, finding)
        if wrong and repair:
            _rebuild(connection, table, bounds)
            finding.repaired = True
        return (connection.execute(text(table.following), bounds).scalar() if table.following
                else bounds["last"] + 1)


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


# A session's day in the day totals (store/day_totals.py), in SQL over ``sessions AS s``.
SESSION_DAY = "CASE WHEN s.ts_us IS NULL THEN 0 ELSE (s.ts_us + 62135596800000000) / 86400000000 + 1 END"


def recount_days(connection: Connection, days: set[int]) -> None:
    """Count the day totals of these days again from the records, a run of consecutive days
    at a time: after sessions are deleted on SQLite (on PostgreSQL, triggers of revision 0010
    do it)."""
    from council_db.store.id_runs import id_runs

    for first, last in id_runs(days):
        for table in DERIVED:
            if table.range_column == "day":
                _rebuild(connection, table, {"first": first, "last": last})


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
