"""Change points: did a subject's residuals step at some moment (a provider updating a model
behind the same name, a prompt change), beyond any steady drift?

The null holds a trend: "a straight line in time and no step". A smooth drift is the trend
test's finding; tested against a flat null, the CUSUM would call it a dated step too (a line
bends the CUSUM into an arch: 20 of 20 simulated linear drifts were also flagged as changes).
So each subject's least-squares line in time is taken out of its residuals first, and the
statistic at each split is the t-statistic of a step there beyond that line: the detrended
residuals summed after the split, over their SD under no step (the subject's residual SD
about its line times the spread of the detrended step). From it is subtracted the median of
the other subjects' at the same split (a step common to everyone cannot be told from a
change in the questions); the statistic is the largest absolute difference over the allowed
splits, and the change falls where it peaks.

Sessions are grouped into at most ``MAX_BLOCKS`` consecutive blocks of about equal session
count, so the cost does not grow with the data; the line is fitted over blocks, each block's
records at its mean session time. Time is distinct instants: sessions sharing a timestamp (a
judge run stamps its whole batch with one time) have no order among them, so a block always
holds whole instants and a change always falls between two distinct times. A change needs
``MIN_TIMES_EACH_SIDE`` distinct times on each side of it: with fewer, "before" or "after" is
one or two batches, whose difference from the rest is a batch effect as much as a change.
With fewer distinct times in all, the search is not run (``why_not_tested`` says so).

Calibration: by permutation of the detrended blocks (Freedman & Lane 1983), with the line
refitted inside every permutation, as it was fitted to the data. The same shuffle serves
every subject, which keeps what a session's subjects share; each block's detrended total is
first divided by sqrt(1 - its leverage in the line), since the line pulls the end blocks'
residuals towards 0 and, shuffled unscaled, they made the test anti-conservative over few
instants (8% of null searches at p < 0.05 over 6-10 distinct times; scaled, 2-3%; 3.8% over
300 distinct times). p = (1 + #{permuted statistic >= observed}) / (1 + permutations). At
most one change point per subject is reported; its size is the step beyond the line in a
line-plus-step fit (relative to the median of the other subjects' steps at the same split),
a descriptive figure without a CI, since it is measured where the data say the change is
largest.
"""

from __future__ import annotations

import msgspec
import numpy as np

from council_db.analysis.drift.subjects import median_of_others
from council_db.analysis.drift.trends import MIN_TIMES, TimedResiduals, wide_panel_floor
from council_db.analysis.stats.unique_rows import distinct

MAX_BLOCKS = 100
PERMUTATIONS = 4999
BATCH = 500
CELLS = 500_000  # (permutations x blocks x subjects) cells one statistic computes at a time (~4 MB an array)
STOP_AFTER = 50  # exceedances per subject after which the permutations stop (see _permutation_p_values)
MIN_SESSIONS = 20
MIN_TIMES_EACH_SIDE = 3
MIN_BLOCKS_EACH = 3  # a subject's line needs a third block to leave anything to test


class ChangeSearch(msgspec.Struct, frozen=True):
    """The search's result for one subject; ``at_us`` is when the later segment starts."""

    subject: str
    statistic: float
    p_value: float
    at_us: int
    shift: float
    sessions_before: int
    sessions_after: int


def search(timed: TimedResiduals, rng: np.random.Generator, permutations: int = PERMUTATIONS) -> list[ChangeSearch]:
    """One result per subject with enough data (at least two subjects scored in MIN_BLOCKS_EACH
    blocks, MIN_SESSIONS sessions, 2 x MIN_TIMES_EACH_SIDE distinct times)."""
    if timed.n_sessions < MIN_SESSIONS or timed.n_instants < 2 * MIN_TIMES_EACH_SIDE:
        return []
    n_all = len(timed.names)
    layout = _Blocks.of(timed)
    block = layout.of_session[timed.session]
    totals = _per_block(block, timed.subject, timed.residual, layout.n, n_all)
    records = _per_block(block, timed.subject, np.ones(len(block)), layout.n, n_all)
    squares = np.bincount(timed.subject, weights=timed.residual ** 2, minlength=n_all)
    detrended, sd = _detrend(totals, records, layout.time), np.zeros(n_all)
    spread = (records > 0).sum(axis=0) >= MIN_BLOCKS_EACH
    sd[spread] = _residual_sd(totals[:, spread], records[:, spread], squares[spread], layout.time)
    present = np.flatnonzero(spread & (sd > 0) & wide_panel_floor(timed))
    if len(present) < 2:
        return []
    detrended, records = detrended[:, present], records[:, present]
    sd, splits = sd[present], layout.allowed_splits()
    observed, where = _statistic(detrended[None], records[None], layout.time, sd, splits)
    observed, where = observed[0], where[0]
    p_values = _permutation_p_values(observed, detrended, records, layout.time, sd, splits, rng, permutations)
    shifts = _shifts(detrended, records, layout.time, where)
    out = []
    for i, j in enumerate(present.tolist()):
        k = int(where[i])  # the change falls after block k
        out.append(ChangeSearch(
            subject=timed.names[j], statistic=float(observed[i]), p_value=float(p_values[i]),
            at_us=int(layout.start_us[k + 1]), shift=float(shifts[i]),
            sessions_before=int(layout.sessions[:k + 1].sum()), sessions_after=int(layout.sessions[k + 1:].sum()),
        ))
    return out


