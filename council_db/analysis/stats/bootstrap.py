"""The session (cluster) bootstrap: resample whole sessions, never single records.

Scores in one session share the query, the candidate answers and the reviewers, so they are
not independent; resampling sessions keeps that dependence inside every resample, which is
what makes the intervals honest. Every statistic here is a smooth function of per-session
sums, so a resample is just a weighted sum: weights are the multinomial counts of how often
each session was drawn, and all resamples are one matrix product. Weights come in blocks of
at most ``max_cells`` numbers, so memory stays bounded for any session count (time is
O(n_boot x n_sessions)).
"""

from __future__ import annotations

import math
from typing import Callable, Iterator

import numpy as np

from council_db.analysis.stats.distributions import normal_cdf
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import t_quantile
from council_db.analysis.stats.order_statistics import linear_quantiles

RngLike = np.random.Generator | int | None
BLOCK_CELLS = 1 << 22  # weights per block: 4M float64 = 32 MB


def as_generator(rng: RngLike) -> np.random.Generator:
    """A Generator from a Generator, a seed, or None (fresh entropy)."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def session_weights(n_sessions: int, n_boot: int, rng: RngLike = None,
                    max_cells: int = BLOCK_CELLS) -> Iterator[np.ndarray]:
    """Yield blocks of bootstrap weights, shape (b, n_sessions), float64, b rows per block,
    n_boot rows in all. Row j counts how often each session was drawn in resample j when
    n_sessions sessions are drawn with replacement (a multinomial count vector summing to
    n_sessions)."""
    gen = as_generator(rng)
    if n_sessions <= 0 or n_boot <= 0:
        return
    block = max(1, min(n_boot, max_cells // n_sessions))
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        draws = gen.integers(0, n_sessions, size=(b, n_sessions))
        draws += (np.arange(b, dtype=draws.dtype) * n_sessions)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n_sessions)
        yield counts.reshape(b, n_sessions).astype(np.float64)


def resampled_sums(per_session_values: np.ndarray, n_boot: int, rng: RngLike = None,
                   max_cells: int = BLOCK_CELLS) -> np.ndarray:
    """Column sums of ``per_session_values`` (S, k) over sessions, for each of n_boot session
    resamples: shape (n_boot, k). A statistic that is a function of per-session sums (a
    ratio, a correlation, an agreement coefficient) is then computed on each row at once."""
    values = np.asarray(per_session_values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    out = np.empty((n_boot, values.shape[1]))
    row = 0
    for weights in session_weights(values.shape[0], n_boot, rng, max_cells):
        out[row:row + len(weights)] = weights @ values
        row += len(weights)
    if row < n_boot:  # no sessions: every resample is empty
        out[row:] = 0.0
    return out


def expanded_tail(level: float, n_sessions: int) -> float:
    """The lower-tail probability the expanded percentile interval uses with n_sessions
    resampled sessions: Phi(-sqrt(G/(G-1)) * t_{G-1}), where t_{G-1} is the two-sided t
    critical value. The plain percentile interval is too narrow with few sessions (it
    behaves like a normal interval with a divide-by-G variance); this widens it the way a t
    interval with G-1 df would (Hesterberg 2015, "What teachers should know about the
    bootstrap"), and tends to (1-level)/2 as G grows (0.0246 at G = 500, 0.016 at G = 20)."""
    if n_sessions < 2:
        return math.nan
    return float(normal_cdf(-math.sqrt(n_sessions / (n_sessions - 1)) * t_quantile(level, n_sessions - 1)))


def percentile_interval(samples: np.ndarray, level: float = 0.95,
                        n_sessions: int | None = None) -> tuple[float, float]:
    """The percentile bootstrap interval: the (1-level)/2 and (1+level)/2 quantiles of the
    resampled statistic. Given ``n_sessions`` (the number of sessions resampled), the
    expanded percentile interval instead (see ``expanded_tail``), which keeps coverage
    with tens of sessions. Resamples where the statistic is undefined (NaN, e.g. a resample
    with no variation) are left out; if more than half are, the interval is (NaN, NaN)."""
    values = np.asarray(samples, dtype=np.float64).ravel()
    finite = values[np.isfinite(values)]
    if len(finite) == 0 or 2 * len(finite) < len(values):
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0 if n_sessions is None else expanded_tail(level, n_sessions)
    if not math.isfinite(tail):
        return math.nan, math.nan
    low, high = linear_quantiles(finite, np.array([tail, 1.0 - tail]))
    return float(low), float(high)


def bootstrap_estimate(per_cluster: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], n_boot: int,
                       rng: RngLike, level: float, method: str) -> Estimate:
    """A statistic of summed per-cluster parts (rows: the clusters that contribute) with its
    expanded percentile CI from resampling those clusters; ``se`` is the bootstrap SD, there is
    no p-value. ``statistic`` maps summed parts, one row per (re)sample, to one value per row,
    so every resample is one matrix product (``resampled_sums``)."""
    return bootstrap_estimates(per_cluster, [(statistic, method)], n_boot, rng, level)[0]


def bootstrap_estimates(per_cluster: np.ndarray, statistics: list[tuple[Callable[[np.ndarray], np.ndarray], str]],
                        n_boot: int, rng: RngLike, level: float) -> list[Estimate]:
    """``bootstrap_estimate`` for several (statistic, method) of the same parts, all on ONE set
    of resamples: one matrix product for every figure, and figures of one resample agree."""
    g = len(per_cluster)
    totals = per_cluster.sum(axis=0)[None, :] if g else None
    finite = g and any(math.isfinite(float(statistic(totals)[0])) for statistic, _ in statistics)
    resampled = resampled_sums(per_cluster, n_boot, rng) if finite and g >= 2 and n_boot > 0 else None
    return estimates_from_resamples(totals, resampled, g, statistics, level)


def estimates_from_resamples(totals: np.ndarray | None, resampled: np.ndarray | None, g: int,
                             statistics: list[tuple[Callable[[np.ndarray], np.ndarray], str]],
                             level: float) -> list[Estimate]:
    """Each statistic on the summed parts ``totals`` (1, k) with its expanded percentile CI from
    ``resampled`` (n_boot, k) sums of ``g`` clusters (None: no CI), so callers that share one
    set of resamples between several groups of columns (several judges) draw it once."""
    out = []
    for statistic, method in statistics:
        estimate = float(statistic(totals)[0]) if totals is not None and g else math.nan
        if resampled is None or g < 2 or not math.isfinite(estimate):
            out.append(Estimate(estimate, math.nan, math.nan, None, None, level, g, method))
            continue
        boot = statistic(resampled)
        low, high = percentile_interval(boot, level, g)
        finite = boot[np.isfinite(boot)]
        se = float(np.std(finite, ddof=1)) if len(finite) > 1 else math.nan
        out.append(Estimate(estimate, low, high, se, None, level, g, method))
    return out
