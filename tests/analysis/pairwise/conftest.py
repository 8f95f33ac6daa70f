"""Pairwise data with planted strengths, built straight as ScoreData rows (no simulator)."""

from __future__ import annotations

import numpy as np

from council_db.analysis.loading.score_data import ScoreData, from_rows


def planted_games(theta: list[float], n_sessions: int, slot: float = 0.0, tie: float = 0.0, seed: int = 0,
                  both_orders: bool = True, judges: tuple[str, ...] = ("judge",)) -> ScoreData:
    """Swap sessions of two random candidates judged by every judge in both orders (or one),
    outcomes from Bradley-Terry with Rao-Kupper ties (band ``tie``) and a first-shown advantage."""
    rng = np.random.default_rng(seed)
    strengths = np.asarray(theta, dtype=np.float64)
    rows = []
    for s in range(n_sessions):
        i, j = rng.choice(len(strengths), 2, replace=False)
        for judge in judges:
            for first, second in ((i, j), (j, i))[:2 if both_orders else 1]:
                eta = strengths[first] - strengths[second] + slot
                u = rng.random()
                y = 0.0 if u < 1 / (1 + np.exp(eta + tie)) else 0.5 if u < 1 / (1 + np.exp(eta - tie)) else 1.0
                rows += [(f"s{s:05d}", s, judge, f"m{first}", 0, 100 + 10 * first, y),
                         (f"s{s:05d}", s, judge, f"m{second}", 1, 100 + 10 * second, 1.0 - y)]
    return from_rows(rows, scale="0-1")
