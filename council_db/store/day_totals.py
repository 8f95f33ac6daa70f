"""Day totals: usable scores summed per UTC day and reviewer, candidate, reviewer-candidate
pair, scale or display slot, kept by the importer in its transaction.

The views for sqlite3 and Datasette users sum these small tables instead of every record
(migration 0010; a million sessions over a year are a few thousand rows). For each batch,
numpy sums the batch's new usable rows per key, and one upsert per table adds them to the
stored rows: a day's rows grow across batches and imports. Sums, counts and extremes add
up; ``sessions`` (sessions with at least one score under the key) does not, when a batch
carries more records of a session stored before it (a session cut between two batches, or
a file grown since its last import). For those sessions the rows stored before the batch
are read first, and a session counts under a key only where it had no stored row there.

sql/NAME.sql define the same rows over a range of days; ``council-db db check`` compares
them with the tables (store/derived.py) and --repair rebuilds a range that differs.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Sequence

import numpy as np

from council_db.store.day_sums import EXTREMES, TABLES, TotalsRows, TotalsTable, sums
from council_db.store.provenance import RECORD_OWNER

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.contract.score_batch import ScoreColumns

ROWS_PER_STATEMENT = 500
MODELS_LISTED = 1_000  # a batch's models named in the query of stored rows (more: every row is read)
OTHER_MODEL = -1  # no model's id: stands for the models a batch does not hold
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

    def stored(self, columns: ScoreColumns, day: np.ndarray,
               runs: list[tuple[int, int]]) -> tuple[np.ndarray, TotalsRows | None, set[int | None]]:
        """Read before the batch's insert: per batch row, whether its key is stored already;
        the usable rows stored of the sessions whose ids lie in ``runs`` (first, last:
        sessions the batch adds to that were stored before it), None without any (the usual
        batch); and the imports that stored the held rows (store/provenance.py). ``day`` is
        each batch row's session's day.

        Only the batch's models need their stored rows one by one (a row can only repeat a
        key of its own model); the others matter only for the sessions counted under a
        reviewer, scale or display slot, so the database returns each such combination once,
        under model OTHER_MODEL. A judge log whose sessions gain records all through the file
        (fastchat-single) read every stored row of them for every batch: its import time grew
        with the square of the gradings per session."""
        if not runs:
            return np.zeros(len(columns.session_id), dtype=bool), None, set()
        ours = np.unique(columns.model_id[_in_runs(columns.session_id, runs)]).tolist()
        mark = "%s" if self.dialect == "postgresql" else "?"
        models = ", ".join([mark] * len(ours))
        mine = f"model_id IN ({models})" if len(ours) <= MODELS_LISTED else "TRUE"
        found: list[tuple] = []
        for run in runs:
            found += self.connection.exec_driver_sql(
                f"SELECT DISTINCT session_id, reviewer_id, CASE WHEN {mine} THEN model_id ELSE {OTHER_MODEL} END, "
                f"CASE WHEN {mine} OR display_order THEN position ELSE 0 END, scale_id, display_order, "
                f"CASE WHEN exclusion_id IS NULL THEN 1 ELSE 0 END, CASE WHEN {mine} THEN {RECORD_OWNER} END "
                f"FROM scores WHERE session_id BETWEEN {mark} AND {mark}",
                (*(ours * 3 if len(ours) <= MODELS_LISTED else ()), *run)).all()
        if not found:
            return np.zeros(len(columns.session_id), dtype=bool), None, set()
        return _stored(columns, day, found)

    def add(self, columns: ScoreColumns, day: np.ndarray, new: np.ndarray, before: TotalsRows | None) -> None:
        """Add the totals of the batch's ``new`` rows, counting a session under a key only
        where the rows stored ``before`` the batch have none. ``day`` as for ``stored``."""
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


def _stored(columns: ScoreColumns, day: np.ndarray,
            before: list[tuple]) -> tuple[np.ndarray, TotalsRows, set[int | None]]:
    """``DayTotalsWriter.stored`` from the stored rows' keys (session, reviewer, model,
    position, scale, display order, usable, owner). Only the batch's rows of those sessions
    can be held: a few, looked up as tuples."""
    theirs = np.flatnonzero(np.isin(columns.session_id, [row[0] for row in before]))
    owners = {row[:4]: row[7] for row in before}
    keys = list(zip(*(column[theirs].tolist() for column in (
        columns.session_id, columns.reviewer_id, columns.model_id, columns.position))))
    held = np.zeros(len(columns.session_id), dtype=bool)
    held[theirs] = [key in owners for key in keys]
    session_day = dict(zip(columns.session_id[theirs].tolist(), day[theirs].tolist()))
    usable = [row for row in before if row[6]]
    session, reviewer, model, slot, scale, shown = (np.array([row[n] for row in usable], dtype=np.int64)
                                                    for n in range(6))
    no, zero = np.zeros(len(usable), dtype=bool), np.zeros(len(usable))
    totals = TotalsRows(session, np.array([session_day[s] for s in session.tolist()], dtype=np.int64), reviewer,
                        model, scale, slot, shown.astype(bool), no, zero, zero, no)
    return held, totals, {owners[key] for key in keys if key in owners}


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
