"""Day totals: usable scores summed per UTC day and reviewer, candidate, reviewer-candidate
pair, scale or display slot, kept by the importer in its transaction.

The views for sqlite3 and Datasette users sum these small tables instead of every record
(migration 0010; a million sessions over a year are a few thousand rows). For each batch,
numpy sums the batch's new usable rows per key, and one upsert per table adds them to the
stored rows: a day's rows grow across batches and imports. Sums, counts and extremes add
up; ``sessions`` (sessions with at least one score under the key) does not, when a batch
carries more records of a session stored before it (a session cut between two batches, or
a file grown since its last import). For those sessions a session counts under a key only
where it had no stored row there: store/stored_keys.py holds, for the import's life, which
keys each such session is counted under already, reading a session's stored rows once.

sql/NAME.sql define the same rows over a range of days; ``council-db db check`` compares
them with the tables (store/derived.py) and --repair rebuilds a range that differs.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Sequence

import numpy as np

from council_db.store.day_sums import EXTREMES, TABLES, TotalsRows, TotalsTable, sums
from council_db.store.provenance import RECORD_OWNER
from council_db.store.stored_keys import StoredKeys

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.contract.score_batch import ScoreColumns

ROWS_PER_STATEMENT = 500
KEYS_PER_QUERY = 200  # record keys looked up in one statement
US_PER_DAY = 86_400_000_000
FROM_YEAR_ONE = 62_135_596_800_000_000  # microseconds from 0001-01-01 to 1970-01-01 (contract.timestamps.MIN_US)
UNDATED = 0  # the day of a session without a time


def day_numbers(ts_us: Sequence[int | None]) -> np.ndarray:
    """Each time's UTC date as a day number (1 = 0001-01-01, as ``date.toordinal()``), UNDATED for None."""
    return np.array([UNDATED if t is None else (t + FROM_YEAR_ONE) // US_PER_DAY + 1 for t in ts_us], dtype=np.int64)


def _in_runs(session_id: np.ndarray, runs: list[tuple[int, int]]) -> np.ndarray:
    """Per row: its session's id lies in one of the runs (first, last)."""
    found = np.zeros(len(session_id), dtype=bool)
    for first, last in runs:
        found |= (session_id >= first) & (session_id <= last)
    return found


def _new_rows(columns: ScoreColumns, day: np.ndarray, new: np.ndarray) -> TotalsRows:
    """The batch's new usable rows."""
    keep = new & (columns.exclusion == 0)
    if keep.all():  # the usual batch
        keep = slice(None)
    return TotalsRows(columns.session_id[keep], day[keep], columns.reviewer_id[keep], columns.model_id[keep],
                      columns.scale_id[keep], columns.position[keep], columns.display_order[keep],
                      columns.self_review[keep], columns.score[keep], columns.length[keep].astype(np.float64),
                      np.ones(len(columns.session_id) if isinstance(keep, slice) else int(keep.sum()), dtype=bool))


class DayTotalsWriter:
    """Adds each batch's day totals on the importer's connection, in its transaction."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self.dialect = connection.dialect.name
        self.keys = StoredKeys(connection)

    def stored(self, columns: ScoreColumns, day: np.ndarray,
               runs: list[tuple[int, int]]) -> tuple[np.ndarray, TotalsRows | None, set[int | None]]:
        """Read before the batch's insert: per batch row, whether its key is stored already;
        rows standing for the keys under which the sessions whose ids lie in ``runs`` (first,
        last: sessions the batch adds to that were stored before it) are counted already,
        None without any (the usual batch); and the imports that stored the held rows
        (store/provenance.py). ``day`` is each batch row's session's day."""
        held = np.zeros(len(columns.session_id), dtype=bool)
        if not runs:
            return held, None, set()
        self.keys.hold({session for first, last in runs for session in range(first, last + 1)})
        older = np.flatnonzero(_in_runs(columns.session_id, runs))
        keys = [column[older] for column in (columns.session_id, columns.reviewer_id, columns.model_id,
                                             columns.position)]
        maybe = self.keys.records.contains(keys)
        owners: set[int | None] = set()
        if maybe.any():
            found, owners = self._stored_records([key[maybe] for key in keys])
            held[older[maybe][found]] = True
        return held, self._counted(columns, day, older), owners

    def _stored_records(self, keys: list[np.ndarray]) -> tuple[np.ndarray, set[int | None]]:
        """Which of these record keys are stored (a hash matched them), and the imports that stored them."""
        mark = "%s" if self.dialect == "postgresql" else "?"
        wanted = list(zip(*(key.tolist() for key in keys)))
        owners: dict[tuple, int | None] = {}
        for start in range(0, len(wanted), KEYS_PER_QUERY):
            chunk = wanted[start:start + KEYS_PER_QUERY]
            values = ", ".join([f"({mark}, {mark}, {mark}, {mark})"] * len(chunk))
            owners.update((tuple(row[:4]), row[4]) for row in self.connection.exec_driver_sql(
                f"SELECT session_id, reviewer_id, model_id, position, {RECORD_OWNER} FROM scores "
                f"WHERE (session_id, reviewer_id, model_id, position) IN (VALUES {values})",
                tuple(value for key in chunk for value in key)))
        return np.array([key in owners for key in wanted], dtype=bool), set(owners.values())

    def _counted(self, columns: ScoreColumns, day: np.ndarray, older: np.ndarray) -> TotalsRows | None:
        """For the usable ``older`` rows whose session is counted under its (day, scale) already,
        a row standing for the keys it is counted under: its reviewer, model and display slot
        where it is counted under those, else a value no batch row has (the least less one)."""
        rows = older[columns.exclusion[older] == 0]
        session, reviewer, model, scale, slot = (column[rows] for column in (
            columns.session_id, columns.reviewer_id, columns.model_id, columns.scale_id, columns.position))
        under = self.keys.counted
        counted = under["scale"].contains([session, scale])
        if not counted.any():
            return None
        session, reviewer, model, scale, slot, rows = (part[counted] for part in (
            session, reviewer, model, scale, slot, rows))
        shown = columns.display_order[rows] & under["slot"].contains([session, scale, slot])
        reviewer = np.where(under["reviewer"].contains([session, reviewer, scale]), reviewer,
                            columns.reviewer_id.min() - 1)
        model = np.where(under["model"].contains([session, model, scale]), model, columns.model_id.min() - 1)
        no, zero = np.zeros(len(rows), dtype=bool), np.zeros(len(rows))
        return TotalsRows(session, day[rows], reviewer, model, scale, np.where(shown, slot, 0), shown, no, zero, zero,
                          no)

    def add(self, columns: ScoreColumns, day: np.ndarray, new: np.ndarray, before: TotalsRows | None) -> None:
        """Add the totals of the batch's ``new`` rows, counting a session under a key only
        where the rows stored ``before`` the batch have none. ``day`` as for ``stored``."""
        self.keys.add(columns, new)
        parts = [] if before is None else [before]
        parts.append(_new_rows(columns, day, new))
        summed = sums(TABLES, TotalsRows.joined(parts))
        present = tuple(table for table in TABLES if table.name in summed)
        if self.dialect == "postgresql" and present:  # every table in one statement: one round trip
            self.connection.exec_driver_sql(_unnest_upsert(present), tuple(
                column.tolist() for table in present for column in summed[table.name]))
            return
        for table in present:
            self._upsert(table, [column.tolist() for column in summed[table.name]])

    def _upsert(self, table: TotalsTable, data: list[list]) -> None:
        """SQLite: the rows as multi-row VALUES lists."""
        width = len(data)
        for start in range(0, len(data[0]), ROWS_PER_STATEMENT):
            chunk = [column[start:start + ROWS_PER_STATEMENT] for column in data]
            flat = [value for row in zip(*chunk) for value in row]
            self.connection.exec_driver_sql(_values_upsert(table, len(flat) // width), tuple(flat))


def _on_conflict(table: TotalsTable) -> str:
    """Adds a row's values to the stored row of its key: sums add, extremes keep the extreme."""
    name = table.name

    def merged(column: str) -> str:
        if column in EXTREMES:
            closer = "<" if column == "min_score" else ">"
            return (f"{column} = CASE WHEN excluded.{column} {closer} {name}.{column} "
                    f"THEN excluded.{column} ELSE {name}.{column} END")
        return f"{column} = {name}.{column} + excluded.{column}"

    return f"ON CONFLICT ({', '.join(table.key)}) DO UPDATE SET {', '.join(map(merged, table.values))}"


@cache
def _values_upsert(table: TotalsTable, rows: int) -> str:
    one = "(" + ", ".join("?" * len(table.columns)) + ")"
    return f"INSERT INTO {table.name} ({', '.join(table.columns)}) VALUES {', '.join([one] * rows)} " \
           + _on_conflict(table)


@cache
def _unnest_upsert(tables: tuple[TotalsTable, ...]) -> str:
    """PostgreSQL: the tables' rows as one binary array parameter per column (as
    store.writer does), all in one statement: an INSERT each, the first ones in WITH."""
    from sqlalchemy.dialects import postgresql

    from council_db.store.models import Base

    def insert(table: TotalsTable) -> str:
        model = Base.metadata.tables[table.name]
        arrays = ", ".join(f"%b::{model.c[name].type.compile(dialect=postgresql.dialect())}[]"
                           for name in table.columns)
        return (f"INSERT INTO {table.name} ({', '.join(table.columns)}) SELECT * FROM unnest({arrays}) "
                + _on_conflict(table))

    *first, last = tables
    added = ", ".join(f"{table.name}_added AS ({insert(table)})" for table in first)
    return (f"WITH {added} " if added else "") + insert(last)
