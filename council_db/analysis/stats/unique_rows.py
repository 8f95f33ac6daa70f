"""Distinct rows of small non-negative integer columns, as np.unique(np.stack(...), axis=1)
gives them, through one int64 key per row: unique over axis 1 sorts a structured view and is
about ten times slower on a report's hundred thousand records. And distinct values, as
np.unique(values) gives them, by one sort (the order of several keys: council_db.integer_keys)."""

from __future__ import annotations

import numpy as np


def unique_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct rows as a (columns, rows) array in sorted order, each input row's index among
    them, how often each occurs): the same as np.unique(np.stack(columns), axis=1,
    return_inverse=True, return_counts=True) for non-negative integer codes."""
    sizes = [int(c.max()) + 1 if len(c) else 1 for c in columns]
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column, size in zip(columns, sizes):
        key = key * size + column.astype(np.int64)
    distinct, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    rows = []
    for size in reversed(sizes):
        rows.append(distinct % size)
        distinct = distinct // size
    return np.stack(rows[::-1]), inverse.reshape(-1), counts


def distinct(values: np.ndarray) -> np.ndarray:
    """np.unique(values): the sorted distinct values of the flattened array (NaNs as one), by
    one sort. numpy 2.4's np.unique without an index or counts builds a hash table instead:
    3-9 times slower on the report's integer codes and times (0.75 against 0.24 ms for 16,000
    records of 1,000 sessions), and it imports numpy.ma on its first call."""
    ordered = np.sort(np.asarray(values).ravel())
    if ordered.dtype.kind == "f" and len(ordered) and np.isnan(ordered[-1]):
        ordered = ordered[:np.searchsorted(ordered, np.nan) + 1]  # NaNs sort last: keep the first
    keep = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
