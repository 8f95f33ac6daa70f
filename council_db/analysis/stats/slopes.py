"""Contrasts of least-squares slopes, with a cluster-robust SE from their influence functions.

A slope through the origin, b = sum(x y) / sum(x^2), on data the caller has centred (by its
mean for a slope with an intercept, within groups for a within-group slope), has influence
x (y - b x) / sum(x^2) per row. A weighted sum of slopes, each from its own rows, then has the
influence of its parts summed per cluster, and the CR1 variance G/(G-1) sum_g u_g^2 (G the
clusters any part touches), t with G-1 df. This is how two reviewers' slopes on the same
sessions are compared without pretending they are independent; a mean is the slope on x = 1.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from council_db.analysis.stats.clustered import cluster_codes
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import t_interval, t_p_value

CR1_SLOPES = "least squares, CR1 SE from influence functions, t with G-1 df"


class SlopePart(NamedTuple):
    """One slope of a contrast: its rows' x, y and cluster labels, and its weight in the sum."""

    x: np.ndarray
    y: np.ndarray
    cluster: np.ndarray
    weight: float = 1.0


def slope_contrast(parts: list[SlopePart], level: float = 0.95, method: str = CR1_SLOPES) -> Estimate:
    """sum_k weight_k b_k with its CR1 interval and the t-test of 0; missing (NaN) when a part
    has no variation in x or the parts touch fewer than two clusters. ``n_sessions`` is G."""
    labels = np.concatenate([np.asarray(p.cluster) for p in parts]) if parts else np.zeros(0)
    codes, g = cluster_codes(labels)
    influence = np.zeros(g)
    estimate, start = 0.0, 0
    for part in parts:
        x, y = np.asarray(part.x, dtype=np.float64), np.asarray(part.y, dtype=np.float64)
        mine = codes[start:start + len(x)]
        start += len(x)
        sxx = float((x * x).sum())  # sums, not BLAS dot products, which wait for busy cores
        if sxx <= 0:
            return Estimate.missing(method, len(np.unique(codes)), level)
        b = float((x * y).sum()) / sxx
        estimate += part.weight * b
        influence += np.bincount(mine, weights=part.weight * x * (y - b * x) / sxx, minlength=g)
    used = int((np.bincount(codes, minlength=g) > 0).sum())
    if used < 2:
        return Estimate.missing(method, used, level, estimate=estimate if parts else math.nan)
    se = math.sqrt(used / (used - 1) * float((influence * influence).sum()))
    low, high = t_interval(estimate, se, used - 1, level)
    p = float(t_p_value(estimate / se, used - 1)) if se > 0 else math.nan
    return Estimate(estimate, low, high, se, p, level, used, method)
