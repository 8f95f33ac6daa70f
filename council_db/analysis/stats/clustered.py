"""Means and mean differences with cluster-robust (by session) standard errors.

Scores from one session share the query and the answers, so they move together: treating
16 scores of a 4x4 session as 16 independent observations makes a standard error far too
small. The cluster-robust (CR1) variance sums residuals within each session first, so only
between-session variation counts; the t distribution with G-1 degrees of freedom (G
sessions) keeps intervals honest when there are few sessions.
"""

from __future__ import annotations

import math

import numpy as np
from msgspec.structs import replace
from numpy.typing import ArrayLike

from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import t_interval, t_p_value

CR1 = "cluster-robust (CR1, by session) SE, t with G-1 df"


def cluster_codes(cluster: ArrayLike) -> tuple[np.ndarray, int]:
    """Dense codes 0..G'-1 for any cluster labels, and the code count. Small non-negative
    integer labels (session numbers) are used as they are (cheap bincount); others, large
    integers such as hashes or database ids among them, go through np.unique, since a
    bincount over them would allocate one slot per possible label."""
    labels = np.asarray(cluster)
    if labels.dtype.kind in "iub" and (len(labels) == 0 or (labels.min() >= 0 and labels.max() <= 4 * len(labels))):
        codes = labels.astype(np.int64, copy=False)
        return codes, int(codes.max()) + 1 if len(codes) else 0
    uniques, codes = np.unique(labels, return_inverse=True)
    return codes.astype(np.int64), len(uniques)


def _t_estimate(estimate: float, se: float, g: int, null: float, level: float) -> Estimate:
    df = g - 1
    low, high = t_interval(estimate, se, df, level)
    if se > 0:
        p = t_p_value((estimate - null) / se, df)
    else:  # no variation between sessions at all: p is 0 unless the estimate is the null
        p = math.nan if estimate == null else 0.0
    return Estimate(estimate, low, high, se, p, level, g, CR1)


def clustered_mean_from_totals(totals: ArrayLike, counts: ArrayLike, level: float = 0.95,
                               null: float = 0.0) -> Estimate:
    """The mean from per-session totals and counts (clusters with count 0 are ignored), with
    the CR1 standard error: G/(G-1) * sum_g (T_g - n_g * mean)^2 / N^2. Lets a caller that
    keeps per-session sums (one row per session) skip the records. p_value tests mean = null.
    With fewer than 2 sessions the interval, SE and p-value are NaN."""
    t = np.asarray(totals, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    keep = n > 0
    t, n = t[keep], n[keep]
    g, total_n = len(n), float(n.sum())
    if g == 0:
        return Estimate.missing(CR1, 0, level)
    mean = float(t.sum() / total_n)
    if g < 2:
        return Estimate.missing(CR1, g, level, estimate=mean)
    return clustered_mean_from_influence(mean, t - n * mean, total_n, g, level, null)


def clustered_mean_from_influence(mean: float, influence: ArrayLike, total_n: float, g: int, level: float = 0.95,
                                  null: float = 0.0) -> Estimate:
    """A mean of ``total_n`` values from ``g`` sessions with the CR1 SE from its per-session
    influence (the sessions' totals less what the mean and any fitted effects take), so a
    caller that knows a better influence than T_g - n_g * mean (joint-model residuals: see
    joint/residual_means) keeps this SE and its t interval on G-1 df."""
    resid = np.asarray(influence, dtype=np.float64)
    se = math.sqrt(g / (g - 1) * float(resid @ resid)) / total_n
    return _t_estimate(mean, se, g, null, level)


def clustered_mean(values: ArrayLike, cluster: ArrayLike, level: float = 0.95, null: float = 0.0) -> Estimate:
    """Mean of ``values`` (bools count as 0/1) with a cluster-robust SE, clusters = sessions.

    Used for per-slot means, per-reviewer raw means and shares such as "first shown wins".
    Non-finite values are left out. See ``clustered_mean_from_totals`` for the formula.
    """
    v = np.asarray(values, dtype=np.float64)
    codes, g = cluster_codes(cluster)
    ok = np.isfinite(v)
    if not ok.all():
        v, codes = v[ok], codes[ok]
    totals = np.bincount(codes, weights=v, minlength=g)
    counts = np.bincount(codes, minlength=g)
    return clustered_mean_from_totals(totals, counts, level, null)



def clustered_share(values: ArrayLike, cluster: ArrayLike, level: float = 0.95, null: float = 0.5) -> Estimate:
    """A share (values 0/1) as ``clustered_mean``, its interval kept inside [0, 1]: with few
    judgments the t interval runs past a bound (1 win in 12: -0.10 to 0.27), which says
    nothing a share can mean. Clipping only drops impossible values, so coverage is
    unchanged; the p-value is the t test's, and whether the interval holds ``null`` is too."""
    found = clustered_mean(values, cluster, level, null)
    if not math.isfinite(found.ci_low):
        return found
    return replace(found, ci_low=max(found.ci_low, 0.0), ci_high=min(found.ci_high, 1.0))


def mean_figure(scores: ArrayLike, session: ArrayLike, level: float = 0.95) -> Estimate:
    """A mean with its clustered CI, as a figure without a p-value, where no null value means
    anything: a raw mean score (of a slot, of a reviewer) is never 0 on a score scale, and one
    tested against the other slots' or reviewers' means would mix position or severity with
    which candidates they scored (the joint model's slot effects and severities are the
    tests); a test-retest difference is never below 0."""
    return replace(clustered_mean(scores, session, level), p_value=None)


def mean_figure_from_totals(totals: ArrayLike, counts: ArrayLike, level: float = 0.95) -> Estimate:
    """``mean_figure`` from per-session totals and counts (``clustered_mean_from_totals``)."""
    return replace(clustered_mean_from_totals(totals, counts, level), p_value=None)
