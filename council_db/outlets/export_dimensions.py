"""Export's named scores (a rubric's dimensions): read by one more query in the records' own
order and merged into them, so a record costs no query of its own and a database without
dimensions reads nothing more than before (one look at an empty table)."""

from __future__ import annotations

from typing import Any, Iterator

RecordKey = tuple[int, int, int, int]  # session_id, reviewer_id, model_id, position (scores' key)
ANY_DIMENSION = "SELECT 1 FROM score_dimensions LIMIT 1"
DIMENSION_ORDER = " ORDER BY d.session_id, d.reviewer_id, d.model_id, d.position, d.dimension_id"


class Dimensions:
    """The named scores of the records export reads, taken in record order."""

    def __init__(self, rows: Iterator[tuple]):
        self.rows = rows  # (session_id, reviewer_id, model_id, position, name, score), in DIMENSION_ORDER
        self.pending: tuple | None = next(self.rows, None)

    def upto(self, last: RecordKey) -> dict[RecordKey, dict[str, Any]]:
        """By record key, the named scores of the records up to ``last`` (in record order)
        not taken yet."""
        found: dict[RecordKey, dict[str, Any]] = {}
        while self.pending is not None and self.pending[:4] <= last:
            *key, name, score = self.pending
            found.setdefault(tuple(key), {})[name] = score
            self.pending = next(self.rows, None)
        return found


def any_dimension(connection) -> bool:
    """Whether the database holds any named score (most hold none)."""
    return connection.exec_driver_sql(ANY_DIMENSION).first() is not None
