"""Which rows of a batch the writer stores: the first of each record key, as the database's
INSERT ... ON CONFLICT DO NOTHING in batch order would (so the rows can then go in any order)."""

from __future__ import annotations

import numpy as np

from council_db.contract.score_batch import ScoreColumns


def first_of_each_key(columns: ScoreColumns) -> np.ndarray:
    """Per row: whether no earlier row of the batch has its key, i.e. what an INSERT ... ON
    CONFLICT DO NOTHING in batch order stores of it. Rows whose key is first can then go in
    any order."""
    keys = (columns.position, columns.model_id, columns.reviewer_id, columns.session_id)
    order = np.lexsort(keys)  # stable: among equal keys the earliest row comes first
    repeated = np.ones(len(order), dtype=bool)
    repeated[0] = False
    for key in keys:
        ordered = key[order]
        repeated[1:] &= ordered[1:] == ordered[:-1]
    first = np.ones(len(order), dtype=bool)
    first[order[repeated]] = False
    return first
