"""Drift over time, on residuals of the joint model: raw scores drift whenever the mix of
candidates or questions changes; residuals have the session, the candidate, the slot and the
length taken out, so what is left of a time trend belongs to the reviewer (or candidate).

Slope: per subject, least squares of its residuals on the session time (in units of 30 days)
within each of its (reviewer, candidate) pairs (``slope_fits``: a panel that changes over
the window cannot make a slope), then the contrast "this subject's slope minus the typical
other subject's": the precision-weighted mean slope of the anchors, the subjects left once those clearly apart are
purified away (``subjects.anchors``), less the subject itself. A drift shared by all cannot be
told from a change in the questions, so only the contrast is estimable. The median of the
others, used before, is an order statistic: once one subject drifts it is the larger (or
smaller) of the remaining noisy slopes, which biased every other subject's contrast (-0.05
points per 30 days at 40 sessions) and no fixed weight describes its variance. With the
anchors fixed, the contrast is a fixed linear combination of the slopes, and its variance
comes from their joint clustered covariance (shared sessions included); the anchors' choice
itself varies with the data, and its share of the variance is measured by resampling
instants (``_choice_variance``) and added.

Time is distinct instants, not sessions: judge runs stamp a whole batch with one time, and
sessions sharing a timestamp carry no order (file order is not time). Clusters are therefore
instants (a batch shares whatever its moment shared), each instant's score is corrected for
its leverage (CR2), t has (instants - 2) df (the line takes two), and a subject
needs scores at ``MIN_TIMES`` distinct times: two times give a difference between two batches,
which cannot be told from the batches asking different things. A window of minutes (one
judge run) makes "per 30 days" an extrapolation far beyond the data: ``Slope.over`` gives the
change across the window's own span.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from council_db.analysis.score_data import ScoreData
from council_db.analysis.slope_fits import Cells, Records, line_fits
from council_db.analysis.stats.bootstrap import session_weights
from council_db.analysis.subjects import Kind, anchors, codes_and_names, reference_contrast

DAY_US = 86_400 * 1_000_000
PER_30_DAYS_US = 30 * DAY_US
MIN_TIMES = 3
RESAMPLES = 200  # resamples of instants for the variance of the anchor choice
MAX_WEIGHTS = 2_000_000  # bounds memory: a batch of resamples holds at most this many instant weights


@dataclass(frozen=True)
class Slope:
    """Score points per 30 days relative to the typical other subject (the anchors' mean)."""

    subject: str
    kind: Kind
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p_value: float
    n_sessions: int
    n_records: int

    def over(self, span_us: int) -> Slope:
        """The same line as the change across ``span_us`` (score points), the unit to read when
        the window spans far less than 30 days: minutes of data say nothing about a month."""
        factor = span_us / PER_30_DAYS_US
        return replace(self, estimate=self.estimate * factor, se=self.se * factor,
                       ci_low=self.ci_low * factor, ci_high=self.ci_high * factor)


@dataclass
class TimedResiduals:
    """The residuals a time analysis uses: finite, in dated sessions, in time order."""

    subject: np.ndarray  # subject code per record
    names: list[str]
    session: np.ndarray  # 0..G-1 over the dated sessions used, time order
    ts_us: np.ndarray  # per record: its session's time
    residual: np.ndarray
    kind: Kind
    partner: np.ndarray | None = None  # per record: the other side of its pair (candidate or reviewer)

    # Cached: the change-point search, slopes and recent severity each ask several times
    # (the arrays are never changed in place; ``replace`` makes a new object).
    @cached_property
    def n_sessions(self) -> int:
        return int(self.session.max()) + 1 if len(self.session) else 0

    @cached_property
    def session_instant(self) -> np.ndarray:
        """Per session: the rank of its time among the distinct times (tied sessions share one)."""
        times = np.zeros(self.n_sessions, dtype=np.int64)
        times[self.session] = self.ts_us
        return np.unique(times, return_inverse=True)[1].reshape(-1).astype(np.int64)

    @property
    def span_us(self) -> int:
        """From the first to the last session time."""
        return int(self.ts_us.max() - self.ts_us.min()) if len(self.ts_us) else 0

    @cached_property
    def n_instants(self) -> int:
        return int(self.session_instant.max()) + 1 if self.n_sessions else 0

    def fit_records(self) -> Records:
        """As codes for the line fits: pairs are (subject, partner), time in 30 days, centred."""
        partner = self.partner if self.partner is not None else np.zeros(len(self.subject), dtype=np.int64)
        _, pair = np.unique(self.subject * (int(partner.max(initial=0)) + 1) + partner, return_inverse=True)
        t = self.ts_us / PER_30_DAYS_US
        return Records(self.session_instant[self.session], self.session, self.subject, pair.reshape(-1),
                       t - t.mean() if len(t) else t, self.residual, self.n_instants, len(self.names))


def timed_residuals(data: ScoreData, residuals: np.ndarray, kind: Kind) -> TimedResiduals:
    codes, names = codes_and_names(data, kind)
    partner, _ = codes_and_names(data, "model" if kind == "reviewer" else "reviewer")
    ts = data.session_ts_us[data.session] if data.n_records else np.zeros(0, dtype=np.int64)
    use = np.isfinite(residuals) & (ts >= 0)
    _, session = np.unique(data.session[use], return_inverse=True)
    return TimedResiduals(codes[use], names, session.astype(np.int64), ts[use], residuals[use], kind,
                          np.asarray(partner)[use].astype(np.int64))


def slopes(timed: TimedResiduals, rng: np.random.Generator | None = None) -> list[Slope]:
    """Every subject's slope contrast; empty when fewer than two subjects have scores at
    MIN_TIMES distinct times. ``rng`` draws the resamples of instants that measure how much
    the choice of the typical subjects varies (a fixed seed when None)."""
    from council_db.analysis.stats import t_interval, t_p_value

    if timed.n_instants < MIN_TIMES:
        return []
    records = timed.fit_records()
    fit = line_fits(records, MIN_TIMES)
    identified = np.flatnonzero(fit.ok)
    if len(identified) < 2:
        return []
    beta, precision = fit.beta[identified], fit.precision[identified]
    cov = fit.cov[np.ix_(identified, identified)]
    df = timed.n_instants - 2
    typical = anchors(beta, cov, precision, df)
    choice = _choice_variance(Cells.of(records), identified, typical, cov, precision, df,
                              rng if rng is not None else np.random.default_rng(0))
    out = []
    for i, j in enumerate(identified.tolist()):
        contrast = reference_contrast(i, typical, precision)
        estimate = float(contrast @ beta)
        se = math.sqrt(max(float(contrast @ cov @ contrast), 0.0) + choice[i])
        low, high = t_interval(estimate, se, df)
        p = t_p_value(estimate / se, df) if se > 0 else math.nan
        out.append(Slope(timed.names[j], timed.kind, estimate, se, low, high, float(p),
                         int(fit.sessions[j]), int(fit.records[j])))
    return out


def _choice_variance(cells: Cells, identified: np.ndarray, typical: np.ndarray, cov: np.ndarray,
                     precision: np.ndarray, df: float, rng: np.random.Generator) -> np.ndarray:
    """Per subject: the variance that choosing the typical subjects adds to its contrast, which
    the clustered covariance (anchors fixed) leaves out. Instants are resampled; in each
    resample the slopes are refitted and the anchors chosen again; the variance of those
    contrasts less that of the contrasts with today's anchors kept is the choice's share (0
    when the choice is clear). Without it a drift about 3 SEs in size, which the data cannot
    always tell from noise, left the intervals at 92% coverage."""
    n_times = cells.n_instants
    fixed = np.array([reference_contrast(i, typical, precision) for i in range(len(identified))])
    contrasts: dict[bytes, np.ndarray] = {}  # per anchor set: most resamples choose one of a few
    rechosen, kept = [], []
    for weights in session_weights(n_times, RESAMPLES, rng, max_cells=MAX_WEIGHTS):
        beta = cells.slopes(weights)[:, identified]
        for b in beta[np.isfinite(beta).all(axis=1)]:
            chosen = anchors(b, cov, precision, df)
            key = chosen.tobytes()
            if key not in contrasts:
                contrasts[key] = np.array([reference_contrast(i, chosen, precision) for i in range(len(b))])
            rechosen.append(contrasts[key] @ b)
            kept.append(fixed @ b)
    if len(rechosen) < 2:
        return np.zeros(len(identified))
    return np.maximum(np.var(rechosen, axis=0) - np.var(kept, axis=0), 0.0)
