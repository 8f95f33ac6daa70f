"""How much reviewers agree on the same answer: Krippendorff's alpha, interval metric.

alpha = 1 - D_o / D_e: observed disagreement between scores of the same answer over the
disagreement expected if scores were paired at random. 1 is perfect agreement, 0 is no
better than chance. Only squared differences enter (interval metric), and the sum over
ordered pairs within a unit is 2 (m sum v^2 - (sum v)^2), so alpha needs per-unit sums only:
vectorised, and additive over sessions, so a session bootstrap is a weighted sum.

Raters are reviewers: a unit (an answer) counts only when two different reviewers scored it,
and a reviewer that scored one answer more than once is still one rater, with its FIRST score
(the earliest record). The first keeps every value a real score on the scale and alpha the
agreement of single judgments; averaging repeats would make the repeating reviewer look less
noisy than one judgment is. The repeats themselves are test-retest data (``retest``).
"""

from __future__ import annotations

import math

import msgspec
import numpy as np
from numpy.typing import ArrayLike

from council_db.analysis.stats.answers import answer_index
from council_db.analysis.stats.bootstrap import RngLike, bootstrap_estimate
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


def first_per_rater(unit: np.ndarray, rater: np.ndarray) -> np.ndarray:
    """True for each rater's first value of each unit (unit and rater: integer codes), so a
    reviewer that scored an answer twice is one rater of it, not two."""
    if len(unit) == 0:
        return np.zeros(0, dtype=bool)
    key = unit.astype(np.int64) * (int(rater.max()) + 1) + rater
    _, first = np.unique(key, return_index=True)
    keep = np.zeros(len(unit), dtype=bool)
    keep[first] = True
    return keep


def krippendorff_alpha_interval(unit: ArrayLike, value: ArrayLike, rater: ArrayLike | None = None) -> float:
    """Krippendorff's alpha with the interval metric, for values grouped by unit (any
    labels). Given ``rater`` (any labels), each rater's first value of a unit is its only
    one. Units with fewer than 2 values are not pairable and do not count; non-finite values
    are left out. NaN when no unit is pairable or the pairable values never vary."""
    v = np.asarray(value, dtype=np.float64)
    codes, n_units = cluster_codes(unit)
    ok = np.isfinite(v)
    if rater is not None:
        raters, _ = cluster_codes(rater)
        kept = np.flatnonzero(ok)[first_per_rater(codes[ok], raters[ok])]
        ok = np.zeros(len(v), dtype=bool)
        ok[kept] = True
    v, codes = v[ok], codes[ok]
    if len(v) == 0:
        return math.nan
    m, s1, s2 = _unit_sums(codes, v - float(v.mean()), n_units)  # alpha is shift-invariant
    return float(_alpha_from_sums(_alpha_parts(m, s1, s2).sum(axis=0))[0])


class Agreement(msgspec.Struct, frozen=True):
    """alpha with what it rests on: ``units`` answers scored by at least two reviewers,
    ``values`` their scores (one per reviewer), in ``alpha.n_sessions`` sessions."""

    alpha: Estimate
    units: int
    values: int


