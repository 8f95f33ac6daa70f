"""Writing a batch's named scores (a rubric's dimensions, models.ScoreDimension) beside its
score rows, in the same transaction.

A dimension's name is stored once (``dimension_names``) and its id cached for the transaction,
as ScoreWriter caches model ids. A record's dimensions are written only where the record itself
was (its key was new): an import of the same line again stores nothing twice. PostgreSQL copies
the rows of sessions the batch created straight in by binary COPY (five per record for a
five-dimension rubric: the plain insert would cost most of such an import) and the others
through a staging table (store.pg_copy); SQLite inserts multi-row VALUES lists.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Callable

import numpy as np

from council_db.contract.score_batch import DimensionColumns, ScoreColumns
from council_db.store.pg_copy import CopyTable, CopyWriter

if TYPE_CHECKING:
    from sqlalchemy import Connection

COLUMNS = ("session_id", "reviewer_id", "model_id", "position", "dimension_id", "score")
KEY = "session_id, reviewer_id, model_id, position, dimension_id"
InsertColumns = Callable[[str, tuple[str, ...], str, list[list]], int]  # ScoreWriter._insert_columns
SelectIds = Callable[[str, str, list[str]], list[tuple]]  # ScoreWriter._select_ids


class DimensionWriter:
    """The dimension rows of the records a ScoreWriter has just stored."""

    def __init__(self, connection: Connection, copies: CopyWriter, insert_columns: InsertColumns,
                 select_ids: SelectIds):
        self.arrays = connection.dialect.name == "postgresql"
        self.copies, self.insert_columns, self.select_ids = copies, insert_columns, select_ids
        self.ids: dict[str, int] = {}  # dimension name -> id, for the writer's transaction

    def write(self, columns: ScoreColumns, dimensions: DimensionColumns, new: np.ndarray, fresh: np.ndarray) -> None:
        """The entries of the ``new`` rows of ``columns`` (the batch's records with ids);
        ``fresh``: rows of sessions this batch created, which no stored row can share a key with."""
        stored = new[dimensions.row]
        if not stored.any():
            return
        self._name_ids([dimensions.names[code] for code in np.unique(dimensions.name[stored]).tolist()])
        ids = np.array([self.ids.get(name, 0) for name in dimensions.names], dtype=np.int64)
        rows = dimensions.row[stored]
        values = [columns.session_id[rows], columns.reviewer_id[rows], columns.model_id[rows], columns.position[rows],
                  ids[dimensions.name[stored]], dimensions.score[stored]]
        if not self.arrays:
            self.insert_columns("score_dimensions", COLUMNS, KEY, [column.tolist() for column in values])
            return
        straight = fresh[rows]
        if straight.any():
            self.copies.copy(_copy_table(), [column[straight] for column in values])
        if not straight.all():
            self.copies.insert(_copy_table(), [column[~straight] for column in values])

    def _name_ids(self, names: list[str]) -> None:
        missing = [name for name in names if name not in self.ids]
        if missing:
            self.insert_columns("dimension_names", ("name",), "name", [missing])
            self.ids.update(self.select_ids("dimension_names", "name", missing))


@cache
def _copy_table() -> CopyTable:
    return CopyTable.of("score_dimensions", COLUMNS, KEY)
