"""How differently two sides grade the items both scored: the share of verdicts that flip, the
paired mean difference, Cohen's kappa on the verdicts and the quadratically weighted kappa on
the scores, each with an expanded percentile CI from resampling whole clusters (sessions or
queries: the items of one cluster share a query and answers, so they are not independent);
and which candidates move most, each candidate's paired difference with a CR1 t test, and
Benjamini-Hochberg q-values over the candidates and the overall difference together.

The weighted kappa of continuous scores with quadratic weights is Lin's concordance
correlation, 2 cov(a, b) / (var a + var b + (mean a - mean b)^2): 1 only when the two sides
give every item the same score, lower for a shift as well as for noise (Fleiss & Cohen 1973
show the two agree). Every figure is a function of per-cluster sums, so one resample is one
matrix product (stats.bootstrap).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.stats.bootstrap import bootstrap_estimate
from council_db.analysis.stats.clustered import clustered_mean
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import benjamini_hochberg
from council_db.analysis.stats.verdict_tables import cohen_kappa
from council_db.analysis.versions.pairing import PairedItems

N_BOOT = 2000
ALPHA = 0.05
BOOTSTRAP = "expanded percentile bootstrap, resampling clusters"


@dataclass(frozen=True)
class CandidateShift:
    """One candidate's paired difference (second minus first), its CR1 t test and BH q."""

    candidate: str
    items: int
    difference: Estimate
    q_value: float


@dataclass(frozen=True)
class SameItems:
    items: int
    clusters: int
    flip_rate: Estimate  # share of items whose verdict differs
    mean_difference: Estimate  # second minus first, score points
    kappa: Estimate  # Cohen's kappa of the two sides' verdicts
    weighted_kappa: Estimate  # quadratic weights on the scores (Lin's concordance)
    overall_q: float  # the mean difference's BH q-value, in the candidates' family
    candidates: list[CandidateShift]  # largest |difference| first

    def changed(self, alpha: float = ALPHA) -> bool:
        """Whether the second side grades differently: the mean difference or a candidate's at q <= alpha."""
        return self.overall_q <= alpha or any(c.q_value <= alpha for c in self.candidates)


def _ratio(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[:, 1] / sums[:, 0]


def _concordance(sums: np.ndarray) -> np.ndarray:
    """Lin's concordance from the sums of 1, a, b, a^2, b^2, ab."""
    n, a, b, aa, bb, ab = sums.T
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_a, mean_b = a / n, b / n
        var_a, var_b, cov = aa / n - mean_a ** 2, bb / n - mean_b ** 2, ab / n - mean_a * mean_b
        return 2.0 * cov / (var_a + var_b + (mean_a - mean_b) ** 2)


def _per_cluster(items: PairedItems, *columns: np.ndarray) -> np.ndarray:
    """Per cluster, the sums of each column: shape (clusters, columns)."""
    g = items.n_clusters
    return np.column_stack([np.bincount(items.cluster, weights=column.astype(np.float64), minlength=g)
                            for column in columns])


def _candidate_shifts(items: PairedItems, difference: np.ndarray) -> list[Estimate]:
    return [clustered_mean(difference[items.candidate == c], items.cluster[items.candidate == c])
            for c in range(len(items.candidates))]


def compare(items: PairedItems, *, n_boot: int = N_BOOT, seed: int = 0) -> SameItems:
    """Every figure of the two sides on their shared items (``items.n_items`` > 0)."""
    rng = np.random.default_rng(seed)
    ones, d = np.ones(items.n_items), items.second - items.first
    flips = items.first_verdict != items.second_verdict
    a, b = items.first_verdict.astype(np.int64), items.second_verdict.astype(np.int64)
    cells = [(a == i) & (b == j) for i in (0, 1) for j in (0, 1)]
    flip_rate = bootstrap_estimate(_per_cluster(items, ones, flips), _ratio, n_boot, rng, 0.95, BOOTSTRAP)
    mean_difference = bootstrap_estimate(_per_cluster(items, ones, d), _ratio, n_boot, rng, 0.95, BOOTSTRAP)
    kappa = bootstrap_estimate(_per_cluster(items, *cells), cohen_kappa, n_boot, rng, 0.95, BOOTSTRAP)
    x, y = items.first, items.second
    weighted = bootstrap_estimate(_per_cluster(items, ones, x, y, x * x, y * y, x * y), _concordance, n_boot, rng,
                                  0.95, BOOTSTRAP)
    shifts = _candidate_shifts(items, d)
    tests = [clustered_mean(d, items.cluster)] + shifts
    q = benjamini_hochberg([np.nan if t.p_value is None else t.p_value for t in tests])
    counts = np.bincount(items.candidate, minlength=len(items.candidates))
    candidates = [CandidateShift(name, int(counts[c]), shifts[c], float(q[c + 1]))
                  for c, name in enumerate(items.candidates) if counts[c]]
    candidates.sort(key=lambda s: -abs(s.difference.estimate) if s.difference.computable else 0.0)
    return SameItems(items.n_items, items.n_clusters, flip_rate, mean_difference, kappa, weighted, float(q[0]),
                     candidates)
