"""Lines of residuals on time, one slope per subject fitted WITHIN pairs: a reviewer's slope
from the time variation inside each (reviewer, candidate) pair, a candidate's from inside each
(candidate, reviewer) pair. Pooled over its pairs, a candidate's residuals step up when a
reviewer that likes it joins the panel late, and that read as the candidate drifting; within
a pair the composition of the panel cannot make a slope.

The covariance of the slopes is cluster-robust by instant (sessions sharing a timestamp are one
instant), with each (instant, subject) cell's score corrected for its leverage in the
subject's fit (CR2). ``Cells`` gives the per-(instant, pair) sums, from which a resample of
instants refits every slope with one matrix product.
"""

from __future__ import annotations

import msgspec
import numpy as np

from council_db.analysis.stats.unique_rows import distinct

MAX_CELLS = 2_000_000  # cell sums per dense block in Cells.slopes (16 MB)
# Cells.slopes sums through an instants x pairs matrix of cell sums (one matrix product per
# batch of resamples) when it has at most this many entries per record: a panel every pair of
# which is scored at most instants (a council: 200 resamples of 1,000 sessions, 4 x 4, 6 ms
# against 40 ms over the records); a wide, sparse panel sums over its records instead.
DENSE_PER_RECORD = 2


class LineFits(msgspec.Struct, frozen=True):
    """Per subject: its within-pair slope and the slopes' joint clustered covariance."""

    beta: np.ndarray  # NaN where not identified
    ok: np.ndarray  # scored at min_times distinct times, and time varies within its pairs
    precision: np.ndarray  # Sxx / residual variance: its weight in the typical subject
    cov: np.ndarray  # subjects x subjects, clustered by instant (CR2)
    records: np.ndarray
    sessions: np.ndarray
    spread: np.ndarray  # instants x subjects: each instant's share of the subject's time variation (Sxx)


class Records(msgspec.Struct, frozen=True):
    """The records a fit uses, as codes: instant (0..T-1), session, subject (0..S-1), pair
    (0..P-1, nested in subject), time (any unit, centred) and residual."""

    instant: np.ndarray
    session: np.ndarray
    subject: np.ndarray
    pair: np.ndarray
    t: np.ndarray
    residual: np.ndarray
    n_instants: int
    n_subjects: int

    @property
    def n_pairs(self) -> int:
        return int(self.pair.max()) + 1 if len(self.pair) else 0

    def subject_of_pair(self) -> np.ndarray:
        out = np.zeros(self.n_pairs, dtype=np.int64)
        out[self.pair] = self.subject
        return out


def line_fits(r: Records, min_times: int) -> LineFits:
    s, p, n_subjects = r.subject, r.pair, r.n_subjects
    counts = np.bincount(s, minlength=n_subjects).astype(float)
    pair_n = np.bincount(p, minlength=r.n_pairs).astype(float)
    dt = r.t - (np.bincount(p, weights=r.t, minlength=r.n_pairs) / np.maximum(pair_n, 1.0))[p]
    dr = r.residual - (np.bincount(p, weights=r.residual, minlength=r.n_pairs) / np.maximum(pair_n, 1.0))[p]
    sxx = np.bincount(s, weights=dt * dt, minlength=n_subjects)
    sxy = np.bincount(s, weights=dt * dr, minlength=n_subjects)
    ok = (sxx > 1e-12 * np.maximum(counts, 1)) & (_distinct(s, r.instant, n_subjects) >= min_times)
    safe_sxx = np.where(ok, sxx, 1.0)
    beta = np.where(ok, sxy / safe_sxx, np.nan)
    fitted = dr - np.nan_to_num(beta)[s] * dt
    pairs_per = np.bincount(r.subject_of_pair(), minlength=n_subjects)
    variance = np.bincount(s, weights=fitted ** 2, minlength=n_subjects) / np.maximum(counts - pairs_per - 1, 1.0)
    ok &= variance > 0
    cell = r.instant * n_subjects + s
    influence = np.where(ok[s], dt * fitted / safe_sxx[s], 0.0) * _small_sample_factor(r, cell, dt, pair_n, sxx)
    u = np.bincount(cell, weights=influence, minlength=r.n_instants * n_subjects).reshape(r.n_instants, n_subjects)
    precision = np.where(ok, sxx / np.where(ok, variance, 1.0), 0.0)
    spread = np.bincount(cell, weights=dt * dt, minlength=r.n_instants * n_subjects).reshape(r.n_instants, n_subjects)
    return LineFits(beta, ok, precision, u.T @ u, counts, _distinct(s, r.session, n_subjects), spread / safe_sxx)


