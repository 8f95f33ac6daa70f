"""What the anomaly tests read of a window: per (session, reviewer) cell its scores and squared
residuals, per session the rest.

Both tests are sums of squares within a session's reviewers. The erratic test judges each
reviewer's squared residuals apart (per cell); the flat test reads only each session's sum of
its cells' squares around their means, whether its scores are all one value (its lowest and
highest) and, across the window, how often a cell of n scores is constant. So a cell keeps
its count, residual count and squared residuals, and a session its sum of squares and
extremes: a million 4x4 sessions' cells 96 MB, not 124. They come from a window's records in
memory (``of_records``) or from one pass over every session of the window (``every_session``),
a chunk of sessions at a time (``sums_of``): the tests cannot tell the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.unique_rows import distinct


@dataclass(frozen=True)
class Cells:
    """Dense (session, reviewer) arrays and per-session ones, sessions in ``session_ids``' order
    (indices into the records' sessions, or store ids); an empty cell has count 0."""

    count: np.ndarray  # (sessions, reviewers) integers: scores
    residual_count: np.ndarray  # scores with a joint-model residual
    residual_square: np.ndarray  # the sum of their squared residuals
    within: np.ndarray  # (sessions,) the sum over its cells of each one's squares around its mean (0 if constant)
    low: np.ndarray  # (sessions,) the session's lowest score (its score, when all are one)
    high: np.ndarray  # (sessions,) its highest
    constant_share: np.ndarray  # [n]: of the window's cells of n >= 2 scores, the share all one value
    step: float  # the scale's step as the scores show it (``resolution``)
    reviewers: list[str]
    session_ids: np.ndarray  # (sessions,) int64

    @property
    def n_sessions(self) -> int:
        return len(self.session_ids)


class Sums(msgspec.Struct):
    """A chunk of sessions' cells as ``Cells`` keeps them, its tally of constant cells and each
    cell's lowest and highest score (inf and -inf where empty)."""

    count: np.ndarray
    within: np.ndarray
    low: np.ndarray
    high: np.ndarray
    tally: Tally
    cell_low: np.ndarray
    cell_high: np.ndarray


class Tally(msgspec.Struct):
    """By cell size n (index n): the cells of n >= 2 scores, and those whose scores are one value."""

    cells: np.ndarray
    constant: np.ndarray

    def __add__(self, other: Tally) -> Tally:
        size = max(len(self.cells), len(other.cells))

        def padded(counts: np.ndarray) -> np.ndarray:
            return np.pad(counts, (0, size - len(counts)))

        return Tally(padded(self.cells) + padded(other.cells), padded(self.constant) + padded(other.constant))

    def share(self) -> np.ndarray:
        return self.constant / np.maximum(self.cells, 1)


def sums_of(cell: np.ndarray, score: np.ndarray, shape: tuple[int, int]) -> Sums:
    """The cells (``shape``: sessions x reviewers) of records with cell index ``cell``
    (session x reviewers + reviewer) and ``score``."""
    size = shape[0] * shape[1]

    def summed(weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(cell, weights=weights, minlength=size).reshape(shape)

    low, high = extremes(cell, score, size)
    count, constant = summed().astype(np.int64), (low == high).reshape(shape)
    scored = count.ravel() >= 2
    sizes = count.ravel()[scored]
    tally = Tally(np.bincount(sizes).astype(float), np.bincount(sizes, weights=constant.ravel()[scored]))
    return Sums(count, within(count, summed(score), summed(score ** 2), constant).sum(axis=1),
                by_row(low.reshape(shape), np.minimum), by_row(high.reshape(shape), np.maximum), tally, low, high)


def of_records(data: ScoreData, residuals: np.ndarray) -> Cells:
    """The cells of records in memory, with their joint-model residuals (NaN: unused)."""
    n_rev, g = len(data.reviewers), data.n_sessions
    cell = data.session * n_rev + data.reviewer
    ok = np.isfinite(residuals)
    sums = sums_of(cell, data.score, (g, n_rev))
    return Cells(count=sums.count, within=sums.within,
                 residual_count=np.bincount(cell[ok], minlength=n_rev * g).reshape(g, n_rev),
                 residual_square=np.bincount(cell[ok], weights=residuals[ok] ** 2, minlength=n_rev * g
                                             ).astype(float).reshape(g, n_rev),
                 low=sums.low, high=sums.high, constant_share=sums.tally.share(), step=resolution(data.score),
                 reviewers=list(data.reviewers), session_ids=np.arange(g, dtype=np.int64))


def within(count: np.ndarray, total: np.ndarray, square: np.ndarray, constant: np.ndarray) -> np.ndarray:
    """Each cell's sum of squares around its mean from its count, sum and sum of squares;
    exactly 0 where its scores are all one value, not a rounding error's 1e-15."""
    out = np.maximum(square - total ** 2 / np.maximum(count, 1), 0.0)
    out[constant] = 0.0
    return out


def extremes(group: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: the smallest and largest value (inf and -inf where the group is empty); each
    run of one group's values reduced first (records come a cell at a time: a quarter the
    scattered updates), by a reshape where every run is as long (a council where each judge
    scores each answer once: reduceat's cost per run was most of this)."""
    low = np.full(size, np.inf)
    high = np.full(size, -np.inf)
    if not len(group):
        return low, high
    new = np.empty(len(group), dtype=bool)
    new[0] = True
    np.not_equal(group[1:], group[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    runs, length = group[starts], len(group) // len(starts)
    if length * len(starts) == len(group) and not (np.diff(starts) - length).any():
        by_run = values.reshape(len(starts), length)
        run_low, run_high = by_row(by_run, np.minimum), by_row(by_run, np.maximum)
    else:
        run_low, run_high = np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)
    np.minimum.at(low, runs, run_low)
    np.maximum.at(high, runs, run_high)
    return low, high


def by_row(matrix: np.ndarray, reduce: np.ufunc) -> np.ndarray:
    """``reduce`` (np.minimum, np.maximum) over each row of a matrix of few columns, a column at a
    time: numpy's own reduction along a short axis costs several times more per row."""
    out = matrix[:, 0].copy()
    for column in range(1, matrix.shape[1]):
        reduce(out, matrix[:, column], out=out)
    return out


def resolution(scores: np.ndarray) -> float:
    """The scale's step as the scores show it: 1 on integer scores, 0.1 on tenths, ~0 when
    the scores are continuous; 0 when every score is the same."""
    gaps = np.diff(distinct(np.round(scores, 9)))
    return float(gaps.min()) if gaps.size else 0.0
