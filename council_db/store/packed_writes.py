"""Keeping ``packed_records`` (store/packed_records.py) in step with ``scores``, on a store that
keeps them (store/packing.py: `council-db db pack`; elsewhere every function here writes nothing).

The import's writer appends, per (session, scale) a batch stored usable records in, one part
holding them (``append``): from the batch in memory, never read back. Whatever takes records
out of a session that stays (undoing one import, ``db check --repair``) packs the session
again from its scores (``rebuild``). A session deleted whole takes its parts along (a
foreign key ON DELETE CASCADE on SQLite, a statement trigger on PostgreSQL: revision 0020).
Re-marking a reviewer changes no record: the pass leaves out non-judges when it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from council_db.contract.score_batch import ScoreColumns
from council_db.integer_keys import sort_order
from council_db.store.id_runs import id_runs
from council_db.store.packed_records import RECORDS, SCORE_ROWS, SESSIONS_AT_ONCE, split_by_key

if TYPE_CHECKING:
    from sqlalchemy import Connection

COLUMNS = ("session_id", "scale_id", "part", "data")
KEY = "session_id, scale_id, part"
STATE_SQL = "SELECT MAX(value) FROM store_options WHERE name = 'packed_records'"  # NULL: no copy kept
KEPT = "council_db_packed_records_kept"  # connection.info: (the transaction, whether the store keeps parts)
# the writer's insert (store/writer.py ScoreWriter._insert_columns): table, columns, conflict, column lists
Insert = Callable[[str, tuple, str, list], int]


def append(connection: Connection, insert: Insert, columns: ScoreColumns, new: np.ndarray, fresh: np.ndarray) -> None:
    """One part per (session, scale) for the usable records among the ``new`` rows (those the
    batch stored); a session the batch created (its ``fresh`` rows) starts at part 0, an older
    one continues after its last part (writers take turns: no other writer adds one meanwhile)."""
    rows = new & (columns.exclusion == 0)
    if not rows.any() or not keeps_parts(connection):
        return
    kept = columns.select(rows)
    order = sort_order(kept.session_id, kept.scale_id, kept.reviewer_id, kept.model_id, kept.position)
    records = np.empty(len(order), RECORDS)
    records["session"], records["scale"] = kept.session_id[order], kept.scale_id[order]
    records["reviewer"], records["model"], records["length"] = (kept.reviewer_id[order], kept.model_id[order],
                                                                kept.length[order])
    records["slot"] = np.where(kept.display_order[order], kept.position[order], -1)
    records["score"] = kept.score[order]
    starts, data = split_by_key(records)
    sessions, scales = records["session"][starts].tolist(), records["scale"][starts].tolist()
    created = set(columns.session_id[fresh].tolist())
    following = _next_parts(connection, {s for s in sessions if s not in created})
    parts = [following.get((session, scale), 0) for session, scale in zip(sessions, scales)]
    insert("packed_records", COLUMNS, KEY, [sessions, scales, parts, data])


def _next_parts(connection: Connection, sessions: set[int]) -> dict[tuple[int, int], int]:
    """(session, scale) -> the part after its last, for these sessions' stored parts."""
    from council_db.store.named_sql import run

    found: dict[tuple[int, int], int] = {}
    for first, last in id_runs(sessions):
        for session, scale, part in run(
                connection, "SELECT session_id, scale_id, MAX(part) FROM packed_records WHERE session_id BETWEEN "
                ":first AND :last GROUP BY session_id, scale_id", {"first": first, "last": last}):
            found[(session, scale)] = part + 1
    return found


def keeps_parts(connection: Connection) -> bool:
    """Whether the store keeps packed_records (on, or being packed by `db pack`): asked once a
    write transaction, as `db pack` and `--off` change it only under the write lock."""
    transaction = connection.get_transaction()
    kept = connection.info.get(KEPT)
    if transaction is None or kept is None or kept[0] is not transaction:
        kept = connection.info[KEPT] = (transaction, connection.exec_driver_sql(STATE_SQL).scalar() is not None)
    return kept[1]


def rebuild(connection: Connection, session_ids: set[int]) -> None:
    """Pack these sessions again from their scores (``repack``), in the caller's write
    transaction, SESSIONS_AT_ONCE ids at a time, so memory stays bounded."""
    if not keeps_parts(connection):
        return
    for run_first, run_last in id_runs(session_ids):
        for first in range(run_first, run_last + 1, SESSIONS_AT_ONCE):
            repack(connection, first, min(first + SESSIONS_AT_ONCE - 1, run_last))


def repack(connection: Connection, first: int, last: int) -> int:
    """Sessions ``first``..``last`` packed again from their usable scores, one part per
    (session, scale); the records packed. Through the driver's own cursor: 16M rows through
    SQLAlchemy's cost several times as long."""
    mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    cursor = connection.connection.driver_connection.cursor()
    cursor.execute(f"DELETE FROM packed_records WHERE session_id BETWEEN {mark} AND {mark}", (first, last))
    cursor.execute(SCORE_ROWS.format(sessions=f"session_id BETWEEN {mark} AND {mark}", scale=""), (first, last))
    rows = cursor.fetchall()
    if rows:
        records = np.fromiter(rows, dtype=RECORDS, count=len(rows))
        starts, data = split_by_key(records)
        cursor.executemany(f"INSERT INTO packed_records (session_id, scale_id, part, data) "
                           f"VALUES ({mark}, {mark}, 0, {mark})",
                           list(zip(records["session"][starts].tolist(), records["scale"][starts].tolist(), data)))
    return len(rows)
