"""Chi-square tails of many statistics that share a few degrees of freedom: the anomaly
yardsticks' p-values, a million sessions' at once (``sessions/anomalies``).

``distributions.chi2_cdf`` and ``chi2_sf`` take every element on its own: a log Gamma each
(a Python call), and series and fractions that run, for a whole block, as many terms as its
slowest element needs, each term guarded. Most sessions of a window have the same shape (a
4x4 council's: one k), so here the elements are grouped by their degrees of freedom: a log
Gamma a group, and each group's series (NR 6.2, for x/2 < a + 1) and Legendre's continued
fraction (beyond) evaluated backward, to the number of terms a forward run needs at the
group's slowest point (its largest x in the series, its smallest in the fraction), three
array operations a term. The same method as ``special_functions``, the same values to ~1e-15
(tests/analysis/stats/test_chi2_batches.py checks them against ``distributions`` and scipy).
"""

from __future__ import annotations

import numpy as np

from council_db.analysis.stats.distributions import chi2_cdf, chi2_sf
from council_db.analysis.stats.special_functions import EPS, FPMIN, MAX_ITERATIONS, gamma_tails

BLOCK = 65_536  # elements evaluated at once: the temporaries stay a few MB, within the caches
ALMOST_ZERO = 2.0 ** -53  # the smallest complement special_functions gives (1 - p for p within rounding of 1)


def chi2_tail(x: np.ndarray, df: np.ndarray, lower: bool) -> np.ndarray:
    """P(X <= x) (``lower``) or P(X > x) for X ~ chi-square(df), elementwise over equal-length
    arrays; what ``chi2_cdf``/``chi2_sf`` give (to ~1e-15), at a fraction of their cost
    where few df values repeat over many elements. A block of BLOCK elements at a time: a
    million elements' temporaries at once were 70 MB, the peak of the anomaly tests."""
    x, df = np.asarray(x, dtype=np.float64), np.asarray(df, dtype=np.float64)
    out = np.empty(len(x))
    for start in range(0, len(x), BLOCK):
        out[start:start + BLOCK] = _block_tail(x[start:start + BLOCK], df[start:start + BLOCK], lower)
    return out


def _block_tail(x: np.ndarray, df: np.ndarray, lower: bool) -> np.ndarray:
    """``chi2_tail`` of one block: its elements grouped by df, a group at a time."""
    out = np.empty(len(x))
    with np.errstate(all="ignore"):
        regular = (df > 0) & (df < np.inf) & (0.5 * x > 0) & (x < np.inf)
    if not regular.all():  # NaN, 0, infinities: the edges are the distributions' own
        out[~regular] = (chi2_cdf if lower else chi2_sf)(x[~regular], df[~regular])
        x, df = x[regular], df[regular]
    shapes, which = _shared(0.5 * df)
    if len(shapes) == 1:
        out[regular] = _tail(float(shapes[0]), 0.5 * x, lower)
        return out
    tails = np.empty(len(x))
    order = np.argsort(which, kind="stable")  # each group's elements, in one sort
    bounds = np.searchsorted(which[order], np.arange(len(shapes) + 1))
    for g, a in enumerate(shapes.tolist()):
        members = order[bounds[g]:bounds[g + 1]]
        tails[members] = _tail(a, 0.5 * x[members], lower)
    out[regular] = tails
    return out


def _shared(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values and each element's index among them, in one comparison where most
    elements share one value (the one most common in a thin sample) and a sort of the rest."""
    if not len(values):
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    seen, counts = np.unique(values[::max(1, len(values) // 1000)], return_counts=True)
    common = float(seen[np.argmax(counts)])
    rest = values != common
    which = np.zeros(len(values), dtype=np.int64)
    if not rest.any():
        return np.array([common]), which
    others, inverse = np.unique(values[rest], return_inverse=True)
    which[rest] = inverse + 1
    return np.r_[common, others], which


def _tail(a: float, y: np.ndarray, lower: bool) -> np.ndarray:
    """P(a, y) (``lower``) or Q(a, y), the regularized incomplete gammas, for one shape a: the
    tail the series or fraction gives directly, the other as 1 minus it, never below 2^-53
    (as ``special_functions.log_complement`` keeps it)."""
    t = (y - a) / a
    # y^a e^-y / Gamma(a) = exp(its log at y = a - a phi), phi = y/a - 1 - log(y/a): by log1p
    # near y = a (no cancellation), by log further out (no 1 + t rounded), as special_functions
    logs = np.log(y / a)
    np.log1p(t, out=logs, where=np.abs(t) < 0.5)
    density = np.exp(gamma_tails(a, a)[2] - a * (t - logs))
    series = y < a + 1.0
    on_series = np.flatnonzero(series)
    on_fraction = np.flatnonzero(~series)
    out = np.empty(len(y))
    if len(on_series):
        p = density[on_series] * _series(a, y[on_series])
        out[on_series] = p if lower else np.maximum(1.0 - p, ALMOST_ZERO)
    if len(on_fraction):
        q = density[on_fraction] * _fraction(a, y[on_fraction])
        out[on_fraction] = np.maximum(1.0 - q, ALMOST_ZERO) if lower else q
    return out


def _series(a: float, y: np.ndarray) -> np.ndarray:
    """sum over n >= 0 of y^n / (a (a+1) ... (a+n)), P(a, y) = y^a e^-y / Gamma(a) times it,
    from its last term back (Horner's rule), with the terms a forward sum to EPS takes at the
    largest y (the slowest: every term ratio y / (a + n) grows with y)."""
    terms = _series_terms(a, float(y.max()))
    total = np.ones(len(y))
    for n in range(terms, 0, -1):
        total *= y
        total *= 1.0 / (a + n)
        total += 1.0
    return total / a


def _series_terms(a: float, y: float) -> int:
    """The terms after the first that NR's forward series (special_functions) adds at y."""
    term = total = 1.0 / a
    n = a
    for count in range(1, MAX_ITERATIONS):
        n += 1.0
        term *= y / n
        total += term
        if term / total < EPS:
            return count
    return MAX_ITERATIONS


def _fraction(a: float, y: np.ndarray) -> np.ndarray:
    """Legendre's continued fraction 1 / (b0 + a1 / (b1 + a2 / (b2 + ...))), b_i = y + 1 - a + 2i,
    a_i = -i (i - a), so Q(a, y) = y^a e^-y / Gamma(a) times it; from its last level back,
    to the depth the forward (Lentz) evaluation takes at the smallest y (the slowest)."""
    depth = _fraction_depth(a, float(y.min()))
    level = y + (1.0 - a + 2.0 * depth)
    for i in range(depth, 0, -1):
        np.divide(-i * (i - a), level, out=level)
        level += y
        level += 1.0 - a + 2.0 * (i - 1)
    return 1.0 / level


def _fraction_depth(a: float, y: float) -> int:
    """The levels special_functions' modified Lentz evaluation takes at y before its factor
    is within EPS of 1."""
    b = y + 1.0 - a
    c, d = 1.0 / FPMIN, 1.0 / b
    for i in range(1, MAX_ITERATIONS):
        an = -i * (i - a)
        b += 2.0
        d = b + an * d
        d = 1.0 / (d if abs(d) >= FPMIN else FPMIN)
        c = b + an / c
        c = c if abs(c) >= FPMIN else FPMIN
        if abs(c * d - 1.0) < EPS:
            return i
    return MAX_ITERATIONS
