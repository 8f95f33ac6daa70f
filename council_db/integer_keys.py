"""Rows in the order of several integer keys, sorted as one number: the writer's batches
(store/batch_keys, session_stats, packed_writes) and the report's records (analysis/stats)
both sort by ids, positions and lengths, where ``np.lexsort``'s pass per key costs several
times one stable argsort (1.6 against 0.13 ms for a report's 16,000 records and four keys)."""

from __future__ import annotations

import math

import numpy as np


def sort_order(*keys: np.ndarray) -> np.ndarray:
    """np.lexsort(keys[::-1]): the rows in order of the keys, the first the primary, stable
    (equal rows keep their order). Integer keys whose ranges multiply to under 2^62 are
    sorted as one number; others by np.lexsort."""
    if all(key.dtype.kind in "biu" for key in keys) and len(keys[0]):
        lows = [int(key.min()) for key in keys]
        spans = [int(key.max()) - low + 1 for key, low in zip(keys, lows)]
        if math.prod(spans) < 1 << 62:
            combined = np.zeros(len(keys[0]), dtype=np.int64)
            for key, low, span in zip(keys, lows, spans):
                combined *= span
                combined += key.astype(np.int64, copy=False) - low
            return np.argsort(combined, kind="stable")
    return np.lexsort(keys[::-1])  # lexsort's primary key is its last
