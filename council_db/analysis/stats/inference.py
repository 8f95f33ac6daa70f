"""Tests and intervals from the t and normal distributions, and false-discovery-rate control.

Small samples get the t distribution: with 4-5 answers in a session, or a few dozen sessions
behind a cluster-robust standard error, the normal distribution makes p-values several times
too small (r = 0.8 at n = 5 is p ~ 0.10 under t, ~ 0.02 under the normal). The distributions
are council-db's own (``distributions``), checked against scipy.special in the tests.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import overload

import numpy as np
from numpy.typing import ArrayLike

from council_db.analysis.stats import distributions


@overload
def t_p_value(t: float, df: float) -> float: ...
@overload
def t_p_value(t: np.ndarray, df: ArrayLike) -> np.ndarray: ...


def t_p_value(t: float | np.ndarray, df: ArrayLike) -> float | np.ndarray:
    """Two-sided p-value of a t statistic with ``df`` degrees of freedom (NaN when df <= 0
    or t is NaN; 0 for an infinite t)."""
    p = np.minimum(2.0 * distributions.t_cdf(-np.abs(np.asarray(t, dtype=np.float64)), df), 1.0)
    return float(p) if np.ndim(p) == 0 else p


@lru_cache(maxsize=1024)
def t_quantile(level: float, df: float) -> float:
    """The two-sided critical value: P(|T| <= q) = level for T ~ t(df); NaN when df <= 0.
    Cached: a report asks for the same few (level, df) over and over, and each is an iteration."""
    if not df > 0:
        return math.nan
    return float(distributions.t_ppf(0.5 + level / 2.0, df))


def t_interval(estimate: float, se: float, df: float, level: float = 0.95) -> tuple[float, float]:
    """estimate -/+ t quantile x se; (NaN, NaN) when df <= 0 or se is not finite."""
    if not (math.isfinite(estimate) and math.isfinite(se) and df > 0):
        return math.nan, math.nan
    q = t_quantile(level, df)
    return estimate - q * se, estimate + q * se


def t_intervals(estimates: np.ndarray, ses: np.ndarray, dfs: np.ndarray,
                level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """``t_interval`` of every element at once: one quantile evaluation over the array where
    a per-subject loop made one iteration each (the dfs differ, so the cache cannot help)."""
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(estimates) & np.isfinite(ses) & (dfs > 0)
    half = np.full(len(estimates), math.nan)
    if ok.any():
        half[ok] = np.asarray(distributions.t_ppf(0.5 + level / 2.0, dfs[ok])) * ses[ok]
    return estimates - half, estimates + half


def normal_quantile(level: float) -> float:
    """Two-sided standard normal critical value (1.959964 at level 0.95)."""
    return float(distributions.normal_ppf(0.5 + level / 2.0))


@overload
def normal_p_value(z: float) -> float: ...
@overload
def normal_p_value(z: np.ndarray) -> np.ndarray: ...


def normal_p_value(z: float | np.ndarray) -> float | np.ndarray:
    """Two-sided p-value of a standard normal statistic (for the classic large-sample
    methods users expect, e.g. meta-analysis z-tests)."""
    p = 2.0 * distributions.normal_cdf(-np.abs(np.asarray(z, dtype=np.float64)))
    return float(p) if np.ndim(p) == 0 else p


def chi2_sf(x: float, df: float) -> float:
    """P(X >= x) for X ~ chi-square(df); NaN when df <= 0 (used for Cochran's Q)."""
    if not df > 0 or not math.isfinite(x):
        return math.nan
    return float(distributions.chi2_sf(x, df))


def benjamini_hochberg(p_values: ArrayLike) -> np.ndarray:
    """Benjamini-Hochberg q-values, in the input order.

    Many reviewers x many metrics means many tests; flagging where q <= 0.05 keeps the
    expected share of false flags among all flags at 5%. q_(i) = min over j >= i of
    p_(j) * m / j (sorted ascending), capped at 1, so q is monotone in p. NaN p-values stay
    NaN and do not count in m (a test that could not be run is not a test).
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    q = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = len(valid)
    if m == 0:
        return q
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    q[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return q


def benjamini_yekutieli(p_values: ArrayLike) -> np.ndarray:
    """Benjamini-Yekutieli adjusted p-values, in the input order: the Benjamini-Hochberg
    q-values times H_m = 1 + 1/2 + ... + 1/m, capped at 1. Rejecting where they are <= q is
    the step-up procedure at q / H_m, which controls the false discovery rate at q under any
    dependence between the tests (Benjamini & Yekutieli 2001, Theorem 1.3): the alternative
    annotator test's choice, since its tests share the same instances. NaN stays NaN."""
    q = benjamini_hochberg(p_values)
    m = int(np.isfinite(q).sum())
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1))) if m else 1.0
    return np.minimum(q * harmonic, 1.0)
