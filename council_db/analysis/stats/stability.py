"""Repeat stability of judges: the items (answers) each scored k >= 2 times, and how alike its
repeats were. Every figure is a function of per-session sums, so a session bootstrap is one
matrix product for all of them (``resampled_sums``), and the items are grouped with np.unique
and bincount: no Python loop over records or items.

Every judge's figures rest on ONE set of resamples of the sessions holding any judge's item
(each judge's own sessions are its clusters, g in the expanded percentile interval): at the
report's 5,000-session sample, one draw of weights, not one per judge.

Figures, per judge:

* per-item stability: the share of items whose repeats are all identical; all within 1 point
  of each other; all on one side of the pass threshold (the same verdict);
* the within-item SD, pooled: sqrt(sum of squares within items / sum (k - 1));
* test-retest reliability as ICC(1) (one-way random effects, Shrout & Fleiss 1979, with
  k0 for unequal k): the share of score variance that is between items rather than between
  repeats. ICC(1), not weighted kappa: repeats are exchangeable (no first and second rater to
  cross-tabulate), k differs between items (kappa needs pairs, and which pairs is arbitrary),
  scores are interval data like the inter-reviewer alpha's, and ICC(1) is a smooth function
  of per-item sums, which the session bootstrap needs;
* pass^k (tau-bench, Inspect's pass_k): per item with n >= k repeats of which c pass, the
  unbiased C(c, k) / C(n, k), averaged: the chance that k fresh repeats all pass; and the
  chance that every repeat passes given one does (items with a pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from council_db.analysis.stats.bootstrap import RngLike, estimates_from_resamples, resampled_sums
from council_db.analysis.stats.estimate import Estimate

# columns of the per-session sums
(ITEMS, IDENTICAL, WITHIN_ONE, SAME_VERDICT, SS_WITHIN, DF_WITHIN, RECORDS, TOTAL, ITEM_SQUARES, K_SQUARED,
 PASS_K_ITEMS, PASS_K, ANY_PASS, ALL_PASS) = range(14)


@dataclass(frozen=True)
class RepeatItems:
    """One judge's items scored at least twice, one entry per item: its first record (the
    item's session, candidate and length), repeat count k, sum and sum of squares of its scores
    less the judge's mean score, lowest and highest score, and passes (scores above the
    threshold)."""

    first: np.ndarray
    k: np.ndarray
    total: np.ndarray
    squares: np.ndarray
    low: np.ndarray
    high: np.ndarray
    passes: np.ndarray

    def __len__(self) -> int:
        return len(self.k)


def repeat_items(item: np.ndarray, score: np.ndarray, passed: np.ndarray) -> RepeatItems:
    """Group records by ``item`` (any integer key: one judge's answers) and keep the groups of
    two or more; ``passed`` (bool per record) says which scores pass."""
    keys, first, inverse, k = np.unique(item, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    n = len(keys)
    order = np.argsort(inverse, kind="stable")
    starts = np.r_[0, np.cumsum(k)[:-1]] if n else np.zeros(0, dtype=np.int64)
    low = np.minimum.reduceat(score[order], starts) if n else np.zeros(0)
    high = np.maximum.reduceat(score[order], starts) if n else np.zeros(0)
    centred = score - (score.mean() if len(score) else 0.0)  # sums of squares keep their precision
    total = np.bincount(inverse, weights=centred, minlength=n)
    squares = np.bincount(inverse, weights=centred * centred, minlength=n)
    passes = np.bincount(inverse, weights=passed.astype(np.float64), minlength=n)
    keep = k >= 2
    return RepeatItems(first[keep], k[keep], total[keep], squares[keep], low[keep], high[keep], passes[keep])


def pass_k(passes: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """The unbiased pass^k of each item, C(c, k) / C(n, k) = prod_j (c - j) / (n - j), for
    items with n >= k (NaN for the others)."""
    out = np.where(n >= k, 1.0, np.nan)
    for j in range(k):
        with np.errstate(invalid="ignore", divide="ignore"):
            out *= np.maximum(passes - j, 0.0) / (n - j)
    return out


def typical_k(k: np.ndarray) -> int:
    """The repeat count pass^k is stated at: the judge's most common k (the smaller on a tie)."""
    values, counts = np.unique(k, return_counts=True)
    return int(values[np.argmax(counts)])


def session_sums(items: RepeatItems, session: np.ndarray, n_sessions: int, k: int) -> np.ndarray:
    """Per session (all ``n_sessions`` rows), the parts every figure is a ratio of (columns:
    ITEMS ... ALL_PASS)."""
    kf = items.k.astype(np.float64)
    means = items.total / kf
    spread = items.high - items.low
    per_item = pass_k(items.passes, kf, k)
    parts = np.zeros((len(items), 14))
    parts[:, ITEMS] = 1.0
    parts[:, IDENTICAL] = spread == 0
    parts[:, WITHIN_ONE] = spread <= 1.0 + 1e-9
    parts[:, SAME_VERDICT] = (items.passes == 0) | (items.passes == kf)
    parts[:, SS_WITHIN] = np.maximum(items.squares - items.total * means, 0.0)
    parts[:, DF_WITHIN] = kf - 1.0
    parts[:, RECORDS] = kf
    parts[:, TOTAL] = items.total
    parts[:, ITEM_SQUARES] = items.total * means
    parts[:, K_SQUARED] = kf * kf
    parts[:, PASS_K_ITEMS] = np.isfinite(per_item)
    parts[:, PASS_K] = np.nan_to_num(per_item)
    parts[:, ANY_PASS] = items.passes > 0
    parts[:, ALL_PASS] = items.passes == kf
    return np.stack([np.bincount(session, weights=parts[:, j], minlength=n_sessions) for j in range(14)], axis=1)


def _ratio(numerator: int, denominator: int):
    def ratio(sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sums[:, denominator] > 0, sums[:, numerator] / sums[:, denominator], np.nan)
    return ratio


def _within_sd(sums: np.ndarray) -> np.ndarray:
    return np.sqrt(_ratio(SS_WITHIN, DF_WITHIN)(sums))


def _icc1(sums: np.ndarray) -> np.ndarray:
    """ICC(1) = (MSB - MSW) / (MSB + (k0 - 1) MSW), k0 = (N - sum k^2 / N) / (a - 1)."""
    a, n = sums[:, ITEMS], sums[:, RECORDS]
    with np.errstate(invalid="ignore", divide="ignore"):
        between = (sums[:, ITEM_SQUARES] - sums[:, TOTAL] ** 2 / n) / (a - 1.0)
        within = sums[:, SS_WITHIN] / (n - a)
        k0 = (n - sums[:, K_SQUARED] / n) / (a - 1.0)
        icc = (between - within) / (between + (k0 - 1.0) * within)
    return np.where((a >= 2) & (between + (k0 - 1.0) * within > 1e-12), icc, np.nan)


@dataclass(frozen=True)
class Stability:
    """One judge's repeat stability; every Estimate's CI resamples sessions."""

    identical: Estimate
    within_one: Estimate
    same_verdict: Estimate
    within_sd: Estimate
    icc: Estimate
    pass_k: Estimate
    all_pass_given_any: Estimate
    k: int  # the k of pass^k


def _figures(k: int, n_boot: int) -> list[tuple[Callable[[np.ndarray], np.ndarray], str]]:
    """(statistic of summed parts, method) in Stability's order."""
    ci = f"session bootstrap expanded-percentile CI, {n_boot} resamples"
    return [
        (_ratio(IDENTICAL, ITEMS), f"share of repeated items whose scores are all identical, {ci}"),
        (_ratio(WITHIN_ONE, ITEMS), f"share of repeated items whose scores lie within 1 point, {ci}"),
        (_ratio(SAME_VERDICT, ITEMS), f"share of repeated items whose repeats all pass or all fail, {ci}"),
        (_within_sd, f"pooled within-item SD, sqrt(SS within / sum(k - 1)), {ci}"),
        (_icc1, f"ICC(1), one-way random effects with k0 for unequal repeats, {ci}"),
        (_ratio(PASS_K, PASS_K_ITEMS), f"pass^{k}: mean of C(c,{k})/C(n,{k}) over items with n >= {k}, {ci}"),
        (_ratio(ALL_PASS, ANY_PASS), f"share of items passing on every repeat among those passing once, {ci}"),
    ]


def stability(judges: list[tuple[RepeatItems, np.ndarray]], n_sessions: int, n_boot: int = 1000,
              rng: RngLike = None, level: float = 0.95) -> list[Stability]:
    """Every figure of the module docstring for each judge's (items, each item's session
    number), all on one set of session resamples."""
    ks = [typical_k(items.k) for items, _ in judges]
    sums = np.hstack([session_sums(items, session, n_sessions, k) for (items, session), k in zip(judges, ks)])
    sums = sums[sums[:, ITEMS::14].any(axis=1)]  # the sessions holding an item of any judge
    resampled = resampled_sums(sums, n_boot, rng) if len(sums) >= 2 and n_boot > 0 else None
    out = []
    for number, k in enumerate(ks):
        columns = slice(14 * number, 14 * number + 14)
        block = sums[:, columns]
        g = int((block[:, ITEMS] > 0).sum())
        again = None if resampled is None else resampled[:, columns]
        found = estimates_from_resamples(block.sum(axis=0)[None, :], again, g, _figures(k, n_boot), level)
        out.append(Stability(*found, k=k))
    return out
