"""The alternative annotator test: could this judge replace one of the human raters?

Calderon, Reichart & Dror (2025), "The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs" (ACL 2025), as their code
(github.com/nitaytech/AltTest, ``alt_test``) runs it:

1. Instances rated by at least ``min_raters`` humans (and by the judge) take part.
2. Each human j in turn is left out. On each of j's instances, the judge and j are scored by
   how well they match the *other* humans there: ``accuracy``, the share of the others giving
   the same label, or ``neg_rmse``, minus the root mean squared difference from the others'
   values. W_f = 1 when the judge scores at least as well as j, W_h = 1 when j scores at least
   as well as the judge (both on a tie).
3. H0_j: E[W_h - W_f] >= epsilon (j is better than the judge by the margin epsilon, the
   judge's cost advantage), against the one-sided alternative below it: a t-test of the
   differences against epsilon (the authors' ``ttest_1samp(..., alternative='less')``).
4. Benjamini-Yekutieli at q over the humans tested (humans with ``min_instances`` instances):
   the winning rate is the share of them rejected; the judge passes at 0.5 or more. The
   advantage probability is the mean over humans of mean(W_f): the chance the judge is as good
   as or better than a random human, for comparing judges.

One departure, where the data asks for it: instances that share a cluster (an item seen in
several sessions, the answers of one session) are not independent, so the t-test's standard
error is cluster-robust (CR1, t with G-1 df, G the clusters). With one instance per cluster
this is the authors' one-sample t-test exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis.stats.clustered import cluster_codes, clustered_mean
from council_db.analysis.stats.distributions import t_cdf
from council_db.analysis.stats.inference import benjamini_yekutieli
from council_db.analysis.stats.unique_rows import distinct

ACCURACY, NEG_RMSE = "accuracy", "neg_rmse"
EPSILON = 0.2  # the authors' value for expert raters (0.15 skilled, 0.1 crowd workers)
Q = 0.05
MIN_RATERS = 3  # humans per instance: leaving one out leaves a group, not one other human
MIN_INSTANCES = 30  # per human, the authors' floor for the t-test
PASS_RATE = 0.5


@dataclass(frozen=True)
class RaterComparison:
    """The judge against one left-out human."""

    rater: int  # the human's code, as given
    instances: int
    clusters: int
    judge_advantage: float  # mean W_f: the judge at least as good as this human
    human_advantage: float  # mean W_h
    p_value: float  # of H0: E[W_h - W_f] >= epsilon
    adjusted_p: float  # Benjamini-Yekutieli over the humans tested
    won: bool  # H0 rejected at q: the judge is the better alternative, within epsilon


@dataclass(frozen=True)
class AltTest:
    metric: str
    epsilon: float
    q: float
    comparisons: list[RaterComparison]  # the humans tested
    skipped: int  # humans with fewer than min_instances instances
    instances: int  # instances with enough humans and a judge's value

    @property
    def winning_rate(self) -> float:
        return sum(c.won for c in self.comparisons) / len(self.comparisons) if self.comparisons else math.nan

    @property
    def advantage_probability(self) -> float:
        return float(np.mean([c.judge_advantage for c in self.comparisons])) if self.comparisons else math.nan

    @property
    def passed(self) -> bool | None:
        """Whether the judge passes (winning rate >= 0.5); None when no human could be tested."""
        return None if not self.comparisons else self.winning_rate >= PASS_RATE


def alt_test(instance: np.ndarray, rater: np.ndarray, value: np.ndarray, judge_value: np.ndarray, *,
             metric: str = ACCURACY, epsilon: float = EPSILON, q: float = Q, min_raters: int = MIN_RATERS,
             min_instances: int = MIN_INSTANCES, cluster: np.ndarray | None = None) -> AltTest:
    """The test over human annotations (``instance``: codes 0..I-1, ``rater``: codes, one
    ``value`` each, one annotation per instance and rater) and the judge's ``judge_value`` per
    instance (NaN where it gave none); ``cluster`` labels instances (default: each its own)."""
    if metric not in (ACCURACY, NEG_RMSE):
        raise ValueError(f"metric must be {ACCURACY!r} or {NEG_RMSE!r}, got {metric!r}")
    instance, rater = np.asarray(instance, dtype=np.int64), np.asarray(rater, dtype=np.int64)
    value, judge_value = np.asarray(value, dtype=np.float64), np.asarray(judge_value, dtype=np.float64)
    n = len(judge_value)
    raters_per = np.bincount(instance, minlength=n)
    taking_part = (raters_per >= max(min_raters, 2)) & np.isfinite(judge_value)
    keep = taking_part[instance]
    instance, rater, value = instance[keep], rater[keep], value[keep]
    judge_scores, human_scores = _alignment(instance, value, judge_value, raters_per, metric)
    tolerance = 1e-9 * (1.0 + np.abs(human_scores))
    judge_wins = judge_scores >= human_scores - tolerance
    human_wins = human_scores >= judge_scores - tolerance
    clusters = np.arange(n) if cluster is None else cluster_codes(cluster)[0]
    found, skipped = [], 0
    for code in distinct(rater).tolist():
        mine = rater == code
        if mine.sum() < min_instances:
            skipped += 1
            continue
        difference = human_wins[mine].astype(np.float64) - judge_wins[mine]
        found.append((code, int(mine.sum()), float(judge_wins[mine].mean()), float(human_wins[mine].mean()),
                      *_below_margin(difference, clusters[instance[mine]], epsilon)))
    adjusted = benjamini_yekutieli([f[-1] for f in found]) if found else np.zeros(0)
    comparisons = [RaterComparison(code, count, g, judge, human, p, float(adj), bool(adj <= q))
                   for (code, count, judge, human, g, p), adj in zip(found, adjusted)]
    return AltTest(metric, epsilon, q, comparisons, skipped, int(taking_part.sum()))


def _alignment(instance: np.ndarray, value: np.ndarray, judge_value: np.ndarray, raters_per: np.ndarray,
               metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per annotation (instance i, human j): how well the judge's value and j's value match
    the other humans' values on i, by ``metric`` (higher is better)."""
    others = (raters_per[instance] - 1).astype(np.float64)
    judge = judge_value[instance]
    if metric == ACCURACY:
        classes = int(max(value.max(initial=0), np.nanmax(judge, initial=0))) + 1
        counts = np.bincount(instance * classes + value.astype(np.int64), minlength=len(raters_per) * classes)
        same_as_judge = counts[instance * classes + judge.astype(np.int64)] - (value == judge)
        same_as_human = counts[instance * classes + value.astype(np.int64)] - 1
        return same_as_judge / others, same_as_human / others
    s1 = np.bincount(instance, weights=value, minlength=len(raters_per))[instance] - value
    s2 = np.bincount(instance, weights=value * value, minlength=len(raters_per))[instance] - value * value

    def neg_rmse(x: np.ndarray) -> np.ndarray:  # sum over the others of (x - v)^2 = s2 - 2 x s1 + n x^2
        return -np.sqrt(np.maximum(s2 - 2.0 * x * s1 + others * x * x, 0.0) / others)

    return neg_rmse(judge), neg_rmse(value)


def _below_margin(difference: np.ndarray, cluster: np.ndarray, epsilon: float) -> tuple[int, float]:
    """(clusters, one-sided p of mean(difference) >= epsilon against below it), CR1 by cluster."""
    found = clustered_mean(difference, cluster, null=epsilon)
    g = found.n_sessions or 0
    if g < 2:
        return g, math.nan
    if not found.se > 0:  # every difference alike: the mean is below epsilon or it is not
        return g, 0.0 if found.estimate < epsilon else 1.0
    return g, float(t_cdf((found.estimate - epsilon) / found.se, g - 1))
