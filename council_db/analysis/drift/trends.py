"""Drift over time, on residuals of the joint model: raw scores drift whenever the mix of
candidates or questions changes; residuals have the session, the candidate, the slot and the
length taken out, so what is left of a time trend belongs to the reviewer (or candidate).

Slope: per subject, least squares of its residuals on the session time (in units of 30 days)
within each of its (reviewer, candidate) pairs (``slope_fits``: a panel that changes over
the window cannot make a slope), then the contrast "this subject's slope minus the typical
other subject's": the precision-weighted mean slope of the anchors, the subjects left once
those clearly apart are purified away (``subjects.anchors``), less the subject itself, within
its session group (``subjects.session_groups``: residuals are net of the effects of the
sessions a subject shares with others; a subject that shares none with another of its kind
gets no slope). A drift shared by all cannot be told from a change in the questions, so only
the contrast is estimable. The median of the others, used before, is an order statistic:
once one subject drifts it is the larger (or smaller) of the remaining noisy slopes, which
biased every other subject's contrast (-0.05 points per 30 days at 40 sessions) and no fixed
weight describes its variance. With the anchors fixed, the contrast is a fixed linear
combination of the slopes, and its variance comes from their joint clustered covariance
(shared sessions included); the anchors' choice itself varies with the data, and its share
of the variance is measured by resampling instants (``_choice_variance``) and added.

Time is distinct instants, not sessions: judge runs stamp a whole batch with one time, and
sessions sharing a timestamp carry no order (file order is not time). Clusters are therefore
instants (a batch shares whatever its moment shared), each instant's score is corrected for
its leverage (CR2), and a subject needs scores at ``MIN_TIMES`` distinct times: two times give
a difference between two batches, which cannot be told from the batches asking different
things. Leverage decides the rest (``effective_instants``): t has the instants' worth of
information the contrast rests on as its degrees of freedom (Satterthwaite), at most
instants - 2 (the line takes two), and a contrast whose one instant carries more than
``MAX_INSTANT_SHARE`` of its information is shown but not tested. Thirteen sessions within
eight minutes and one two days later made a "drift" of +1.08 points on a 0-1 scale at
q 0.006: a slope through one isolated instant, whose CR2 score (residual near 0, leverage
near 1) was the whole variance estimate.

Units: slopes are rates per 30 days, stated per ``unit_us``: 30 days, or the window's span
when shorter (a window of minutes, one judge run, would make "per 30 days" an extrapolation
far beyond the data; ``Slope.over`` gives the change across a span). A subject's own data can
span far less than the window (a 23-minute grading run imported beside months of other
judgments): ``Slope.span_us`` is the longest span of its pairs, the slope being fitted within
pairs, and a subject observed over less than 1 / ``MAX_EXTRAPOLATION`` of the unit is stated
across its own span instead (``observed_over``). Such a subject is an anchor only in a group
where fewer than two subjects are observed over the unit (a judge run alone in its sessions):
its slope per unit is mostly noise (precision grows with the span squared), and although its
precision weight is tiny, the anchors' choice ranks subjects by their distance from a median,
which such slopes of +-1,000 points swayed (three judges joining a 90-day council for 23
minutes left the others' CIs a median 6 points per 30 days wide, against 0.13). Its own
contrast is still tested: a rate is estimable over any span, only stating it per month is not.
"""

from __future__ import annotations

import math
from functools import cached_property

import msgspec
import numpy as np
from msgspec.structs import replace

from council_db.analysis.drift.slope_fits import Cells, Records, line_fits
from council_db.analysis.drift.subjects import (
    Kind,
    anchors_of_rows,
    codes_and_names,
    reference_contrast,
    session_groups,
)
from council_db.analysis.joint.joint_model import DENSE_COLUMNS
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.bootstrap import session_weights
from council_db.analysis.stats.unique_rows import distinct

DAY_US = 86_400 * 1_000_000
PER_30_DAYS_US = 30 * DAY_US
MIN_TIMES = 3
# A slope whose one instant carries more than this share of its information is not tested:
# it is then the difference between that instant's batch and the rest, not a trend.
MAX_INSTANT_SHARE = 0.5
MAX_EXTRAPOLATION = 2.0  # a slope is stated per unit only when its subject's data spans half the unit or more
RESAMPLES = 200  # resamples of instants for the variance of the anchor choice
MAX_WEIGHTS = 2_000_000  # bounds memory: a batch of resamples holds at most this many instant weights
_CHUNK = 256  # subjects whose per-instant variances one matrix product gives (one product per subject was
# quadratic in the panel; a product for all of them holds instants x subjects numbers)


