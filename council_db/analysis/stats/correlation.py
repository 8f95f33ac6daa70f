"""Length-score correlation: per-session indicators, the naive pooled r llm-council reports,
and the honest headline, the within-session correlation with a session-bootstrap interval.

Why not pool per-session correlations? With 4-5 answers per session, a per-session r is so
noisy that its Fisher z is biased away from zero (E[z] ~ atanh(rho) + rho / (2(n-1))) and
the textbook variance 1/(n-3) is only a large-n approximation; averaging 500 of them gives a
precise estimate of the wrong number, and a nominal 95% interval that misses the truth most
of the time (see benchmarks/bench_correlation.py). The within-session correlation instead
pools the centred sums of squares and cross-products of all sessions first, so there is one
correlation from all answers, with session-level shifts (a hard query scoring low, a query
that calls for long answers) removed; resampling whole sessions gives its interval.
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec
import numpy as np
from msgspec.structs import replace
from numpy.typing import ArrayLike

from council_db.analysis.stats.answers import AnswerTable
from council_db.analysis.stats.bootstrap import RngLike, percentile_interval, resampled_sums
from council_db.analysis.stats.estimate import Estimate
from council_db.analysis.stats.inference import normal_p_value, normal_quantile, t_p_value, t_quantile

LLM_COUNCIL_MIN_RECORDS = 10  # pooled_correlation_with_ci returns None below this
WRITEUP_MIN_SESSIONS = 10  # run_aggregated_bias_audit's min_sessions in the write-up


class SessionMoments(msgspec.Struct, frozen=True):
    """Per-session sufficient statistics of (x, y): point count and centred sums
    sxx = sum (x - mean_x)^2, syy likewise, sxy = sum (x - mean_x)(y - mean_y). Every
    correlation here is a function of these, so a caller can keep them per session (one
    row per session, e.g. at import time) and never touch records again."""

    n: np.ndarray  # (S,) int64
    sxx: np.ndarray  # (S,) float64
    syy: np.ndarray
    sxy: np.ndarray

    def __len__(self) -> int:
        return len(self.n)

    def subset(self, keep: np.ndarray) -> SessionMoments:
        return SessionMoments(self.n[keep], self.sxx[keep], self.syy[keep], self.sxy[keep])


def session_moments(session: ArrayLike, x: ArrayLike, y: ArrayLike, n_sessions: int | None = None) -> SessionMoments:
    """SessionMoments from points (session number 0..S-1, x, y); points with a non-finite x or
    y are left out. Two passes (means first, then centred sums) so large offsets such as
    log lengths around 7 do not cost precision."""
    s = np.asarray(session, dtype=np.int64)
    xv, yv = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(xv) & np.isfinite(yv)
    if not ok.all():
        s, xv, yv = s[ok], xv[ok], yv[ok]
    size = (int(s.max()) + 1 if len(s) else 0) if n_sessions is None else n_sessions
    n = np.bincount(s, minlength=size)
    safe = np.maximum(n, 1)
    dx = xv - (np.bincount(s, weights=xv, minlength=size) / safe)[s]
    dy = yv - (np.bincount(s, weights=yv, minlength=size) / safe)[s]
    return SessionMoments(
        n=n.astype(np.int64),
        sxx=np.bincount(s, weights=dx * dx, minlength=size),
        syy=np.bincount(s, weights=dy * dy, minlength=size),
        sxy=np.bincount(s, weights=dx * dy, minlength=size),
    )


def per_session_r(moments: SessionMoments) -> np.ndarray:
    """Pearson r per session: NaN with fewer than 3 points (r is then +-1 or undefined,
    never evidence) or no variation in x or y."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = moments.sxy / np.sqrt(moments.sxx * moments.syy)
    ok = (moments.n >= 3) & (moments.sxx > 0) & (moments.syy > 0)
    return np.where(ok, np.clip(r, -1.0, 1.0), np.nan)


