"""``db check``'s day totals a range of days at a time: one sort of the records for all five tables.

Recomputing each day-totals table (sql/NAME.sql) sorts every record of the range by that
table's key: five sorts of the same records, most of ``db check``'s time. Instead, the
records are grouped once by every column any of the tables keys on or sums apart
(sql/day_records.sql; a few dozen groups a day), and each table's rows are summed from those
groups in Python and compared with the stored rows, every column as ``derived`` compares it,
but ``sessions``: a session counts once under a key, which no sum of groups tells. For it,
weights w(key) drawn at random for each check (a hash modulo PRIME, alike in SQL and Python)
give the sum over the range's rows of w(key) * sessions, and over the range's sessions of
SUM(DISTINCT w(key)) of their records: grouped by session in the order ``ix_sessions_ts_us``
and the key of ``scores`` already read them, so without a sort. The two are equal when every
count is right and differ otherwise but by a chance of about 1 in 2^28.

A range that passes has nothing to report; one that does not is compared row by row as
before (store/derived.py), so ``db check`` names the same rows.
"""

from __future__ import annotations

import secrets
import threading
from typing import TYPE_CHECKING, Callable

import numpy as np

from council_db.resources import read_sql
from council_db.store.day_sums import EXTREMES, TABLES, TotalsTable
from council_db.store.derived import RELATIVE_TOLERANCE

if TYPE_CHECKING:
    from sqlalchemy import Connection

PRIME = 2_147_483_647  # 2^31 - 1
FACTOR_BITS = 28  # a key's factors: with up to 5 integers below 2^31, the hash's sum stays below 2^63
SESSIONS = "sessions"
US_PER_DAY = 86_400_000_000
FROM_YEAR_ONE = 62_135_596_800_000_000
# each key column as SQL over a record ``sc`` of a session ``s`` (undated sessions: day 0)
KEY_SQL = {"day": f"(s.ts_us + {FROM_YEAR_ONE}) / {US_PER_DAY} + 1", "reviewer_id": "sc.reviewer_id",
           "model_id": "sc.model_id", "scale_id": "sc.scale_id", "slot": "sc.position"}
# the columns of sql/day_records.sql
GROUP = ("day", "reviewer_id", "model_id", "scale_id", "slot", "self_review", "known", "records", "score_sum",
         "score_sq_sum", "length_sum", "min_score", "max_score")
# each column of a day-totals table (but sessions) as its share of each group, from the groups' columns
PARTS: dict[str, Callable[[dict[str, np.ndarray]], np.ndarray]] = {
    "records": lambda g: g["records"],
    "self_reviews": lambda g: g["records"] * g["self_review"],
    "known_lengths": lambda g: g["records"] * g["known"],
    "score_sum": lambda g: g["score_sum"],
    "score_sq_sum": lambda g: g["score_sq_sum"],
    "self_score_sum": lambda g: g["score_sum"] * g["self_review"],
    "length_sum": lambda g: g["length_sum"],
    "min_score": lambda g: g["min_score"],
    "max_score": lambda g: g["max_score"],
}
Rows = dict[tuple, list]


