"""Session mean scores over time, for the HTML report's time chart: one point per dated
session, and the mean over equal stretches of time with a 95% CI that treats sessions (not
records) as the independent units. Raw scores: not adjusted for which reviewers and models
took part."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from council_db.analysis import stats
from council_db.analysis.loading.score_data import ScoreData
from council_db.analysis.stats.unique_rows import distinct

MAX_BINS = 30
SESSIONS_PER_BIN = 10


@dataclass(frozen=True)
class SessionMean:
    ts_us: int
    mean: float
    records: int


@dataclass(frozen=True)
class Stretch:
    """The mean score of the sessions in [start_us, end_us); CI None from fewer than two sessions."""

    start_us: int
    end_us: int
    sessions: int
    records: int
    mean: float
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class Series:
    sessions: list[SessionMean]
    stretches: list[Stretch]


def session_series(data: ScoreData) -> Series:
    """Dated sessions' mean scores, and their means over up to MAX_BINS equal stretches of time
    (about SESSIONS_PER_BIN sessions each)."""
    if data.n_records == 0:
        return Series([], [])
    counts = np.bincount(data.session, minlength=data.n_sessions)
    means = np.bincount(data.session, weights=data.score, minlength=data.n_sessions) / np.maximum(counts, 1)
    dated = np.flatnonzero((data.session_ts_us >= 0) & (counts > 0))
    points = [SessionMean(int(data.session_ts_us[s]), float(means[s]), int(counts[s])) for s in dated]
    if not points:
        return Series([], [])
    first, last = points[0].ts_us, points[-1].ts_us
    bins = min(MAX_BINS, max(1, len(points) // SESSIONS_PER_BIN)) if last > first else 1
    edges = np.linspace(first, last + 1, bins + 1).astype(np.int64)
    bin_of_session = np.full(data.n_sessions, -1)
    bin_of_session[dated] = np.clip(np.searchsorted(edges, data.session_ts_us[dated], side="right") - 1, 0, bins - 1)
    record_bin = bin_of_session[data.session]
    stretches = []
    for b in range(bins):
        here = record_bin == b
        if not here.any():
            continue
        estimate = stats.clustered_mean(data.score[here], data.session[here])
        stretches.append(Stretch(int(edges[b]), int(edges[b + 1]), len(distinct(data.session[here])), int(here.sum()),
                                 float(estimate.estimate), _finite(estimate.ci_low), _finite(estimate.ci_high)))
    return Series(points, stretches)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
