"""Ranks over resamples: where each column (a candidate) places in each row (a resample)."""

from __future__ import annotations

import numpy as np


def ranks_of_rows(samples: np.ndarray) -> np.ndarray:
    """Rank of each column in each row, 1 = highest; a model absent from a resample (NaN) ranks last."""
    values = np.where(np.isfinite(samples), samples, -np.inf)
    ranks = np.empty(values.shape, dtype=np.int64)
    rows = np.arange(values.shape[0])[:, None]
    ranks[rows, np.argsort(-values, axis=1, kind="stable")] = np.arange(1, values.shape[1] + 1)
    return ranks