def per_session_correlations(answers: AnswerTable,
                             length: Literal["log", "raw"] = "log") -> tuple[np.ndarray, np.ndarray]:
    """(r_s, n_s): each session's Pearson r between answer length and mean score, and its
    answer count, indexed by session number. These are ADR-015's per-session indicators:
    with 4-5 points each they say little alone (see ``correlation_p_value``). ``length``
    picks log(chars + 1) (default, the unit the report uses) or raw chars (ADR-015 used raw
    word counts)."""
    x = answers.log_length if length == "log" else answers.length
    moments = session_moments(answers.session, x, answers.mean_score, answers.n_sessions)
    return per_session_r(moments), moments.n


def correlation_p_value(r: ArrayLike, n: ArrayLike) -> np.ndarray:
    """Two-sided p-value of a Pearson r from n points, under t with n-2 df:
    t = r * sqrt((n-2) / (1-r^2)). r = 0.8 at n = 5 gives p = 0.10 (the normal would say
    0.02). NaN where n < 3 or r is NaN; 0 where |r| = 1 with n >= 3. Vectorised."""
    r_arr = np.asarray(r, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    df = n_arr - 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        t = r_arr * np.sqrt(df / (1.0 - r_arr * r_arr))
    t = np.where(np.abs(r_arr) >= 1.0, np.inf, t)
    p = t_p_value(np.asarray(t), df)
    return np.asarray(np.where(n_arr >= 3, p, np.nan))


# --------------------------------------------------------------------------- naive pooled r


def pooled_r_over_records(length_chars: ArrayLike, score: ArrayLike, level: float = 0.95,
                          n_sessions: int | None = None) -> Estimate:
    """One Pearson r over all records, exactly as llm-council's
    ``bias_aggregation.pooled_correlation_with_ci`` computes it (the code, not the write-up):
    r between raw ``response_length_chars`` and ``score_value`` of every record; r = 0 when
    either has no variation; not computed below 10 records; Fisher z of r clamped to
    +-0.9999; SE 1/sqrt(N-3) with N = records; CI z -/+ 1.96 SE back-transformed. The p-value
    (llm-council reports none) is the normal test its CI implies.

    Why it is naive: it treats every record as independent, but one answer is scored by
    every reviewer and one session's answers share a query, so N overstates the information
    (16 rows of a 4x4 session are not 16 observations) and the CI is far too narrow; and
    session-level shifts (hard queries score low everywhere) and reviewer offsets leak into
    r, which is not the within-session link ADR-015 asks about.
    """
    x = np.asarray(length_chars, dtype=np.float64)
    y = np.asarray(score, dtype=np.float64)
    dx, dy = x - x.mean(), y - y.mean()
    return pooled_r_from_sums(PooledSums(len(x), float(dx @ dx), float(dy @ dy), float(dx @ dy)), level,
                              n_sessions)


class PooledSums(msgspec.Struct, frozen=True):
    """Record count and centred sums of squares and products of (length, score) over records:
    all the naive pooled r needs (a database can add them up from per-session sums)."""

    n: int
    sxx: float
    syy: float
    sxy: float

    @classmethod
    def from_raw(cls, n: int, sx: float, sy: float, sxx: float, syy: float, sxy: float) -> PooledSums:
        """From raw sums (sum x, sum x^2, ...), as SQL adds them up."""
        if n == 0:
            return cls(0, 0.0, 0.0, 0.0)
        return cls(n, max(sxx - sx * sx / n, 0.0), max(syy - sy * sy / n, 0.0), sxy - sx * sy / n)


def pooled_r_from_sums(sums: PooledSums, level: float = 0.95, n_sessions: int | None = None) -> Estimate:
    """llm-council's pooled r (see ``pooled_r_over_records``) from its sums."""
    n = sums.n
    method = "llm-council pooled r: all records as independent, Fisher z SE 1/sqrt(N-3)"
    if n < LLM_COUNCIL_MIN_RECORDS:
        return Estimate.missing(method, n_sessions, level)
    sx, sy = math.sqrt(sums.sxx), math.sqrt(sums.syy)
    r = 0.0 if sx == 0 or sy == 0 else min(max(sums.sxy / (sx * sy), -1.0), 1.0)
    z = math.atanh(min(max(r, -0.9999), 0.9999))
    se = 1.0 / math.sqrt(n - 3)
    crit = 1.96 if level == 0.95 else normal_quantile(level)
    return Estimate(r, math.tanh(z - crit * se), math.tanh(z + crit * se), se, normal_p_value(z / se),
                    level, n_sessions, method)


def mean_fisher_z_r(r_s: ArrayLike, level: float = 0.95, min_sessions: int = WRITEUP_MIN_SESSIONS) -> Estimate:
    """The pooled r of the ADR-018 write-up ("Detecting Evaluator Bias"): the mean of the
    per-session Fisher z over sessions with -1 < r < 1, SE 1/sqrt(k-3) with k sessions,
    CI mean -/+ 1.96 SE back-transformed; CI (-1, 1) when k <= 3; not computed below
    ``min_sessions`` (the write-up reports 0 there; we report NaN).

    Why it is naive: with 4-5 answers per session each z is biased away from zero and its
    spread is not what 1/sqrt(k-3) assumes, so the interval is narrow around the wrong
    value; at 500 sessions of 4 answers it rarely covers the truth when rho != 0.
    """
    r = np.asarray(r_s, dtype=np.float64)
    r = r[np.isfinite(r) & (np.abs(r) < 1.0)]
    k = len(r)
    method = "mean of per-session Fisher z, SE 1/sqrt(k-3) (ADR-018 write-up)"
    if k < max(min_sessions, 1):
        return Estimate.missing(method, k, level)
    z = float(np.arctanh(r).mean())
    if k <= 3:
        return Estimate(math.tanh(z), -1.0, 1.0, None, None, level, k, method)
    se = 1.0 / math.sqrt(k - 3)
    crit = 1.96 if level == 0.95 else normal_quantile(level)
    return Estimate(math.tanh(z), math.tanh(z - crit * se), math.tanh(z + crit * se), se,
                    normal_p_value(z / se), level, k, method)


# --------------------------------------------------------------------------- the headline


class WithinSums(msgspec.Struct, frozen=True):
    """Sums over sessions (those with >= 2 points) of the per-session moments and of their
    products: the within-session r and its cluster-robust SE need nothing else, so a
    database can compute them in one pass over per-session rows."""

    g: int
    sxy: float
    sxx: float
    syy: float
    sxy_sxy: float
    sxx_sxx: float
    syy_syy: float
    sxx_syy: float
    sxy_sxx: float
    sxy_syy: float

    @classmethod
    def of(cls, moments: SessionMoments) -> WithinSums:
        m = moments.subset(moments.n >= 2)
        return cls(len(m), float(m.sxy.sum()), float(m.sxx.sum()), float(m.syy.sum()), float(m.sxy @ m.sxy),
                   float(m.sxx @ m.sxx), float(m.syy @ m.syy), float(m.sxx @ m.syy), float(m.sxy @ m.sxx),
                   float(m.sxy @ m.syy))

    def influence_ss(self, r: float) -> float:
        """Sum over sessions of the squared influence psi_s = sxy_s/S - (r/2)(sxx_s/B + syy_s/C),
        S = sqrt(BC): the linearisation of r_w = A/S, expanded into the sums above."""
        b, c = self.sxx, self.syy
        scale = math.sqrt(b * c)
        return (self.sxy_sxy / (b * c)
                + 0.25 * r * r * (self.sxx_sxx / (b * b) + self.syy_syy / (c * c) + 2.0 * self.sxx_syy / (b * c))
                - r / scale * (self.sxy_sxx / b + self.sxy_syy / c))


ANALYTIC_CI = "Fisher-z CI"
WITHIN_METHOD = "within-session r; {ci}; SE and p: cluster-robust (delta method), t with G-1 df"


def within_session_correlation_from_sums(sums: WithinSums, level: float = 0.95) -> Estimate:
    """The within-session correlation r_w = sum_s sxy / sqrt(sum_s sxx * sum_s syy) with an
    analytic interval (Fisher z of r_w -/+ t quantile x the cluster-robust SE), O(1) given
    the sums; see ``within_session_correlation``."""
    g, a, b, c = sums.g, sums.sxy, sums.sxx, sums.syy
    method = WITHIN_METHOD.format(ci=ANALYTIC_CI)
    if g < 2 or b <= 0 or c <= 0:
        return Estimate.missing(method, g, level)
    r = min(max(a / math.sqrt(b * c), -1.0), 1.0)
    se = math.sqrt(g / (g - 1) * max(sums.influence_ss(r), 0.0))
    df = g - 1
    p = t_p_value(r / se, df) if se > 0 else (math.nan if r == 0 else 0.0)
    if abs(r) < 1.0:
        z, se_z, q = math.atanh(r), se / (1.0 - r * r), t_quantile(level, df)
        low, high = math.tanh(z - q * se_z), math.tanh(z + q * se_z)
    else:
        low = high = r
    return Estimate(r, low, high, se, p, level, g, method)


def within_session_correlation_from_moments(moments: SessionMoments, n_boot: int = 1000, rng: RngLike = None,
                                            level: float = 0.95) -> Estimate:
    """The within-session correlation from per-session moments; see
    ``within_session_correlation``. Sessions with fewer than 2 points carry no
    within-session information and are left out (``n_sessions`` counts the sessions used).
    With ``n_boot`` > 0 the interval resamples whole sessions instead of the analytic one."""
    estimate = within_session_correlation_from_sums(WithinSums.of(moments), level)
    if n_boot <= 0 or not estimate.has_interval:
        return estimate
    used = moments.subset(moments.n >= 2)
    sums = resampled_sums(np.column_stack([used.sxy, used.sxx, used.syy]), n_boot, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        r_star = sums[:, 0] / np.sqrt(sums[:, 1] * sums[:, 2])
    low, high = percentile_interval(r_star, level, len(used))
    ci = f"session bootstrap expanded-percentile CI, {n_boot} resamples"
    return replace(estimate, ci_low=low, ci_high=high, method=WITHIN_METHOD.format(ci=ci))


def within_session_correlation(session: ArrayLike, x: ArrayLike, y: ArrayLike, n_boot: int = 1000,
                               rng: RngLike = None, level: float = 0.95) -> Estimate:
    """The headline length-score correlation: x and y demeaned within each session, then one
    correlation over all sessions' points, r_w = sum(x~ y~) / sqrt(sum x~^2 * sum y~^2).

    It answers ADR-015's question (do longer answers to the same query score higher?)
    without per-session noise: session-level shifts cancel, and no per-session r is ever
    formed. Its CI resamples whole sessions (``n_boot`` resamples, expanded percentile interval),
    cheap because each resample is a weighted sum of per-session sufficient statistics; it
    keeps nominal coverage with 4-5 points per session (benchmarks/bench_correlation.py).
    ``n_boot=0`` gives an analytic interval instead (Fisher z of r_w -/+ t quantile x the
    cluster-robust SE), O(sessions), for very large data. ``se`` and ``p_value`` (H0: no
    correlation) always come from the cluster-robust delta-method SE with G-1 df, so
    p-values are continuous for the false-discovery-rate control.

    When sessions differ in spread, r_w weights each session by its spread (it is the
    correlation of the pooled within-session deviations).
    """
    return within_session_correlation_from_moments(session_moments(session, x, y), n_boot, rng, level)
