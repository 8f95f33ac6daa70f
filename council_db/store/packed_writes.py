"""Keeping ``packed_records`` (store/packed_records.py) in step with ``scores``.

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
from council_db.store.id_runs import id_runs
from council_db.store.packed_records import RECORDS, SESSIONS_AT_ONCE, from_scores, split_by_key
from council_db.store.session_stats import sort_order

if TYPE_CHECKING:
    from sqlalchemy import Connection

COLUMNS = ("session_id", "scale_id", "part", "data")
KEY = "session_id, scale_id, part"
# the writer's insert (store/writer.py ScoreWriter._insert_columns): table, columns, conflict, column lists
Insert = Callable[[str, tuple, str, list], int]


def append(connection: Connection, insert: Insert, columns: ScoreColumns, new: np.ndarray, fresh: np.ndarray) -> None:
    """One part per (session, scale) for the usable records among the ``new`` rows (those the
    batch stored); a session the batch created (its ``fresh`` rows) starts at part 0, an older
    one continues after its last part (writers take turns: no other writer adds one meanwhile)."""
    rows = new & (columns.exclusion == 0)
    if not rows.any():
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
    from sqlalchemy import text

    found: dict[tuple[int, int], int] = {}
    for first, last in id_runs(sessions):
        for session, scale, part in connection.execute(text(
                "SELECT session_id, scale_id, MAX(part) FROM packed_records WHERE session_id BETWEEN :first AND :last "
                "GROUP BY session_id, scale_id"), {"first": first, "last": last}):
            found[(session, scale)] = part + 1
    return found


def rebuild(connection: Connection, session_ids: set[int]) -> None:
    """Pack these sessions again from their scores, one part per (session, scale), in the
    caller's write transaction; a range of ids at a time, so memory stays bounded."""
    from sqlalchemy import text

    from council_db.store.reading import EngineReader

    reader = EngineReader(connection)
    for run_first, run_last in id_runs(session_ids):
        for first in range(run_first, run_last + 1, SESSIONS_AT_ONCE):
            bounds = {"first": first, "last": min(first + SESSIONS_AT_ONCE - 1, run_last)}
            connection.execute(text("DELETE FROM packed_records WHERE session_id BETWEEN :first AND :last"), bounds)
            chunks = list(from_scores(reader, "session_id BETWEEN :first AND :last", bounds))
            if chunks:
                records = np.concatenate(chunks)
                starts, data = split_by_key(records)
                connection.execute(
                    text("INSERT INTO packed_records (session_id, scale_id, part, data) VALUES (:s, :c, 0, :d)"),
                    [{"s": s, "c": c, "d": d} for s, c, d in zip(records["session"][starts].tolist(),
                                                                  records["scale"][starts].tolist(), data)])
