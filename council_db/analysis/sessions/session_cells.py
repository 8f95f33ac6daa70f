"""Per (session, reviewer) sums: everything the anomaly tests read.

Both tests are sums of squares within a session's reviewers, so a cell's count, score sum,
sum of squares, whether its scores are all one value, and its squared residuals are enough.
They come from a window's records in memory (``of_records``) or from one SQL pass over every
session of the window (``every_session``): the tests cannot tell the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.loading.score_data import ScoreData


@dataclass(frozen=True)
class Cells:
    """Dense (session, reviewer) arrays, sessions in ``session_ids``' order (indices into the
    records' sessions, or store ids); an empty cell has count 0 and is never constant."""

    count: np.ndarray  # (sessions, reviewers) integers: scores
    within: np.ndarray  # the sum of squares of the scores around the cell's mean (exactly 0 when constant)
    constant: np.ndarray  # bool: at least one score, all the same
    residual_count: np.ndarray  # scores with a joint-model residual
    residual_square: np.ndarray  # the sum of their squared residuals
    low: np.ndarray  # (sessions,) the session's lowest score (its score, when all are one)
    high: np.ndarray  # (sessions,) its highest
    step: float  # the scale's step as the scores show it (``resolution``)
    reviewers: list[str]
    session_ids: np.ndarray  # (sessions,) int64

    @property
    def n_sessions(self) -> int:
        return len(self.session_ids)


def of_records(data: ScoreData, residuals: np.ndarray) -> Cells:
    """The cells of records in memory, with their joint-model residuals (NaN: unused)."""
    n_rev, g = len(data.reviewers), data.n_sessions
    cell = data.session * n_rev + data.reviewer
    size = n_rev * g

    def summed(weights: np.ndarray | None = None, where: np.ndarray | slice = slice(None)) -> np.ndarray:
        return np.bincount(cell[where], weights=None if weights is None else weights[where],
                           minlength=size).astype(float).reshape(g, n_rev)

    ok = np.isfinite(residuals)
    low, high = extremes(cell, data.score, size)
    session_low, session_high = extremes(data.session, data.score, g)
    count, constant = summed().astype(np.int64), (low == high).reshape(g, n_rev)
    return Cells(count=count, within=within(count, summed(data.score), summed(data.score ** 2), constant),
                 constant=constant, residual_count=summed(where=ok).astype(np.int64),
                 residual_square=summed(np.where(ok, residuals, 0.0) ** 2, ok),
                 low=session_low, high=session_high, step=resolution(data.score), reviewers=list(data.reviewers),
                 session_ids=np.arange(g, dtype=np.int64))


def within(count: np.ndarray, total: np.ndarray, square: np.ndarray, constant: np.ndarray) -> np.ndarray:
    """Each cell's sum of squares around its mean from its count, sum and sum of squares;
    exactly 0 where its scores are all one value, not a rounding error's 1e-15."""
    out = np.maximum(square - total ** 2 / np.maximum(count, 1), 0.0)
    out[constant] = 0.0
    return out


def extremes(group: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: the smallest and largest value (inf and -inf where the group is empty)."""
    low = np.full(size, np.inf)
    high = np.full(size, -np.inf)
    np.minimum.at(low, group, values)
    np.maximum.at(high, group, values)
    return low, high


def resolution(scores: np.ndarray) -> float:
    """The scale's step as the scores show it: 1 on integer scores, 0.1 on tenths, ~0 when
    the scores are continuous; 0 when every score is the same."""
    gaps = np.diff(np.unique(np.round(scores, 9)))
    return float(gaps.min()) if gaps.size else 0.0