class Slope(msgspec.Struct, frozen=True):
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
    span_us: int  # the longest first-to-last time of its pairs: what its slope was observed over
    df: float = math.inf  # of its t: instants - 2, or the instants' worth it rests on when fewer
    heaviest_instant: float = 0.0  # the share of its information its heaviest instant carries

    @property
    def one_instant(self) -> bool:
        """Whether one instant carries too much of its time variation to test it as a trend."""
        return self.heaviest_instant > MAX_INSTANT_SHARE

    def one_instant_note(self) -> str:
        """Why it is then not tested."""
        return (f"the trend of {self.kind} {self.subject} is not tested: one instant carries "
                f"{self.heaviest_instant:.0%} of its time information (a line through one isolated batch is the "
                "difference between that batch and the rest, not a trend)")

    def over(self, span_us: int) -> Slope:
        """The same line as the change across ``span_us`` (score points), the unit to read when
        the window spans far less than 30 days: minutes of data say nothing about a month."""
        factor = span_us / PER_30_DAYS_US
        return replace(self, estimate=self.estimate * factor, se=self.se * factor,
                       ci_low=self.ci_low * factor, ci_high=self.ci_high * factor)

    def short_span(self, window_span_us: int) -> bool:
        """Whether its subject's own data spans under half the unit of a window spanning
        ``window_span_us``, so that it is stated across its own span instead."""
        return not observed_over(self.span_us, unit_us(window_span_us))


class TimedResiduals(msgspec.Struct, dict=True):  # dict: the cached properties
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


def unit_us(window_span_us: int) -> int:
    """The span every slope is stated per: 30 days, or the window's span when shorter."""
    return min(PER_30_DAYS_US, window_span_us)


def observed_over(span_us: int, unit: int) -> bool:
    """Whether data spanning ``span_us`` may be stated per ``unit`` (at most a twofold
    extrapolation); otherwise it is stated across its own span."""
    return span_us * MAX_EXTRAPOLATION >= unit


def timed_residuals(data: ScoreData, residuals: np.ndarray, kind: Kind) -> TimedResiduals:
    codes, names = codes_and_names(data, kind)
    partner, _ = codes_and_names(data, "model" if kind == "reviewer" else "reviewer")
    ts = data.session_ts_us[data.session] if data.n_records else np.zeros(0, dtype=np.int64)
    use = np.isfinite(residuals) & (ts >= 0)
    _, session = np.unique(data.session[use], return_inverse=True)
    return TimedResiduals(codes[use], names, session.astype(np.int64), ts[use], residuals[use], kind,
                          np.asarray(partner)[use].astype(np.int64))


def wide_panel_floor(timed: TimedResiduals) -> np.ndarray | bool:
    """Past the joint model's dense limit (a wide panel: absorbed_fit), only subjects with
    absorbed_fit.MIN_SESSIONS sessions get a trend or a change search, as only they get a
    severity there: the slopes' covariance is subjects x subjects (20 GB at 50,000 reviewers)
    and every permutation's statistic spans the subjects searched. True: every subject."""
    if len(timed.names) <= DENSE_COLUMNS or not len(timed.session):
        return True
    from council_db.analysis.joint import absorbed_fit  # a wide panel's alone: its fit's modules load with it
    sessions = absorbed_fit.sessions_per_level(timed.subject.astype(np.int64), timed.session, len(timed.names))
    return sessions >= absorbed_fit.MIN_SESSIONS


def at_floor(timed: TimedResiduals) -> TimedResiduals:
    """The records of the subjects ``wide_panel_floor`` keeps (all of them up to the limit)."""
    keep = wide_panel_floor(timed)
    if keep is True:
        return timed
    mine = keep[timed.subject]
    _, session = np.unique(timed.session[mine], return_inverse=True)
    return TimedResiduals(timed.subject[mine], timed.names, session.astype(np.int64), timed.ts_us[mine],
                          timed.residual[mine], timed.kind, None if timed.partner is None else timed.partner[mine])


