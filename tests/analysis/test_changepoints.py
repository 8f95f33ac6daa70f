"""Change points are tested against a null that already holds a linear trend: a smooth drift
is a trend, not also a dated step; a real step is still found where it was planted; and
stationary data keeps its false-flag rate."""

from __future__ import annotations

from datetime import datetime, timedelta

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from tests.conftest import simulated

DRIFTER = "google/gemini-1.5-pro"
DAYS = 90
RESAMPLES = 20  # bootstrap CIs of length and agreement only; no part of the time tests


def report_of(seed: int, **config):
    records, truth = simulated(sessions=300, days=DAYS, seed=seed, **config)
    return build(from_records(records), resamples=RESAMPLES), truth


def flagged(report, kind: str) -> set[str]:
    return {f.subject for f in report.flags if f.kind == kind}


def test_a_linear_drift_is_flagged_as_a_trend_and_not_as_a_dated_step():
    trend = change = 0
    for seed in range(20):
        report, _ = report_of(40_000 + seed, drift={DRIFTER: 1.0})
        trend += f"reviewer {DRIFTER}" in flagged(report, "trend")
        change += f"reviewer {DRIFTER}" in flagged(report, "change_point")
    assert trend >= 19
    assert change <= 1  # before: 20 of 20


def test_a_step_drift_is_found_as_a_change_near_the_planted_date():
    found = []
    for seed in range(10):
        report, truth = report_of(41_000 + seed, drift={DRIFTER: 1.0}, drift_at=0.5)
        start, end = (datetime.fromisoformat(truth[k]) for k in ("start", "end"))
        trend = next(t for t in report.trends if t.kind == "reviewer" and t.subject == DRIFTER)
        if trend.change_points:
            at = datetime.fromisoformat(trend.change_points[0].at.replace("Z", "+00:00"))
            found.append((abs(at - (start + (end - start) / 2)), trend.change_points[0].shift))
    assert len(found) >= 9
    assert all(off <= timedelta(days=10) for off, _ in found)
    assert all(0.6 <= shift <= 1.4 for _, shift in found)  # the step beyond the trend, not diluted by it


def test_stationary_data_keeps_change_flags_rare():
    with_change = sum(bool(flagged(report_of(42_000 + seed)[0], "change_point")) for seed in range(20))
    assert with_change <= 1
