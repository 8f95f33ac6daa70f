"""Agreement between two raters' verdicts on pairs of answers, from 3x3 tables.

A verdict on two answers is one of three classes: the second better (-1), a tie (0), the first
better (+1), coded 0, 1, 2 here. Every coefficient below is a function of the table that counts
(or weighs) how often rater 1 said class a while rater 2 said class b, so a table per cluster
(session or item) is all a bootstrap needs: a resample is a weighted sum of tables, and each
function takes a stack of tables, one per (re)sample, shape (B, 3, 3) or (B, 9).

* ``agreement``: the share of the table on its diagonal (raw agreement).
* ``cohen_kappa``: (p_o - p_e) / (1 - p_e), p_e from the two margins (Cohen 1960). Given a
  symmetric table (both orders of every pair of raters, as for raters of one kind) p_e comes
  from one pooled margin: Scott's pi, Fleiss' kappa for pairs.
* ``without_ties``: the 2x2 corner where neither rater said tie: MT-bench's "without tie"
  agreement (Zheng et al. 2023, setup S2; S1 keeps ties), over which the first two apply as well.
* ``kendall_tau_b``: (concordant - discordant) / sqrt(pairs untied by rater 1 x pairs untied
  by rater 2): Kendall's tau-b pooled over every pair of answers in the tables.
"""

from __future__ import annotations

import numpy as np

CLASSES = 3  # second better, tie, first better
TIE = 1


def verdict_class(verdict: np.ndarray) -> np.ndarray:
    """Class codes 0, 1, 2 for verdicts -1, 0, +1."""
    return np.asarray(verdict).astype(np.int64) + 1


def cluster_tables(cluster: np.ndarray, first: np.ndarray, second: np.ndarray, weight: np.ndarray,
                   n_clusters: int) -> np.ndarray:
    """Per cluster, the table of (rater 1's class, rater 2's class) weights: shape (n_clusters, 9).
    ``first`` and ``second`` are class codes (0, 1, 2), one entry per compared verdict."""
    cell = (cluster * CLASSES + first) * CLASSES + second
    return np.bincount(cell, weights=weight, minlength=n_clusters * CLASSES * CLASSES).reshape(n_clusters, -1)


def _square(tables: np.ndarray) -> np.ndarray:
    tables = np.asarray(tables, dtype=np.float64)
    k = int(round(np.sqrt(tables.shape[-1]))) if tables.ndim <= 2 else tables.shape[-1]
    return tables.reshape(-1, k, k)


def agreement(tables: np.ndarray) -> np.ndarray:
    """Raw agreement per table; NaN for an empty table."""
    t = _square(tables)
    total = t.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.trace(t, axis1=1, axis2=2) / total, np.nan)


def chance_agreement(tables: np.ndarray) -> np.ndarray:
    """The agreement expected by chance from the two margins, sum_k p1(k) p2(k), per table."""
    t = _square(tables)
    total = t.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (t.sum(axis=2) * t.sum(axis=1)).sum(axis=1) / (total * total)


def cohen_kappa(tables: np.ndarray) -> np.ndarray:
    """Cohen's kappa per table; NaN when chance agreement is 1 (both raters used one class)."""
    observed, chance = agreement(tables), chance_agreement(tables)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (observed - chance) / (1.0 - chance)
    return np.where(np.isfinite(observed) & (chance < 1.0 - 1e-12), kappa, np.nan)


def without_ties(tables: np.ndarray) -> np.ndarray:
    """The 2x2 tables of the verdicts where neither rater said tie, shape (B, 2, 2)."""
    t = _square(tables)
    decided = [c for c in range(CLASSES) if c != TIE]
    return t[:, decided][:, :, decided]


def kendall_tau_b(tables: np.ndarray) -> np.ndarray:
    """Kendall's tau-b over the answer pairs the tables count; NaN when a rater tied every pair."""
    t = _square(tables)
    total = t.sum(axis=(1, 2))
    concordant = t[:, 0, 0] + t[:, 2, 2]
    discordant = t[:, 0, 2] + t[:, 2, 0]
    untied = (total - t[:, TIE, :].sum(axis=1)) * (total - t[:, :, TIE].sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, (concordant - discordant) / np.sqrt(untied), np.nan)
