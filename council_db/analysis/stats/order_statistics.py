"""The median and np.quantile's default (linear) quantiles, to numpy's floats, without numpy.ma:
np.median asks np.ma.isMaskedArray of every float result and np.quantile's partition asks
np.unique, which asks np.ma.is_masked; the first such call imports numpy.ma (13-23 ms of a
report's first call in a process). The same order statistics, found by one partition, and
numpy's own arithmetic on them."""

from __future__ import annotations

import math

import numpy as np


def _ranked(values: np.ndarray, ranks: np.ndarray, overwrite: bool) -> np.ndarray:
    """The values at these 0-based ranks of the sorted values (-1: the largest; NaNs sort
    last), by one partition; ``overwrite`` partitions ``values`` itself (no copy of a million
    sessions' statistics)."""
    work = values if overwrite else np.array(values, dtype=values.dtype)
    work.partition(np.asarray(ranks) % len(work))
    return work[ranks]


def median(values: np.ndarray, overwrite: bool = False) -> float:
    """np.median of a non-empty 1-D array (NaN where any value is NaN), as a float."""
    n = len(values)
    middle = [n // 2 - 1, n // 2] if n % 2 == 0 else [n // 2]
    found = _ranked(values, np.array([*middle, -1]), overwrite)
    if values.dtype.kind == "f" and math.isnan(found[-1]):
        return math.nan
    return float((found[0] + found[1]) / 2.0) if n % 2 == 0 else float(found[0])


def linear_quantiles(values: np.ndarray, levels: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """np.quantile(values, levels) of non-empty finite 1-D values, by its default (linear)
    method: the virtual index (n - 1) q, the largest value at or past the last, and numpy's
    interpolation (from the nearer side past a weight of one half)."""
    n = len(values)
    at = (n - 1) * np.asarray(levels, dtype=np.float64)
    below = np.floor(at)
    last = at >= n - 1
    below[last] = -1.0
    lower, upper = below.astype(np.intp), np.where(last, -1, below + 1).astype(np.intp)
    found = _ranked(values, np.concatenate([lower, upper]), overwrite)
    a, b, weight = found[:len(lower)], found[len(lower):], at - below
    step = b - a
    return np.where(weight >= 0.5, b - step * (1 - weight), a + step * weight)