def _shifts(detrended: np.ndarray, records: np.ndarray, time: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Per subject i: its step beyond its line after block where[i], less the median of the
    other subjects' steps there. The steps at a split serve every subject whose change falls
    there: one fit per split used, not one per subject (which had cost subjects x blocks x
    subjects: 3.4 s of a 1,000-reviewer report)."""
    shifts = np.zeros(len(where))
    for k in distinct(where).tolist():
        steps = _steps_beyond_trend(detrended, records, time, k)
        mine = np.flatnonzero(where == k)
        shifts[mine] = steps[mine] - median_of_others(steps)[mine]
    return shifts


def _permutation_p_values(observed: np.ndarray, detrended: np.ndarray, records: np.ndarray, time: np.ndarray,
                          sd: np.ndarray, splits: np.ndarray, rng: np.random.Generator,
                          permutations: int) -> np.ndarray:
    """Shuffle the studentised detrended blocks (with their record counts), refit each
    subject's line and recompute the statistic; p per subject.

    Sequential (Besag & Clifford 1991): once every subject's statistic has been matched or
    beaten STOP_AFTER times, every p-value is about 0.1 or more, which no q <= 0.05 can use,
    and the rest of the permutations would only refine numbers nobody acts on; the p-values
    are then over the permutations done. A subject that might be significant keeps all of them."""
    exchangeable = _studentised(detrended, records, time)
    exceed = np.zeros(len(observed))
    done = 0
    while done < permutations and not (done and exceed.min() >= STOP_AFTER):
        b = min(BATCH, permutations - done)
        order = rng.permuted(np.broadcast_to(np.arange(len(time)), (b, len(time))), axis=1)
        for rows in _chunks(b, records.size):
            shuffled = records[order[rows]]
            permuted, _ = _statistic(_detrend(exchangeable[order[rows]], shuffled, time), shuffled, time, sd, splits)
            exceed += (permuted >= observed - 1e-12).sum(axis=0)
        done += b
    return (1.0 + exceed) / (1.0 + done)


def _chunks(batch: int, cells_each: int) -> list[slice]:
    """A batch of permutations in runs of at most CELLS cells (at least one permutation each):
    each permutation's statistic is its own, so the runs give the batch's numbers, while a
    whole batch of 500 permutations x 100 blocks x 1,000 reviewers held 3 GB."""
    step = max(1, CELLS // max(cells_each, 1))
    return [slice(start, min(start + step, batch)) for start in range(0, batch, step)]


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


class _Blocks(msgspec.Struct, frozen=True):
    """Consecutive blocks of whole instants, about equal in sessions."""

    of_session: np.ndarray  # block per session
    instants: np.ndarray  # distinct times per block
    sessions: np.ndarray  # sessions per block
    start_us: np.ndarray  # the first time in each block
    time: np.ndarray  # each block's mean session time, as a share of the window (0 = first time, 1 = last)

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
        times = distinct(timed.ts_us)
        first_instant = np.searchsorted(block_of_instant, np.arange(n))
        sessions = np.bincount(block_of_instant, weights=per_instant, minlength=n)
        share = (times - times[0]) / (times[-1] - times[0])
        return cls(of_session=block_of_instant[instant], instants=np.bincount(block_of_instant, minlength=n),
                   sessions=sessions.astype(np.int64), start_us=times[first_instant],
                   time=np.bincount(block_of_instant, weights=per_instant * share, minlength=n) / sessions)

    def allowed_splits(self) -> np.ndarray:
        """Per split after block k (k < n - 1): whether MIN_TIMES_EACH_SIDE distinct times lie on each side."""
        before = np.cumsum(self.instants)[:-1]
        total = int(self.instants.sum())
        return (before >= MIN_TIMES_EACH_SIDE) & (total - before >= MIN_TIMES_EACH_SIDE)


def _detrend(totals: np.ndarray, records: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Per subject (last axis), over blocks (the axis before): the residual totals less each
    subject's least-squares line in block time (every record at its block's time), fitted on
    its records; any leading axes are permutations. A subject in fewer than two blocks has no
    line and keeps its totals."""
    n0, n1, n2 = (_over_blocks(records, time ** p) for p in range(3))
    y0, y1 = totals.sum(axis=-2), _over_blocks(totals, time)
    det = n0 * n2 - n1 ** 2
    ok = det > 1e-12 * np.maximum(n0, 1.0) ** 2
    safe = np.where(ok, det, 1.0)
    level, slope = np.where(ok, (y0 * n2 - y1 * n1) / safe, 0.0), np.where(ok, (n0 * y1 - n1 * y0) / safe, 0.0)
    return totals - records * (level[..., None, :] + slope[..., None, :] * time[:, None])


def _over_blocks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum over blocks k of values[..., k, j] * weights[k]: a matrix product (numpy's einsum
    takes some 20 times as long on the permutations' (batch, blocks, subjects) arrays)."""
    return np.swapaxes(values, -1, -2) @ weights


def _studentised(detrended: np.ndarray, records: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Detrended block totals over sqrt(1 - leverage of the block in the subject's line): the
    line pulls the end blocks' residuals towards 0, so shuffled unscaled they would put small
    residuals where the line leaves large ones (8% of null searches at p < 0.05 over 6-10
    distinct times; scaled, about 5%)."""
    n0, n1, n2 = (records.T @ time ** p for p in range(3))
    det = n0 * n2 - n1 ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = (n2 - 2 * n1 * time[:, None] + n0 * time[:, None] ** 2) / det
        room = 1.0 - records * spread
        return np.where(room > 1e-9, detrended / np.sqrt(np.maximum(room, 1e-9)), 0.0)


def _residual_sd(totals: np.ndarray, records: np.ndarray, squares: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Per subject: the SD of its residuals about its line (n - 2 df), from block sums and
    the subject's sum of squared residuals: sum (r - fit)^2 = sum r^2 - sum over blocks of
    (totals^2 - detrended^2) / records, the line being a projection."""
    detrended = _detrend(totals, records, time)
    with np.errstate(invalid="ignore", divide="ignore"):
        explained = np.where(records > 0, (totals ** 2 - detrended ** 2) / np.maximum(records, 1.0), 0.0)
    variance = (squares - explained.sum(axis=0)) / np.maximum(records.sum(axis=0) - 2.0, 1.0)
    return np.sqrt(np.maximum(variance, 0.0))


def _per_block(block: np.ndarray, subject: np.ndarray, values: np.ndarray, n_blocks: int, n: int) -> np.ndarray:
    return np.bincount(block * n + subject, weights=values, minlength=n_blocks * n).reshape(n_blocks, n)


def _statistic(detrended: np.ndarray, records: np.ndarray, time: np.ndarray, sd: np.ndarray,
               splits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(batch, blocks, subjects) detrended totals and record counts -> per batch row and
    subject: the largest |own z - median z of the others| over the allowed splits, and the
    block after which it peaks. z at a split is the t-statistic of a step there beyond the
    subject's line: the detrended residuals summed after the split, over their SD under no
    step. Unstandardised, a step's sum shrinks near the window's ends (the line takes up part
    of it) and a 10-block window could not tell a step from a shuffle of it. The allowed
    splits are the same for every permutation, so the test stays exact."""
    after = detrended.sum(axis=1, keepdims=True) - np.cumsum(detrended, axis=1)
    spread = _step_spread(records, time)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(spread > 1e-9, after / (sd * np.sqrt(np.maximum(spread, 1e-9))), 0.0)[:, :-1]
    distance = np.abs(z - median_of_others(z))
    distance = np.where(splits[None, :, None], distance, -1.0)
    return distance.max(axis=1), distance.argmax(axis=1)


def _step_spread(records: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Per split after block k: the records-weighted sum of squares of the step 1[block > k]
    once the subject's line is taken out of it (the variance of the summed detrended
    residuals after k, in units of the residual variance)."""
    n0, n1, n2 = (_over_blocks(records, time ** p)[..., None, :] for p in range(3))
    a = n0 - np.cumsum(records, axis=-2)
    b = n1 - np.cumsum(records * time[:, None], axis=-2)
    det = n0 * n2 - n1 ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        projected = np.where(det > 0, (n2 * a ** 2 - 2 * n1 * a * b + n0 * b ** 2) / np.where(det > 0, det, 1.0), a)
    return a - projected


def _steps_beyond_trend(detrended: np.ndarray, records: np.ndarray, time: np.ndarray, k: int) -> np.ndarray:
    """Per subject: the size of a step after block k in a line-plus-step fit of its residuals
    (by Frisch-Waugh: the detrended totals on the detrended step). A pure step keeps its full
    size; a pure line gives about 0, where "mean after minus mean before" would give the
    line's rise over half the window."""
    after = (np.arange(len(time)) > k).astype(float)[:, None]
    step = _detrend(records * after, records, time)  # per block: records x the detrended step
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = np.where(records > 0, detrended * step / records, 0.0).sum(axis=0)
        norm = np.where(records > 0, step ** 2 / records, 0.0).sum(axis=0)
        return np.nan_to_num(cross / norm)
