"""The score rows' columns, and SQLite's choice among them for one statement."""

from __future__ import annotations

import numpy as np

from council_db.contract.score_batch import ScoreColumns
from council_db.store.insert_statements import NULL

SCORE_COLUMNS = ("session_id", "reviewer_id", "model_id", "position", "response_length_chars",
                 "score_value", "scale_id", "display_order", "self_review", "exclusion_id", "envelope_id", "import_id",
                 "ts_us")
SCORE_KEY = "session_id, reviewer_id, model_id, position"

# Columns that often hold one value in every row of a batch (its scale, whether positions are
# display slots, the import; NULL: no exclusion, own envelope or own time): bound once.
_SHARED_COLUMNS = ("scale_id", "display_order", "self_review", "exclusion_id", "envelope_id", "ts_us")
_ZERO_IS_NULL = ("exclusion_id", "envelope_id", "ts_us")  # 0: no exclusion, own envelope or own time
_TRUTHS = ("display_order", "self_review")


def given_score_columns(columns: ScoreColumns, envelope_ids: np.ndarray | None, times: np.ndarray | None,
                        import_id: int | None) -> tuple[tuple[str, ...], list[list], dict[str, int | None]]:
    """SQLite: the score columns bound in each row with their values, and apart those holding
    one value in every row, which the statement binds once (insert_statements.split_shared:
    a bound None cost sqlite3 0.6 us, a bool 0.5, an int 0.05). Told from the arrays, not the
    lists: a look through Python lists for one value cost 0.2 us a record. A 0 in the
    exclusion, own envelope or own time is NULL; a truth value goes as 0 or 1, as sqlite3
    stores a bool."""
    count = len(columns.session_id)
    arrays: dict[str, np.ndarray | None] = {
        "session_id": columns.session_id, "reviewer_id": columns.reviewer_id, "model_id": columns.model_id,
        "position": columns.position, "response_length_chars": columns.length, "score_value": columns.score,
        "scale_id": columns.scale_id, "display_order": columns.display_order, "self_review": columns.self_review,
        "exclusion_id": columns.exclusion, "envelope_id": envelope_ids, "ts_us": times}
    shared: dict[str, int | None] = {"import_id": import_id}
    for name in _SHARED_COLUMNS:
        column = arrays[name]
        if column is None or not count or column.min() == column.max():
            first = 0 if column is None or not count else int(column[0])
            shared[name] = None if first == 0 and name in _ZERO_IS_NULL else first
            del arrays[name]
    values = [_values(name, column) for name, column in arrays.items()]
    return tuple(arrays), values, shared


def _values(name: str, column: np.ndarray) -> list:
    """A column's Python values: 0 as NULL where 0 means none (exclusion, envelope, time)."""
    if name in _ZERO_IS_NULL:
        values = column.astype(object)
        values[column == 0] = NULL
        return values.tolist()
    if name in _TRUTHS:
        return column.astype(np.int64).tolist()
    return column.tolist()