def _distinct(subject: np.ndarray, code: np.ndarray, n_subjects: int) -> np.ndarray:
    """Per subject: how many distinct values of ``code`` its records have."""
    span = int(code.max()) + 1 if len(code) else 1
    return np.bincount(distinct(subject * span + code) // span, minlength=n_subjects)


def _small_sample_factor(r: Records, cell: np.ndarray, dt: np.ndarray, pair_n: np.ndarray,
                         sxx: np.ndarray) -> np.ndarray:
    """Per record: 1 / sqrt(1 - h), h the leverage of its (instant, subject) cell in the
    subject's fit along the cell's score (CR2, Bell & McCaffrey 2002). Time is constant within
    an instant, so a pair's m records in the cell share one dt: h = sum m^2 dt^2 / n_pair over
    the cell's pairs / sum m dt^2, plus sum m dt^2 / Sxx (one pair: m / n + m dt^2 / Sxx). Few
    instants give the end ones a leverage near 1 and residuals near 0, and the plain clustered
    SE would then be far too small (a 22% false-flag rate at 3 instants, 12% at 4)."""
    _, sub = np.unique(r.instant * r.n_pairs + r.pair, return_inverse=True)
    in_sub = np.bincount(sub.reshape(-1))[sub.reshape(-1)]
    size = r.n_instants * r.n_subjects
    spread = np.bincount(cell, weights=in_sub * dt * dt / pair_n[r.pair], minlength=size)
    total = np.bincount(cell, weights=dt * dt, minlength=size)
    subject_of_cell = np.arange(size) % r.n_subjects
    with np.errstate(invalid="ignore", divide="ignore"):
        leverage = np.where(total > 0, spread / total + total / sxx[subject_of_cell], 0.0)
    room = 1.0 - leverage[cell]
    return np.where(room > 1e-9, 1.0 / np.sqrt(np.maximum(room, 1e-9)), 0.0)


class Cells(msgspec.Struct, frozen=True):
    """The records' n, n t, n t^2, residual and residual x t, in pair order, which ``slopes``
    sums per pair under each resample's instant weights. Plain numpy: scipy.sparse held the
    cells before, and importing it cost a report about a quarter second (and its products were
    7x slower on the 1M-session report's sample)."""

    instant: np.ndarray  # per record, records in pair order
    starts: np.ndarray  # where each present pair's records start
    present: np.ndarray  # the pairs with records, ascending
    values: np.ndarray  # records x 5
    n_instants: int
    n_pairs: int
    by_subject: np.ndarray  # the pairs in subject order
    subject_starts: np.ndarray  # where each present subject's pairs start, in that order
    subjects: np.ndarray  # the subjects with pairs, ascending
    n_subjects: int
    dense: np.ndarray | None  # instants x (5 x pairs): each (instant, pair) cell's sums; None when sparse

    @classmethod
    def of(cls, r: Records) -> Cells:
        order = np.argsort(r.pair, kind="stable")
        values = np.column_stack([np.ones(len(r.t)), r.t, r.t * r.t, r.residual, r.residual * r.t])
        starts, present = _runs(r.pair[order])
        subject = r.subject_of_pair()
        by_subject = np.argsort(subject, kind="stable")
        subject_starts, subjects = _runs(subject[by_subject])
        return cls(r.instant[order], starts, present, values[order], r.n_instants, r.n_pairs, by_subject,
                   subject_starts, subjects, r.n_subjects, _dense_cells(r, values))

    def slopes(self, weights: np.ndarray) -> np.ndarray:
        """(resamples x instants) weights -> (resamples x subjects) within-pair slopes; NaN
        where time does not vary within a subject's pairs. Where each pair is scored at most
        instants (``dense``) the pair sums are one matrix product of the weights and the cell
        sums; elsewhere each record's values times its instant's weight, summed per pair and
        then per subject, a few resamples at a time: the cost is resamples x records. (Dense
        instants x pairs blocks of a sparse panel cost resamples x instants x pairs: 171 s of a
        10,000-session, 500-candidate report.)"""
        out = np.full((len(weights), self.n_subjects), np.nan)
        step = max(1, MAX_CELLS // max(len(self.instant), 5 * self.n_pairs, 1))
        for first in range(0, len(weights), step):
            rows = slice(first, first + step)
            totals = np.zeros((5, len(weights[rows]), self.n_pairs))
            if self.dense is not None:
                totals[:] = np.moveaxis((weights[rows] @ self.dense).reshape(-1, 5, self.n_pairs), 1, 0)
            elif len(self.instant):
                weighted = weights[rows][:, self.instant]  # resamples x records
                for v in range(5):
                    totals[v][:, self.present] = np.add.reduceat(weighted * self.values[:, v], self.starts, axis=1)
            n, st, stt, sr, str_ = totals
            with np.errstate(invalid="ignore", divide="ignore"):
                sxx = self._per_subject(np.where(n > 0, stt - st * st / n, 0.0))
                sxy = self._per_subject(np.where(n > 0, str_ - st * sr / n, 0.0))
                out[rows] = np.where(sxx > 1e-12, sxy / sxx, np.nan)
        return out

    def _per_subject(self, per_pair: np.ndarray) -> np.ndarray:
        """(resamples x pairs) -> (resamples x subjects): the sums over each subject's pairs."""
        out = np.zeros((len(per_pair), self.n_subjects))
        if len(self.subjects):
            out[:, self.subjects] = np.add.reduceat(per_pair[:, self.by_subject], self.subject_starts, axis=1)
        return out


def _dense_cells(r: Records, values: np.ndarray) -> np.ndarray | None:
    """The instants x (5 x pairs) matrix of each (instant, pair) cell's sums of ``values``, or
    None when it would hold more than DENSE_PER_RECORD entries per record."""
    size = r.n_instants * r.n_pairs
    if not len(r.pair) or size > DENSE_PER_RECORD * len(r.pair):
        return None
    cell = r.instant * r.n_pairs + r.pair
    sums = [np.bincount(cell, weights=values[:, v], minlength=size).reshape(r.n_instants, r.n_pairs) for v in range(5)]
    return np.concatenate(sums, axis=1)


def _runs(sorted_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of equal codes starts, and its code."""
    if not len(sorted_codes):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    return starts, sorted_codes[starts]