def answer_alpha_parts(session: np.ndarray, model: np.ndarray, log_length: np.ndarray, reviewer: np.ndarray,
                       score: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Alpha's additive parts per session with a pairable answer (rows for ``alpha_of_parts``
    once summed: any resample or linearisation of sessions), units = candidate answers
    (session, model, length), raters = reviewers, one value per reviewer and answer; and the
    units and values they hold."""
    unit, first = answer_index(session, model, log_length)
    once = first_per_rater(unit, reviewer)
    unit, values = unit[once], score[once]
    m, s1, s2 = _unit_sums(unit, values - float(values.mean()), len(first))
    parts = _alpha_parts(m, s1, s2)
    n_sessions = int(session.max()) + 1
    per_session = np.stack([np.bincount(session[first], weights=parts[:, j], minlength=n_sessions)
                            for j in range(4)], axis=1)
    return per_session[per_session[:, 0] > 0], int((m >= 2).sum()), int(m[m >= 2].sum())


alpha_of_parts = _alpha_from_sums  # alpha per row of summed parts


def answer_agreement(session: np.ndarray, model: np.ndarray, log_length: np.ndarray, reviewer: np.ndarray,
                     score: np.ndarray, n_boot: int = 1000, rng: RngLike = None, level: float = 0.95) -> Agreement:
    """Inter-reviewer agreement: Krippendorff's alpha (interval) over ``answer_alpha_parts``.
    The CI resamples whole sessions (expanded percentile); ``se`` is the bootstrap SD; no
    p-value (alpha > 0 is not a question worth testing)."""
    method = f"Krippendorff alpha (interval), session bootstrap expanded-percentile CI, {n_boot} resamples"
    if len(score) == 0:
        return Agreement(Estimate.missing(method, 0, level, se=None, p_value=None), 0, 0)
    per_session, units, values = answer_alpha_parts(session, model, log_length, reviewer, score)
    return Agreement(bootstrap_estimate(per_session, _alpha_from_sums, n_boot, rng, level, method), units, values)


class Repeats(msgspec.Struct, frozen=True):
    """Test-retest over every pair of scores one reviewer gave one answer: the share of pairs
    scored identically and the mean absolute difference, over ``pairs`` pairs from ``units``
    (answer, reviewer) groups with ``records`` scores."""

    identical: Estimate
    mean_abs_difference: Estimate
    pairs: int
    units: int
    records: int


class RepeatPairs(msgspec.Struct, frozen=True):
    """Per group scored at least twice (one reviewer's scores of one answer): a record of it,
    its scores, the pairs among them, the pairs scored identically, and the sum of |difference|
    over the pairs."""

    first: np.ndarray
    size: np.ndarray
    pairs: np.ndarray
    identical: np.ndarray
    absolute: np.ndarray


def repeat_pairs(key: np.ndarray, values: np.ndarray) -> RepeatPairs:
    """Every pair of values within each group of ``key`` (integers), summed per group, without a
    Python loop: sorted by (key, value), a group's sum over pairs of v_j - v_i is
    sum_i v_(i) (2i - (k - 1)), and its identical pairs are c (c - 1) / 2 per run of one value."""
    n = len(key)
    order = np.lexsort((values, key))
    k, v = key[order], values[order].astype(np.float64)
    new = np.r_[True, k[1:] != k[:-1]] if n else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    size = np.diff(np.r_[starts, n])
    group = np.cumsum(new) - 1
    rank = np.arange(n) - starts[group]
    absolute = np.add.reduceat(v * (2.0 * rank - (size[group] - 1)), starts) if n else np.zeros(0)
    runs = np.flatnonzero(new | np.r_[True, v[1:] != v[:-1]]) if n else np.zeros(0, dtype=np.int64)
    run = np.diff(np.r_[runs, n]).astype(np.float64)
    identical = np.bincount(group[runs], weights=run * (run - 1) / 2, minlength=len(starts))
    keep = size >= 2
    return RepeatPairs(order[starts][keep], size[keep], (size * (size - 1) // 2)[keep], identical[keep],
                       absolute[keep])


def _share_of_pairs(column: int):
    """Column ``column`` of summed (pairs, identical, |difference|) over the pairs, per row."""
    def share(sums: np.ndarray) -> np.ndarray:
        sums = np.atleast_2d(sums)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sums[:, 0] > 0, sums[:, column] / sums[:, 0], np.nan)
    return share


def retest(session: np.ndarray, model: np.ndarray, log_length: np.ndarray, reviewer: np.ndarray, score: np.ndarray,
           n_boot: int = 1000, rng: RngLike = None, level: float = 0.95) -> Repeats:
    """Self-consistency of reviewers that scored the same answer more than once (the repeats
    inter-reviewer alpha leaves out). CIs resample whole sessions, as alpha's do: a reviewer's
    repeats in one session share that session's query and context, so they are not independent."""
    unit, _ = answer_index(session, model, log_length)
    found = repeat_pairs(unit * (int(reviewer.max(initial=0)) + 1) + reviewer, score)
    where, n_sessions = session[found.first], int(session.max(initial=-1)) + 1
    sums = np.stack([np.bincount(where, weights=part, minlength=n_sessions)
                     for part in (found.pairs, found.identical, found.absolute)], axis=1)
    sums = sums[sums[:, 0] > 0]  # sessions with a repeat
    ci = f"session bootstrap expanded-percentile CI, {n_boot} resamples"
    identical = bootstrap_estimate(sums, _share_of_pairs(1), n_boot, rng, level,
                                   f"share of repeat pairs scored identically, {ci}")
    difference = bootstrap_estimate(sums, _share_of_pairs(2), n_boot, rng, level,
                                    f"mean |difference| over repeat pairs, {ci}")
    return Repeats(identical, difference, int(sums[:, 0].sum()), len(found.first), int(found.size.sum()))
