"""Cluster-robust intervals for a smooth function of summed per-cluster parts (the delta method).

A statistic f of the totals T = sum_g t_g (agreement and kappa of a verdict table, a ratio of
sums) varies, to first order, as grad f(T) . (T* - T). Clusters (sessions, items) are the
independent units, so the totals' covariance is the CR1 one, G/(G-1) sum_g (t_g - T/G)(...)',
and SE^2 = G/(G-1) sum_g (grad f . (t_g - T/G))^2, with t(G-1) for the interval (Cameron &
Miller 2015 for CR1; Yang & Zhou 2014 use the same linearisation for kappa on clustered data).
A function of proportions is unchanged when every part is scaled (grad f . T = 0), so the
gradient is taken numerically at T/G, the mean cluster, by central differences: the statistic
needs no derivative of its own. One pass over the clusters: what keeps a report's agreement
section cheap where a bootstrap of thousands of resamples per judge and figure would not be.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import t_interval

STEP = 1e-6  # relative step of the central differences


def linearized_estimate(per_cluster: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], level: float = 0.95,
                        method: str = "", bounds: tuple[float, float] = (-math.inf, math.inf)) -> Estimate:
    """f(sum of the rows) with its CR1 delta-method interval, clipped to ``bounds`` (the
    statistic's range: clipping drops impossible values only). ``statistic`` maps totals, one
    row per evaluation, to one value each. ``n_sessions`` is G, the rows; no p-value."""
    parts = np.asarray(per_cluster, dtype=np.float64)
    g = len(parts)
    if g == 0:
        return Estimate.missing(method, 0, level, se=None, p_value=None)
    mean = parts.mean(axis=0)
    estimate = float(statistic(mean[None, :])[0])
    if g < 2 or not math.isfinite(estimate):
        return Estimate(estimate, math.nan, math.nan, None, None, level, g, method)
    h = STEP * max(float(np.abs(mean).max()), 1e-300)
    steps = np.eye(len(mean)) * h
    gradient = (statistic(mean + steps) - statistic(mean - steps)) / (2.0 * h)
    if not np.isfinite(gradient).all():
        return Estimate(estimate, math.nan, math.nan, math.nan, None, level, g, method)
    influence = ((parts - mean) * gradient).sum(axis=1)
    se = math.sqrt(g / (g - 1) * float((influence * influence).sum())) / g
    low, high = t_interval(estimate, se, g - 1, level)
    return Estimate(estimate, max(low, bounds[0]), min(high, bounds[1]), se, None, level, g, method)
