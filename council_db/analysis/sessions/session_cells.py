"""What the anomaly tests read of a window: per (session, reviewer) cell its scores and squared
residuals, per session the rest.

Both tests are sums of squares within a session's reviewers. The erratic test judges each
reviewer's squared residuals apart (per cell); the flat test reads only each session's sum of
its cells' squares around their means, whether its scores are all one value (its lowest and
highest) and, across the window, how often a cell of n scores is constant. So a cell keeps
its reviewer, count, residual count and squared residuals, and a session its number of cells,
sum of squares and extremes. Cells are kept only where records are, a session's together: a
panel of 50,000 reviewers over 50,000 sessions of 3 records has 150,000 cells, where a
sessions x reviewers array had 2.5e9 (18.6 GiB); a million 4x4 sessions' cells take 92 MB.
They come from a window's records in memory (``of_records``) or from one pass over every
session of the window (``every_session``), a chunk of sessions at a time (``sums_of``): the
tests cannot tell the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import numpy as np

from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.unique_rows import distinct

TABLE_PER_RECORD = 4  # cells found through a table of every (session, reviewer) up to 4 per record, else by a sort


@dataclass(frozen=True)
class Cells:
    """The (session, reviewer) cells that hold records, a session's cells together and the
    sessions in ``session_ids``' order (sessions are indices into the records' sessions, or
    store ids), its reviewers ascending; and per-session arrays."""

    present: np.ndarray  # (sessions,) int32: its cells (the reviewers who scored in it)
    reviewer: np.ndarray  # (cells,) the cell's reviewer, an index into ``reviewers`` (``reviewer_type``)
    count: np.ndarray  # (cells,) integers: scores
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

    def session_of(self) -> np.ndarray:
        """Each cell's session, an index into the per-session arrays."""
        return np.repeat(np.arange(self.n_sessions, dtype=np.int32), self.present)  # 4 bytes a cell: a million sessions

    def records(self) -> np.ndarray:
        """Per session: its scores."""
        # summed as int32 whatever the cells' type (uint16 in a window's pass): 4 MB at 1M
        return per_session(self.count.astype(np.int32, copy=False), self.present, np.add, 0)


class Sums(msgspec.Struct):
    """A chunk of sessions' cells as ``Cells`` keeps them (its reviewers at most ``reviewers``),
    each record's cell (``cell_of``: an index into the cells), its tally of constant cells and
    each cell's lowest and highest score."""

    present: np.ndarray
    reviewer: np.ndarray
    count: np.ndarray
    within: np.ndarray
    low: np.ndarray
    high: np.ndarray
    cell_of: np.ndarray
    tally: Tally
    cell_low: np.ndarray
    cell_high: np.ndarray

    def summed(self, values: np.ndarray) -> np.ndarray:
        """Per cell: the sum of its records' ``values``."""
        return np.bincount(self.cell_of, weights=values, minlength=len(self.count))


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


def sums_of(session: np.ndarray, reviewer: np.ndarray, score: np.ndarray, shape: tuple[int, int]) -> Sums:
    """The cells of records with ``session`` (of ``shape[0]``), ``reviewer`` (of ``shape[1]``)
    and ``score``, kept where records are."""
    keys, cell_of = distinct_keys(session * shape[1] + reviewer, shape[0] * shape[1])
    cells = len(keys)
    count = np.bincount(cell_of, minlength=cells)
    cell_low, cell_high = extremes(cell_of, score, cells)
    constant = cell_low == cell_high
    spread = within(count, np.bincount(cell_of, weights=score, minlength=cells),
                    np.bincount(cell_of, weights=score ** 2, minlength=cells), constant)
    cell_session = keys // shape[1]
    present = np.bincount(cell_session, minlength=shape[0]).astype(np.int32)
    scored = count >= 2
    sizes = count[scored]
    tally = Tally(np.bincount(sizes).astype(float), np.bincount(sizes, weights=constant[scored]))
    low, high = per_session(cell_low, present, np.minimum, np.inf), per_session(cell_high, present, np.maximum, -np.inf)
    return Sums(present, (keys % shape[1]).astype(reviewer_type(shape[1])), count,
                np.bincount(cell_session, weights=spread, minlength=shape[0]), low, high, cell_of, tally, cell_low,
                cell_high)


def reviewer_type(reviewers: int) -> type:
    """The smallest integer type a cell's reviewer fits (a million 4x4 sessions' cells: 8 MB less than int32)."""
    return np.uint16 if reviewers <= np.iinfo(np.uint16).max + 1 else np.int32


def of_records(data: ScoreData, residuals: np.ndarray) -> Cells:
    """The cells of records in memory, with their joint-model residuals (NaN: unused)."""
    sums = sums_of(data.session, data.reviewer, data.score, (data.n_sessions, len(data.reviewers)))
    ok = np.isfinite(residuals)
    return Cells(present=sums.present, reviewer=sums.reviewer, count=sums.count, within=sums.within,
                 residual_count=sums.summed(ok).astype(np.int64),
                 residual_square=sums.summed(np.where(ok, residuals, 0.0) ** 2),
                 low=sums.low, high=sums.high, constant_share=sums.tally.share(), step=resolution(data.score),
                 reviewers=list(data.reviewers), session_ids=np.arange(data.n_sessions, dtype=np.int64))


def distinct_keys(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys (of ``size`` possible) in order, and each one's index among them:
    through a table of every possible key where they are few against the keys (a chunk of a
    small council's sessions: no sort), by one sort where not (a wide panel)."""
    if size > TABLE_PER_RECORD * len(key):
        found, index = np.unique(key, return_inverse=True)
        return found, index.reshape(-1)
    seen = np.zeros(size, dtype=bool)
    seen[key] = True
    return np.flatnonzero(seen), (np.cumsum(seen) - 1)[key]


def per_session(values: np.ndarray, present: np.ndarray, reduce: np.ufunc, empty: float) -> np.ndarray:
    """``reduce`` (np.add, np.minimum, np.maximum) over each session's cells (``empty`` for a session with none)."""
    out = np.full(len(present), empty, dtype=np.result_type(values, empty))
    has = present > 0
    if not has.any():
        return out
    starts = np.zeros(len(present), dtype=np.int64)  # one array of offsets (a million sessions: 8 MB), not three
    np.cumsum(present[:-1], out=starts[1:])
    kept = starts if has.all() else starts[has]
    # in the values' own type where that holds the result: a cast first copies every cell (38 MB at 1M)
    out[has] = reduce.reduceat(values, kept, dtype=out.dtype)
    return out


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
