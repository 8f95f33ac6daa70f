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
from msgspec.structs import replace

from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import t_interval, t_quantile

STEP = 1e-6  # relative step of the central differences


def linearized_estimate(per_cluster: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], level: float = 0.95,
                        method: str = "", bounds: tuple[float, float] = (-math.inf, math.inf)) -> Estimate:
    """f(sum of the rows) with its CR1 delta-method interval. ``statistic`` maps totals, one row
    per evaluation, to one value each. Given finite ``bounds`` (the statistic's range: a share's
    [0, 1], a coefficient's [-1, 1]) the interval is built on the logit of the estimate's place
    between them and mapped back, so it stays inside and is not symmetric near a bound, where a
    plain one undercovers (an agreement of 0.95 on 100 pairs); an estimate at a bound gets the
    plain interval, clipped. ``n_sessions`` is G, the rows; no p-value."""
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
    low, high = _bounded_interval(estimate, se, g - 1, level, bounds)
    return Estimate(estimate, low, high, se, None, level, g, method)


def _bounded_interval(estimate: float, se: float, df: int, level: float,
                      bounds: tuple[float, float]) -> tuple[float, float]:
    """estimate -/+ t se on the logit of its place in ``bounds`` when both are finite and the
    estimate lies strictly inside; plain and clipped otherwise."""
    lower, upper = bounds
    if math.isfinite(lower) and math.isfinite(upper) and lower < estimate < upper and se > 0:
        place = (estimate - lower) / (upper - lower)
        logit, slope = math.log(place / (1.0 - place)), 1.0 / ((upper - lower) * place * (1.0 - place))
        low, high = t_interval(logit, se * slope, df, level)
        return lower + (upper - lower) / (1.0 + math.exp(-low)), lower + (upper - lower) / (1.0 + math.exp(-high))
    low, high = t_interval(estimate, se, df, level)
    return max(low, lower), min(high, upper)


def effective_wilson(found: Estimate, units: float) -> Estimate:
    """A share's interval as Wilson's score interval (Wilson 1927) on its effective sample size,
    p(1-p)/SE^2 from the clustered SE, at most ``units`` (the units the share is over), with the
    t(G-1) quantile: Korn & Graubard's (1998) remedy for shares near 0 or 1 from clustered data,
    where the delta method's symmetric interval undercovers and a share of 1 (no disagreement
    among 40 pairs) has SE 0. There the effective size is ``units``."""
    p, se, g = found.estimate, found.se, found.n_sessions or 0
    if not (math.isfinite(p) and g >= 2 and units > 0):
        return found
    n = units if not (0.0 < p < 1.0 and se and se > 0) else min(units, p * (1.0 - p) / (se * se))
    z = t_quantile(found.level, g - 1)
    centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n)
    half = z / (1.0 + z * z / n) * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return replace(found, ci_low=max(centre - half, 0.0), ci_high=min(centre + half, 1.0),
                   method=f"{found.method}; Wilson score interval on the effective sample size")