def floor_note(timed: TimedResiduals) -> str | None:
    """What ``at_floor`` leaves out of a wide panel's trends, change searches and rolling series
    (None: nothing, as up to the dense limit)."""
    keep = wide_panel_floor(timed)
    if keep is True:
        return None
    from council_db.analysis.joint.absorbed_fit import MIN_SESSIONS

    seen = np.zeros(len(timed.names), dtype=bool)
    seen[timed.subject] = True
    under = int((seen & ~keep).sum())
    return (f"wide panel: {under:,} of {int(seen.sum()):,} {timed.kind}s have fewer than {MIN_SESSIONS} sessions and "
            "no trend, change search or rolling series (as they have no severity)") if under else None


def slopes(timed: TimedResiduals, rng: np.random.Generator | None = None) -> list[Slope]:
    """Every subject's slope contrast; empty when fewer than two subjects have scores at
    MIN_TIMES distinct times. ``rng`` draws the resamples of instants that measure how much
    the choice of the typical subjects varies (a fixed seed when None)."""
    from council_db.analysis.stats.inference import t_intervals, t_p_value

    timed = at_floor(timed)
    if timed.n_instants < MIN_TIMES:
        return []
    records = timed.fit_records()
    fit = line_fits(records, MIN_TIMES)
    groups = session_groups(records.session, records.subject, records.n_subjects)
    identified = np.flatnonzero(fit.ok)
    identified = identified[np.bincount(groups[identified])[groups[identified]] >= 2]  # someone to be told against
    if len(identified) < 2:
        return []
    beta, precision = fit.beta[identified], fit.precision[identified]
    cov = fit.cov[np.ix_(identified, identified)]
    df = timed.n_instants - 2
    spans = _spans_us(timed.ts_us, records)[identified]
    unit = unit_us(timed.span_us)
    typical = Typical(groups[identified], np.array([observed_over(int(span), unit) for span in spans]), precision)
    contrasts = typical.contrasts(typical.anchors(beta, cov, df))
    choice = _choice_variance(Cells.of(records), identified, typical, contrasts, cov, df,
                              rng if rng is not None else np.random.default_rng(0))
    estimates = contrasts @ beta
    clustered = np.maximum(np.einsum("ij,ij->i", contrasts @ cov, contrasts), 0.0)
    ses = np.sqrt(clustered + choice)
    spread = fit.spread[:, identified]
    dfs, heaviest = np.zeros(len(identified)), np.zeros(len(identified))
    for i in range(len(identified)):
        if i % _CHUNK == 0:  # each subject's variance per instant, for _CHUNK subjects in one product
            parts = spread @ (contrasts[i:i + _CHUNK] ** 2 / precision).T
        effective, heaviest[i] = effective_instants(parts[:, i % _CHUNK])
        dfs[i] = min(float(df), welch_satterthwaite(effective, float(clustered[i]), float(choice[i])))
    lows, highs = t_intervals(estimates, ses, dfs)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_values = np.where(ses > 0, t_p_value(estimates / np.where(ses > 0, ses, 1.0), dfs), math.nan)
    out = []
    for i, j in enumerate(identified.tolist()):
        slope = Slope(timed.names[j], timed.kind, float(estimates[i]), float(ses[i]), float(lows[i]), float(highs[i]),
                      float(p_values[i]), int(fit.sessions[j]), int(fit.records[j]), int(spans[i]), float(dfs[i]),
                      float(heaviest[i]))
        out.append(replace(slope, p_value=math.nan) if slope.one_instant else slope)  # shown, not tested
    return out


def welch_satterthwaite(instants: float, clustered: float, choice: float) -> float:
    """Degrees of freedom of the contrast's variance, the clustered part plus the anchor
    choice's, each a sum over the same ``instants`` worth of instants: (a + b)^2 / (a^2 + b^2)
    times that (Welch-Satterthwaite for a sum of two variance estimates). The choice's part,
    where it is large, steadies the sum: with t on the clustered part's df alone, evenly
    spread batches were tested at half their size (0.5% of null slopes at p < 0.01)."""
    total = clustered + choice
    if total <= 0:
        return instants
    return instants * total ** 2 / (clustered ** 2 + choice ** 2)


def effective_instants(variance: np.ndarray) -> tuple[float, float]:
    """From each instant's part of a slope's variance (under independent errors): how many
    instants' worth of information the slope rests on, (sum v)^2 / sum v^2, and the heaviest
    instant's share. The first is the Satterthwaite degrees of freedom of its clustered
    variance, a sum of one squared score per instant (Bell & McCaffrey 2002; Imbens & Kolesar
    2016): 13 instants within minutes and one two days later are 1.2 instants' worth, and
    the one far instant's score is the whole variance estimate."""
    total = float(variance.sum())
    if total <= 0:
        return 0.0, 1.0
    return total ** 2 / float(variance @ variance), float(variance.max()) / total


