"""Change points: did a subject's residuals shift at some moment (a provider updating a model
behind the same name, a prompt change)?

Statistic: the CUSUM of a subject's residuals in time order, standardised by its residual SD
and record count (a Brownian bridge under no change), minus the median CUSUM path of the
other subjects at the same moment (a shift common to everyone cannot be told from a change
in the questions), maximised in absolute value over time. Sessions are grouped into at most
``MAX_BLOCKS`` consecutive blocks of equal session count, so the cost does not grow with the
data.

Calibration: by permutation, not a guessed threshold. Under "no change" the blocks are
exchangeable, so the blocks are shuffled (the same shuffle for every subject, which keeps
what a session's subjects share), the statistic is recomputed, and the p-value is
(1 + #{permuted statistic >= observed}) / (1 + permutations). At most one change point per
subject is reported: the moment the statistic peaks; its size (mean residual after minus
before, relative to the median of the other subjects) is a descriptive figure without a CI,
since it is measured where the data say the change is largest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from council_db.analysis.subjects import median_of_others
from council_db.analysis.trends import TimedResiduals

MAX_BLOCKS = 100
PERMUTATIONS = 4999
BATCH = 500
MIN_SESSIONS = 20


@dataclass(frozen=True)
class ChangeSearch:
    """The search's result for one subject; ``at_us`` is when the later segment starts."""

    subject: str
    statistic: float
    p_value: float
    at_us: int
    shift: float
    sessions_before: int
    sessions_after: int


def search(timed: TimedResiduals, rng: np.random.Generator, permutations: int = PERMUTATIONS) -> list[ChangeSearch]:
    """One result per subject with enough data (at least two subjects, MIN_SESSIONS sessions)."""
    g = timed.n_sessions
    n_all = len(timed.names)
    counts = np.bincount(timed.subject, minlength=n_all)
    sd = _residual_sd(timed, n_all)
    present = np.flatnonzero((counts >= 2) & (sd > 0))
    if g < MIN_SESSIONS or len(present) < 2:
        return []
    n_blocks = min(g, MAX_BLOCKS)
    block_of_session = np.arange(g) * n_blocks // g
    block = block_of_session[timed.session]
    totals = _per_block(block, timed.subject, timed.residual, n_blocks, n_all)[:, present]
    records = _per_block(block, timed.subject, np.ones(len(block)), n_blocks, n_all)[:, present]
    mean = totals.sum(axis=0) / records.sum(axis=0)
    steps = (totals - records * mean) / (sd[present] * np.sqrt(records.sum(axis=0)))
    observed, where = _statistic(steps[None])
    observed, where = observed[0], where[0]
    exceed = np.zeros(len(present))
    for start in range(0, permutations, BATCH):
        b = min(BATCH, permutations - start)
        order = rng.permuted(np.broadcast_to(np.arange(n_blocks), (b, n_blocks)), axis=1)
        permuted, _ = _statistic(steps[order])
        exceed += (permuted >= observed - 1e-12).sum(axis=0)
    p_values = (1.0 + exceed) / (1.0 + permutations)
    first_session_us = _first_time_per_session(timed, g)
    block_start_us = first_session_us[np.searchsorted(block_of_session, np.arange(n_blocks))]
    sessions_per_block = np.bincount(block_of_session, minlength=n_blocks)
    out = []
    for i, j in enumerate(present.tolist()):
        k = int(where[i])  # the change falls after block k
        shifts = _shifts(totals, records, k)
        others = np.delete(shifts, i)
        out.append(ChangeSearch(
            subject=timed.names[j], statistic=float(observed[i]), p_value=float(p_values[i]),
            at_us=int(block_start_us[k + 1]), shift=float(shifts[i] - np.median(others)),
            sessions_before=int(sessions_per_block[:k + 1].sum()), sessions_after=int(sessions_per_block[k + 1:].sum()),
        ))
    return out


def _residual_sd(timed: TimedResiduals, n: int) -> np.ndarray:
    counts = np.bincount(timed.subject, minlength=n).astype(float)
    total = np.bincount(timed.subject, weights=timed.residual, minlength=n)
    square = np.bincount(timed.subject, weights=timed.residual ** 2, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = (square - total ** 2 / counts) / (counts - 1)
    return np.sqrt(np.nan_to_num(np.maximum(variance, 0.0)))


def _per_block(block: np.ndarray, subject: np.ndarray, values: np.ndarray, n_blocks: int, n: int) -> np.ndarray:
    return np.bincount(block * n + subject, weights=values, minlength=n_blocks * n).reshape(n_blocks, n)


def _statistic(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(batch, blocks, subjects) standardised steps -> per batch row and subject: the largest
    |own CUSUM - median CUSUM of the others| and the block where it peaks."""
    paths = np.cumsum(steps, axis=1)
    medians = median_of_others(paths)
    distance = np.abs(paths - medians)[:, :-1]  # the last point is 0 by construction
    return distance.max(axis=1), distance.argmax(axis=1)


def _shifts(totals: np.ndarray, records: np.ndarray, k: int) -> np.ndarray:
    """Per subject: mean residual after block k minus mean residual up to it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        before = totals[:k + 1].sum(axis=0) / records[:k + 1].sum(axis=0)
        after = totals[k + 1:].sum(axis=0) / records[k + 1:].sum(axis=0)
    return np.nan_to_num(after - before)


def _first_time_per_session(timed: TimedResiduals, g: int) -> np.ndarray:
    times = np.full(g, np.iinfo(np.int64).max)
    np.minimum.at(times, timed.session, timed.ts_us)
    return times
