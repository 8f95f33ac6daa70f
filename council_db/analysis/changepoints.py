"""Change points: did a subject's residuals shift at some moment (a provider updating a model
behind the same name, a prompt change)?

Statistic: the CUSUM of a subject's residuals in time order, standardised by its residual SD
and record count (a Brownian bridge under no change), minus the median CUSUM path of the
other subjects at the same moment (a shift common to everyone cannot be told from a change
in the questions), maximised in absolute value over time. Sessions are grouped into at most
``MAX_BLOCKS`` consecutive blocks of about equal session count, so the cost does not grow with
the data.

Time is distinct instants: sessions sharing a timestamp (a judge run stamps its whole batch
with one time) have no order among them, so a block always holds whole instants and a change
always falls between two distinct times. A change needs ``MIN_TIMES_EACH_SIDE`` distinct times
on each side of it: with fewer, "before" or "after" is one or two batches, whose difference
from the rest is a batch effect as much as a change. With fewer distinct times in all, the
search is not run (``why_not_tested`` says so).

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
from council_db.analysis.trends import MIN_TIMES, TimedResiduals

MAX_BLOCKS = 100
PERMUTATIONS = 4999
BATCH = 500
MIN_SESSIONS = 20
MIN_TIMES_EACH_SIDE = 3


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
    """One result per subject with enough data (at least two subjects, MIN_SESSIONS sessions,
    2 x MIN_TIMES_EACH_SIDE distinct times)."""
    g = timed.n_sessions
    n_all = len(timed.names)
    counts = np.bincount(timed.subject, minlength=n_all)
    sd = _residual_sd(timed, n_all)
    present = np.flatnonzero((counts >= 2) & (sd > 0))
    if g < MIN_SESSIONS or timed.n_instants < 2 * MIN_TIMES_EACH_SIDE or len(present) < 2:
        return []
    layout = _Blocks.of(timed)
    block = layout.of_session[timed.session]
    totals = _per_block(block, timed.subject, timed.residual, layout.n, n_all)[:, present]
    records = _per_block(block, timed.subject, np.ones(len(block)), layout.n, n_all)[:, present]
    mean = totals.sum(axis=0) / records.sum(axis=0)
    steps = (totals - records * mean) / (sd[present] * np.sqrt(records.sum(axis=0)))
    splits = layout.allowed_splits()
    observed, where = _statistic(steps[None], splits)
    observed, where = observed[0], where[0]
    exceed = np.zeros(len(present))
    for start in range(0, permutations, BATCH):
        b = min(BATCH, permutations - start)
        order = rng.permuted(np.broadcast_to(np.arange(layout.n), (b, layout.n)), axis=1)
        permuted, _ = _statistic(steps[order], splits)
        exceed += (permuted >= observed - 1e-12).sum(axis=0)
    p_values = (1.0 + exceed) / (1.0 + permutations)
    out = []
    for i, j in enumerate(present.tolist()):
        k = int(where[i])  # the change falls after block k
        shifts = _shifts(totals, records, k)
        others = np.delete(shifts, i)
        out.append(ChangeSearch(
            subject=timed.names[j], statistic=float(observed[i]), p_value=float(p_values[i]),
            at_us=int(layout.start_us[k + 1]), shift=float(shifts[i] - np.median(others)),
            sessions_before=int(layout.sessions[:k + 1].sum()), sessions_after=int(layout.sessions[k + 1:].sum()),
        ))
    return out


def why_not_tested(timed: TimedResiduals) -> str | None:
    """Why the window's times allow no trend or no change test (None when they allow both):
    the report says this instead of a p-value."""
    g, times = timed.n_sessions, timed.n_instants
    if g == 0 or times >= 2 * MIN_TIMES_EACH_SIDE:
        return None
    if times == 1:
        return f"all {g:,} sessions with two or more scores share one time: no trend or change can be tested"
    untested = "no trend or change was tested" if times < MIN_TIMES else "no change point was tested"
    return (f"the {g:,} sessions with two or more scores fall at only {times} distinct times: a trend needs at "
            f"least {MIN_TIMES}, a change point at least {MIN_TIMES_EACH_SIDE} on each side; {untested} "
            "(sessions sharing a timestamp are one instant)")


@dataclass(frozen=True)
class _Blocks:
    """Consecutive blocks of whole instants, about equal in sessions."""

    of_session: np.ndarray  # block per session
    instants: np.ndarray  # distinct times per block
    sessions: np.ndarray  # sessions per block
    start_us: np.ndarray  # the first time in each block

    @property
    def n(self) -> int:
        return len(self.sessions)

    @classmethod
    def of(cls, timed: TimedResiduals) -> _Blocks:
        g, instant = timed.n_sessions, timed.session_instant
        per_instant = np.bincount(instant)
        sessions_before = np.cumsum(per_instant) - per_instant
        target = min(len(per_instant), MAX_BLOCKS)
        _, block_of_instant = np.unique(sessions_before * target // g, return_inverse=True)
        block_of_instant = block_of_instant.reshape(-1)
        n = int(block_of_instant.max()) + 1
        times = np.unique(timed.ts_us)
        first_instant = np.searchsorted(block_of_instant, np.arange(n))
        return cls(of_session=block_of_instant[instant], instants=np.bincount(block_of_instant, minlength=n),
                   sessions=np.bincount(block_of_instant, weights=per_instant, minlength=n).astype(np.int64),
                   start_us=times[first_instant])

    def allowed_splits(self) -> np.ndarray:
        """Per split after block k (k < n - 1): whether MIN_TIMES_EACH_SIDE distinct times lie on each side."""
        before = np.cumsum(self.instants)[:-1]
        total = int(self.instants.sum())
        return (before >= MIN_TIMES_EACH_SIDE) & (total - before >= MIN_TIMES_EACH_SIDE)


def _residual_sd(timed: TimedResiduals, n: int) -> np.ndarray:
    counts = np.bincount(timed.subject, minlength=n).astype(float)
    total = np.bincount(timed.subject, weights=timed.residual, minlength=n)
    square = np.bincount(timed.subject, weights=timed.residual ** 2, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = (square - total ** 2 / counts) / (counts - 1)
    return np.sqrt(np.nan_to_num(np.maximum(variance, 0.0)))


def _per_block(block: np.ndarray, subject: np.ndarray, values: np.ndarray, n_blocks: int, n: int) -> np.ndarray:
    return np.bincount(block * n + subject, weights=values, minlength=n_blocks * n).reshape(n_blocks, n)


def _statistic(steps: np.ndarray, splits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(batch, blocks, subjects) standardised steps -> per batch row and subject: the largest
    |own CUSUM - median CUSUM of the others| over the allowed splits and the block where it
    peaks. The allowed positions are the same for every permutation, so the test stays exact."""
    paths = np.cumsum(steps, axis=1)
    medians = median_of_others(paths)
    distance = np.abs(paths - medians)[:, :-1]  # the last point is 0 by construction
    distance = np.where(splits[None, :, None], distance, -1.0)
    return distance.max(axis=1), distance.argmax(axis=1)


def _shifts(totals: np.ndarray, records: np.ndarray, k: int) -> np.ndarray:
    """Per subject: mean residual after block k minus mean residual up to it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        before = totals[:k + 1].sum(axis=0) / records[:k + 1].sum(axis=0)
        after = totals[k + 1:].sum(axis=0) / records[k + 1:].sum(axis=0)
    return np.nan_to_num(after - before)
