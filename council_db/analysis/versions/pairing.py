"""The items two sides both scored, as aligned numpy arrays, and each side's verdict on them.

An item is one candidate's answer in one cluster: a session when two reviewers are compared
(the same answer, scored by both), a query when two config versions are (the same question,
answered by the same model, judged under each). A side's score of an item is the mean of its
scores of it (repeats and, for a config version, its reviewers). The verdict is what a judge
decides about the answer: pass (score >= the midpoint) on a 0-1 scale, where a score is a
grade; elsewhere whether it is the side's top choice among the candidates both sides scored
in that cluster (ties at the top all count as top).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PASS_SCALES = ("0-1",)  # scales whose scores are grades: the verdict is pass/fail at PASS_AT
PASS_AT = 0.5


@dataclass(frozen=True)
class PairedItems:
    """One entry per item both sides scored, ordered by cluster."""

    cluster: np.ndarray  # int64 0..n_clusters-1: the unit resampled (a session or a query)
    candidate: np.ndarray  # int64 index into ``candidates``
    first: np.ndarray  # float64, the first side's score
    second: np.ndarray  # float64, the second side's score
    first_verdict: np.ndarray  # bool: pass, or top choice in its cluster
    second_verdict: np.ndarray
    candidates: list[str]
    verdict: str  # what a verdict means, in words
    only_first: int  # items only the first side scored
    only_second: int

    @property
    def n_items(self) -> int:
        return len(self.first)

    @property
    def n_clusters(self) -> int:
        return int(self.cluster.max()) + 1 if len(self.cluster) else 0


def _item_means(item: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct item codes and the mean score of each."""
    codes, index = np.unique(item, return_inverse=True)
    means = np.bincount(index, weights=score) / np.bincount(index)
    return codes, means


def _top_choices(cluster: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Per item, whether its score is the highest in its cluster (``cluster`` sorted)."""
    starts = np.flatnonzero(np.r_[True, cluster[1:] != cluster[:-1]])
    best = np.maximum.reduceat(score, starts) if len(score) else score
    return score >= best[np.searchsorted(starts, np.arange(len(score)), side="right") - 1] - 1e-12


def pair_items(cluster: np.ndarray, candidate: np.ndarray, score: np.ndarray, first: np.ndarray,
               second: np.ndarray, candidates: list[str], scale: str) -> PairedItems:
    """The items both sides scored. Per record: ``cluster`` (any int64 code), ``candidate``,
    ``score``, and whether it is the ``first`` or the ``second`` side's (never both)."""
    width = np.int64(max(len(candidates), 1))
    item = cluster.astype(np.int64) * width + candidate
    codes_a, mean_a = _item_means(item[first], score[first])
    codes_b, mean_b = _item_means(item[second], score[second])
    shared, in_a, in_b = np.intersect1d(codes_a, codes_b, assume_unique=True, return_indices=True)
    raw_cluster = shared // width
    _, dense = np.unique(raw_cluster, return_inverse=True)
    a, b = mean_a[in_a], mean_b[in_b]
    if scale in PASS_SCALES:
        verdict, first_verdict, second_verdict = f"pass (score >= {PASS_AT:g})", a >= PASS_AT, b >= PASS_AT
    else:
        verdict = "top choice: the highest score among the candidates both sides scored in the cluster"
        first_verdict, second_verdict = _top_choices(dense, a), _top_choices(dense, b)
    return PairedItems(dense.astype(np.int64), (shared % width).astype(np.int64), a, b, first_verdict,
                       second_verdict, list(candidates), verdict, len(codes_a) - len(shared),
                       len(codes_b) - len(shared))