def alone(timed: TimedResiduals) -> list[str]:
    """The subjects that share no session with another subject of their kind: no trend is
    given for them (their drift cannot be told from a change in the questions)."""
    groups = session_groups(timed.session, timed.subject, len(timed.names))
    present = distinct(timed.subject)
    lone = present[np.bincount(groups[present], minlength=len(timed.names))[groups[present]] == 1]
    return [f"{timed.kind} {timed.names[code]} shares no session with another {timed.kind}: its drift cannot be told "
            f"from a change in the questions, so no trend is given for it" for code in lone.tolist()]


def _spans_us(ts_us: np.ndarray, records: Records) -> np.ndarray:
    """Per subject: the longest first-to-last time of any of its pairs. A slope is fitted
    within pairs, so no line of the subject was observed over longer, however far apart its
    pairs lie."""
    first = np.full(records.n_pairs, np.iinfo(np.int64).max)
    last = np.full(records.n_pairs, np.iinfo(np.int64).min)
    np.minimum.at(first, records.pair, ts_us)
    np.maximum.at(last, records.pair, ts_us)
    spans = np.zeros(records.n_subjects, dtype=np.int64)
    np.maximum.at(spans, records.subject_of_pair(), last - first)
    return spans


class Typical(msgspec.Struct, frozen=True):
    """Who each subject's slope is told against: the anchors of its own session group, chosen
    among the group's subjects observed over the unit (all of the group's when fewer than two
    are: within a group, spans are then alike)."""

    groups: np.ndarray  # per subject: its session group (every group holds two or more)
    observed: np.ndarray  # per subject: its data spans half the unit or more
    precision: np.ndarray

    def anchors(self, beta: np.ndarray, cov: np.ndarray, df: float) -> np.ndarray:
        """Every group's anchors, as one mask over the subjects."""
        return self.anchors_of_rows(beta[None, :], cov, df)[0]

    def anchors_of_rows(self, betas: np.ndarray, cov: np.ndarray, df: float) -> np.ndarray:
        """``anchors`` for each row of ``betas`` (resampled slopes), one mask per row."""
        chosen = np.zeros(betas.shape, dtype=bool)
        for group in distinct(self.groups):
            among = np.flatnonzero(self.groups == group)
            if self.observed[among].sum() >= 2:
                among = among[self.observed[among]]
            chosen[:, among] = anchors_of_rows(betas[:, among], cov[np.ix_(among, among)], self.precision[among], df)
        return chosen

    def contrasts(self, chosen: np.ndarray) -> np.ndarray:
        """Row i: the weights giving subject i's slope less the mean of its group's anchors."""
        return np.array([reference_contrast(i, chosen & (self.groups == self.groups[i]), self.precision)
                         for i in range(len(chosen))])


def _choice_variance(cells: Cells, identified: np.ndarray, typical: Typical, fixed: np.ndarray,
                     cov: np.ndarray, df: float, rng: np.random.Generator) -> np.ndarray:
    """Per subject: the variance that choosing the typical subjects adds to its contrast, which
    the clustered covariance (anchors fixed) leaves out. Instants are resampled; in each
    resample the slopes are refitted and the anchors chosen again; the variance of those
    contrasts less that of the contrasts with today's anchors kept is the choice's share (0
    when the choice is clear). Without it a drift about 3 SEs in size, which the data cannot
    always tell from noise, left the intervals at 92% coverage."""
    resampled = [cells.slopes(weights)[:, identified]
                 for weights in session_weights(cells.n_instants, RESAMPLES, rng, max_cells=MAX_WEIGHTS)]
    betas = np.concatenate(resampled) if resampled else np.zeros((0, len(identified)))
    betas = betas[np.isfinite(betas).all(axis=1)]
    if len(betas) < 2:
        return np.zeros(len(identified))
    choices, which = np.unique(typical.anchors_of_rows(betas, cov, df), axis=0, return_inverse=True)
    rechosen = np.empty_like(betas)
    for choice, chosen in enumerate(choices):  # most resamples choose one of a few anchor sets
        rows = which.reshape(-1) == choice
        rechosen[rows] = betas[rows] @ typical.contrasts(chosen).T
    return np.maximum(np.var(rechosen, axis=0) - np.var(betas @ fixed.T, axis=0), 0.0)
