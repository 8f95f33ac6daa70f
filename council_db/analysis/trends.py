"""Drift over time, on residuals of the joint model: raw scores drift whenever the mix of
candidates or questions changes; residuals have the session, the candidate, the slot and the
length taken out, so what is left of a time trend belongs to the reviewer (or candidate).

Slope: per subject, least squares of its residuals on the session time (in units of 30 days),
then the contrast "this subject's slope minus the median slope of the other subjects" (see
``subjects``). The standard error is cluster-robust by session, computed jointly for all
subjects so the contrast's variance includes the covariance the shared sessions induce; the
median's choice of subject is treated as fixed, which overstates its variance (the median of
others varies less than one subject), so the interval errs on the wide side.

Time is distinct instants, not sessions: judge runs stamp a whole batch with one time, and
sessions sharing a timestamp carry no order (file order is not time). Clusters are therefore
instants (a batch shares whatever its moment shared), each instant's score is corrected for
its leverage (CR2), t has (instants - 2) df (the line takes two), and a subject
needs scores at ``MIN_TIMES`` distinct times: two times give a difference between two batches,
which cannot be told from the batches asking different things.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis.score_data import ScoreData
from council_db.analysis.subjects import Kind, codes_and_names, median_weights

DAY_US = 86_400 * 1_000_000
PER_30_DAYS_US = 30 * DAY_US
MIN_TIMES = 3


@dataclass(frozen=True)
class Slope:
    """Score points per 30 days relative to the median of the other subjects."""

    subject: str
    kind: Kind
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    n_sessions: int
    n_records: int


@dataclass
class TimedResiduals:
    """The residuals a time analysis uses: finite, in dated sessions, in time order."""

    subject: np.ndarray  # subject code per record
    names: list[str]
    session: np.ndarray  # 0..G-1 over the dated sessions used, time order
    ts_us: np.ndarray  # per record: its session's time
    residual: np.ndarray
    kind: Kind

    @property
    def n_sessions(self) -> int:
        return int(self.session.max()) + 1 if len(self.session) else 0

    @property
    def session_instant(self) -> np.ndarray:
        """Per session: the rank of its time among the distinct times (tied sessions share one)."""
        times = np.zeros(self.n_sessions, dtype=np.int64)
        times[self.session] = self.ts_us
        return np.unique(times, return_inverse=True)[1].reshape(-1).astype(np.int64)

    @property
    def n_instants(self) -> int:
        return len(np.unique(self.ts_us))


def timed_residuals(data: ScoreData, residuals: np.ndarray, kind: Kind) -> TimedResiduals:
    codes, names = codes_and_names(data, kind)
    ts = data.session_ts_us[data.session] if data.n_records else np.zeros(0, dtype=np.int64)
    use = np.isfinite(residuals) & (ts >= 0)
    _, session = np.unique(data.session[use], return_inverse=True)
    return TimedResiduals(codes[use], names, session.astype(np.int64), ts[use], residuals[use], kind)


def slopes(timed: TimedResiduals) -> list[Slope]:
    """Every subject's slope contrast; empty when fewer than two subjects have scores at
    MIN_TIMES distinct times."""
    from council_db.analysis.stats import t_interval, t_p_value

    n_subjects, n_times = len(timed.names), timed.n_instants
    if n_times < MIN_TIMES:
        return []
    instant = timed.session_instant[timed.session]
    t = timed.ts_us / PER_30_DAYS_US
    s = timed.subject
    counts = np.bincount(s, minlength=n_subjects).astype(float)
    safe = np.maximum(counts, 1.0)
    t_mean = np.bincount(s, weights=t, minlength=n_subjects) / safe
    r_mean = np.bincount(s, weights=timed.residual, minlength=n_subjects) / safe
    dt = t - t_mean[s]
    sxx = np.bincount(s, weights=dt * dt, minlength=n_subjects)
    sxy = np.bincount(s, weights=dt * (timed.residual - r_mean[s]), minlength=n_subjects)
    sessions_per = np.bincount(np.unique(s * timed.n_sessions + timed.session) // timed.n_sessions,
                               minlength=n_subjects)
    times_per = np.bincount(np.unique(s * n_times + instant) // n_times, minlength=n_subjects)
    ok = (sxx > 1e-12 * np.maximum(counts, 1)) & (times_per >= MIN_TIMES)
    beta = np.where(ok, sxy / np.where(ok, sxx, 1.0), np.nan)
    fitted_resid = timed.residual - r_mean[s] - np.nan_to_num(beta)[s] * dt
    influence = np.where(ok[s], dt * fitted_resid / np.where(ok, sxx, 1.0)[s], 0.0)
    cell = instant * n_subjects + s
    influence *= _small_sample_factor(cell, counts[s], dt * dt / np.where(ok, sxx, 1.0)[s])
    u = np.bincount(cell, weights=influence, minlength=n_times * n_subjects).reshape(n_times, n_subjects)
    cov = u.T @ u
    identified = np.flatnonzero(ok)
    if len(identified) < 2:
        return []
    out = []
    for j in identified.tolist():
        contrast = np.zeros(n_subjects)
        contrast[identified] = -median_weights(beta[identified], int(np.flatnonzero(identified == j)[0]))
        contrast[j] += 1.0
        estimate = float(contrast @ np.nan_to_num(beta))
        se = math.sqrt(max(float(contrast @ cov @ contrast), 0.0))
        low, high = t_interval(estimate, se, n_times - 2)
        p = t_p_value(estimate / se, n_times - 2) if se > 0 else math.nan
        out.append(Slope(timed.names[j], timed.kind, estimate, se, low, high, float(p),
                         int(sessions_per[j]), int(counts[j])))
    return out


def _small_sample_factor(cell: np.ndarray, records: np.ndarray, dt2_over_sxx: np.ndarray) -> np.ndarray:
    """Per record: 1 / sqrt(1 - h) with h the leverage of its (instant, subject) cell in the
    subject's line fit (CR2, Bell & McCaffrey 2002). Time is constant within an instant, so
    h = cell records x (1 / subject records + dt^2 / Sxx). Few instants give the end ones a
    leverage near 1 and residuals near 0, and the plain clustered SE would then be far too
    small (a 22% false-flag rate at 3 instants, 12% at 4)."""
    per_cell = np.bincount(cell)[cell]
    leverage = per_cell * (1.0 / np.maximum(records, 1.0) + dt2_over_sxx)
    room = 1.0 - leverage
    return np.where(room > 1e-9, 1.0 / np.sqrt(np.maximum(room, 1e-9)), 0.0)