class DayScreen:
    """One check's screen: ``passes(connection, table, bounds)``, computed once per range of
    days for every table (the checks of two threads share it)."""

    def __init__(self) -> None:
        self._factors = {table.name: [secrets.randbelow(PRIME)]
                         + [1 + secrets.randbelow((1 << FACTOR_BITS) - 1) for _ in table.key]
                         for table in TABLES}
        self._lock = threading.Lock()
        self._ranges: dict[tuple[int, int], tuple[threading.Lock, dict[str, bool]]] = {}

    def passes(self, connection: Connection, table: str, bounds: dict) -> bool:
        """Whether the table's rows for days :first..:last are the ones its records imply;
        False for a table this screen does not cover."""
        if table not in self._factors:
            return False
        with self._lock:
            lock, verdicts = self._ranges.setdefault((bounds["first"], bounds["last"]), (threading.Lock(), {}))
        with lock:
            if not verdicts:
                verdicts.update(self._screen(connection, bounds))
        return verdicts[table]

    def _weight(self, table: TotalsTable, key: tuple) -> int:
        first, *factors = self._factors[table.name]
        return (first + sum(factor * value for factor, value in zip(factors, key))) % PRIME

    def _weight_sql(self, table: TotalsTable, day: str) -> str:
        """w(key) in SQL (64-bit: PostgreSQL multiplies two integers in 32)."""
        first, *factors = self._factors[table.name]
        terms = [f"{factor} * CAST({day if name == 'day' else KEY_SQL[name]} AS BIGINT)"
                 for factor, name in zip(factors, table.key)]
        return f"({first} + {' + '.join(terms)}) % {PRIME}"

    def _screen(self, connection: Connection, bounds: dict) -> dict[str, bool]:
        from sqlalchemy import text

        groups = np.array(connection.execute(text(read_sql("day_records")), bounds).all(),
                          dtype=np.float64).reshape(-1, len(GROUP))
        counted = self._sessions(connection, bounds)
        verdicts = {}
        for table in TABLES:
            stored = {tuple(row[:len(table.key)]): list(row[len(table.key):]) for row in connection.execute(text(
                f"SELECT {', '.join(table.columns)} FROM {table.name} WHERE day BETWEEN :first AND :last"), bounds)}
            verdicts[table.name] = (_same(table, stored, _summed(table, groups))
                                    and self._sessions_agree(table, stored, counted))
        return verdicts

    def _sessions(self, connection: Connection, bounds: dict) -> dict[str, int]:
        """Per table with ``sessions``: the sum over the range's sessions of SUM(DISTINCT w(key))."""
        from sqlalchemy import text

        tables = [table for table in TABLES if SESSIONS in table.values]
        branches = []
        for day, where in ((KEY_SQL["day"], f"s.ts_us >= (:first - 1) * {US_PER_DAY} - {FROM_YEAR_ONE} "
                                             f"AND s.ts_us < :last * {US_PER_DAY} - {FROM_YEAR_ONE}"),
                           ("0", "s.ts_us IS NULL AND :first <= 0 AND 0 <= :last")):
            sums = ", ".join(
                f"SUM(DISTINCT {'CASE WHEN sc.display_order THEN ' if table.slots_only else ''}"
                f"{self._weight_sql(table, day)}{' END' if table.slots_only else ''}) AS w{number}"
                for number, table in enumerate(tables))
            branches.append(f"SELECT {sums} FROM sessions AS s JOIN scores AS sc ON sc.session_id = s.id "
                            f"WHERE {where} AND sc.exclusion_id IS NULL GROUP BY s.ts_us, s.id")
        found = connection.execute(text(
            f"SELECT {', '.join(f'SUM(w{number})' for number in range(len(tables)))} "
            f"FROM ({' UNION ALL '.join(branches)}) AS per_session"), bounds).one()
        return {table.name: int(value or 0) for table, value in zip(tables, found)}

    def _sessions_agree(self, table: TotalsTable, stored: Rows, counted: dict[str, int]) -> bool:
        if SESSIONS not in table.values:
            return True
        at = table.values.index(SESSIONS)
        return sum(self._weight(table, key) * values[at] for key, values in stored.items()) == counted[table.name]


def _summed(table: TotalsTable, groups: np.ndarray) -> Rows:
    """The table's rows (every value but sessions, None in its place) summed from the groups
    (one row of GROUP's columns each)."""
    if table.slots_only:
        groups = groups[groups[:, GROUP.index("slot")] >= 0]
    columns = dict(zip(GROUP, groups.T))
    keys, inverse = np.unique(np.stack([columns[name] for name in table.key], axis=1), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    values: list[list] = []
    for name in table.values:
        if name == SESSIONS:
            values.append([None] * len(keys))
        elif name in EXTREMES:
            combine, start = EXTREMES[name]
            extreme = np.full(len(keys), start)
            combine.at(extreme, inverse, PARTS[name](columns))
            values.append(extreme.tolist())
        else:
            values.append(np.bincount(inverse, weights=PARTS[name](columns), minlength=len(keys)).tolist())
    return {tuple(int(value) for value in key): list(row) for key, row in zip(keys.tolist(), zip(*values))}


def _same(table: TotalsTable, stored: Rows, summed: Rows) -> bool:
    """Every key in both and every value but sessions equal: floats sums to RELATIVE_TOLERANCE
    (as store/derived.py compares them), the rest exactly."""
    if stored.keys() != summed.keys():
        return False
    sums = table.sums
    for key, values in summed.items():
        for name, mine, theirs in zip(table.values, values, stored[key]):
            if name in sums:
                if abs(mine - theirs) > RELATIVE_TOLERANCE * (1 + abs(mine) + abs(theirs)):
                    return False
            elif name != SESSIONS and mine != theirs:
                return False
    return True
