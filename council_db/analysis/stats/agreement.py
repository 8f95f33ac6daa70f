"""How much reviewers agree on the same answer: Krippendorff's alpha, interval metric.

alpha = 1 - D_o / D_e: observed disagreement between scores of the same answer over the
disagreement expected if scores were paired at random. 1 is perfect agreement, 0 is no
better than chance. Only squared differences enter (interval metric), and the sum over
ordered pairs within a unit is 2 (m sum v^2 - (sum v)^2), so alpha needs per-unit sums only:
vectorised, and additive over sessions, so a session bootstrap is a weighted sum.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from council_db.analysis.stats.answers import answer_index
from council_db.analysis.stats.bootstrap import RngLike, percentile_interval, resampled_sums
from council_db.analysis.stats.clustered import cluster_codes
from council_db.analysis.stats.estimate import Estimate


def _unit_sums(codes: np.ndarray, values: np.ndarray, n_units: int) -> tuple[np.ndarray, ...]:
    m = np.bincount(codes, minlength=n_units).astype(np.float64)
    s1 = np.bincount(codes, weights=values, minlength=n_units)
    s2 = np.bincount(codes, weights=values * values, minlength=n_units)
    return m, s1, s2


def _alpha_parts(m: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Per-unit additive parts (n, sum v, sum v^2, observed-disagreement numerator) for
    pairable units (m >= 2); zeros for the rest, which do not count."""
    pairable = m >= 2
    m_safe = np.where(pairable, m, 2.0)
    within = np.where(pairable, 2.0 * (m * s2 - s1 * s1) / (m_safe - 1.0), 0.0)
    keep = pairable.astype(np.float64)
    return np.column_stack([m * keep, s1 * keep, s2 * keep, np.maximum(within, 0.0)])


def _alpha_from_sums(sums: np.ndarray) -> np.ndarray:
    """alpha from summed parts, one row per (re)sample: 1 - (n-1) D / (2 (n S2 - S1^2))."""
    sums = np.atleast_2d(sums)
    n, s1, s2, d = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3]
    expected = 2.0 * (n * s2 - s1 * s1)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * d / expected
    return np.where((n >= 2) & (expected > 1e-12 * np.maximum(n * s2, 1.0)), alpha, np.nan)


def krippendorff_alpha_interval(unit: ArrayLike, value: ArrayLike) -> float:
    """Krippendorff's alpha with the interval metric, for values grouped by unit (any
    labels). Units with fewer than 2 values are not pairable and do not count; non-finite
    values are left out. NaN when no unit is pairable or the pairable values never vary."""
    v = np.asarray(value, dtype=np.float64)
    codes, n_units = cluster_codes(unit)
    ok = np.isfinite(v)
    v, codes = v[ok], codes[ok]
    if len(v) == 0:
        return math.nan
    m, s1, s2 = _unit_sums(codes, v - float(v.mean()), n_units)  # alpha is shift-invariant
    return float(_alpha_from_sums(_alpha_parts(m, s1, s2).sum(axis=0))[0])


def answer_agreement(session: np.ndarray, model: np.ndarray, log_length: np.ndarray, score: np.ndarray,
                     n_sessions: int, n_boot: int = 1000, rng: RngLike = None, level: float = 0.95) -> Estimate:
    """Inter-reviewer agreement: Krippendorff's alpha (interval), units = candidate answers
    (session, model, length), values = the scores given. The CI resamples whole sessions
    (expanded percentile); ``se`` is the bootstrap SD; no p-value (alpha > 0 is not a question
    worth testing)."""
    method = f"Krippendorff alpha (interval), session bootstrap expanded-percentile CI, {n_boot} resamples"
    if len(score) == 0:
        return Estimate.missing(method, 0, level, se=None, p_value=None)
    unit, first = answer_index(session, model, log_length)
    m, s1, s2 = _unit_sums(unit, score - float(score.mean()), len(first))
    parts = _alpha_parts(m, s1, s2)
    unit_session = session[first]
    per_session = np.stack([np.bincount(unit_session, weights=parts[:, j], minlength=n_sessions)
                            for j in range(4)], axis=1)
    per_session = per_session[per_session[:, 0] > 0]  # sessions with a pairable answer
    g = len(per_session)
    alpha = float(_alpha_from_sums(per_session.sum(axis=0))[0])
    if not math.isfinite(alpha) or g < 2 or n_boot <= 0:
        return Estimate(alpha, math.nan, math.nan, None, None, level, g, method)
    boot = _alpha_from_sums(resampled_sums(per_session, n_boot, rng))
    low, high = percentile_interval(boot, level, g)
    finite = boot[np.isfinite(boot)]
    se = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
    return Estimate(alpha, low, high, se, None, level, g, method)
