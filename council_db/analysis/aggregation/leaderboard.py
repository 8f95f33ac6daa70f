"""Rank candidate models by their consensus scores over a window, with honest uncertainty.

A model's score is the mean consensus score of its answers in the window (each answer counts
once, whatever its number of reviewers). Its 95% CI, and the 95% interval of its rank, come
from resampling whole sessions (``stats.session_weights``): the answers of one session share
a query and reviewers, so they are not independent. The score interval is the expanded
percentile interval (right with tens of sessions); the rank interval holds the 2.5% and
97.5% quantiles of the model's rank over the resamples. Offsets or scales a strategy used
are held fixed in the resampling, so for bias-adjusted and normalized the intervals leave out
the (small, at hundreds of sessions) uncertainty of the calibration itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis.aggregation.strategies import Consensus
from council_db.analysis.stats import Estimate, percentile_interval, ranks_of_rows, resampled_sums

N_BOOT = 2000
METHOD = "session bootstrap, expanded percentile"


@dataclass(frozen=True)
class Standing:
    rank: int  # 1 = best, by the point estimate
    model: str
    score: Estimate  # mean consensus score with its 95% CI
    rank_low: int | None  # 95% interval of the rank over session resamples
    rank_high: int | None
    n_sessions: int  # sessions in which the model has an answer
    n_answers: int
    n_records: int  # reviewer scores behind its consensus scores


def leaderboard(consensus: Consensus, n_boot: int = N_BOOT, seed: int = 0) -> list[Standing]:
    """Models in rank order, best first."""
    sessions, session = np.unique(consensus.session, return_inverse=True)
    n_models = len(consensus.models)
    cell = session * n_models + consensus.model
    size = len(sessions) * n_models
    totals = np.bincount(cell, weights=consensus.score, minlength=size).reshape(-1, n_models)
    counts = np.bincount(cell, minlength=size).reshape(-1, n_models).astype(np.float64)
    records = np.bincount(consensus.model, weights=consensus.n_reviewers, minlength=n_models)
    present = np.flatnonzero(counts.sum(axis=0) > 0)
    totals, counts = totals[:, present], counts[:, present]

    point = totals.sum(axis=0) / counts.sum(axis=0)
    sums = resampled_sums(np.hstack([totals, counts]), n_boot, seed)
    k = len(present)
    with np.errstate(invalid="ignore", divide="ignore"):
        samples = sums[:, :k] / sums[:, k:]
    ranks = ranks_of_rows(samples)
    order = np.argsort(-point, kind="stable")
    standings = []
    for place, j in enumerate(order.tolist(), start=1):
        n_sessions = int((counts[:, j] > 0).sum())
        low, high = percentile_interval(samples[:, j], n_sessions=len(sessions)) if n_sessions >= 2 \
            else (math.nan, math.nan)
        rank_low, rank_high = (int(np.quantile(ranks[:, j], 0.025, method="lower")),
                               int(np.quantile(ranks[:, j], 0.975, method="higher"))) if n_sessions >= 2 \
            else (None, None)
        standings.append(Standing(
            rank=place, model=consensus.models[present[j]],
            score=Estimate(float(point[j]), low, high, n_sessions=n_sessions, method=METHOD),
            rank_low=rank_low, rank_high=rank_high, n_sessions=n_sessions,
            n_answers=int(counts[:, j].sum()), n_records=int(records[present[j]]),
        ))
    return standings

