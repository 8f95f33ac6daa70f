"""A reviewer whose severity drifts: the report says so beside its window-average severity and
gives its severity at the window's end, with a 95% CI, n and the time it refers to."""

from __future__ import annotations

import numpy as np

from council_db.analysis.drift import recent_severity, trends
from council_db.analysis.drift.session_means import session_series
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records
from council_db.report import render, render_html
from council_db.report.builder import build
from council_db.report.model import to_builtins
from tests.conftest import simulated

DRIFTER = "google/gemini-1.5-pro"
# The simulator's drift is linear in time and centred on the window: +1 point over the window,
# 0 on average. The session effects take the reviewers' average drift (a quarter of it, four
# reviewers), so against the average reviewer the drifter moves 3/4 point over the window and
# stands at 3/4 x 1/2 above its window average at the end; each other reviewer at -1/4 x 1/2.
AT_END = {DRIFTER: 0.75 * 0.5}
OTHERS_AT_END = -0.25 * 0.5


def test_a_drifting_reviewers_line_says_so_and_gives_its_severity_at_the_windows_end():
    records, _ = simulated(sessions=300, days=90, seed=43_001, drift={DRIFTER: 1.0})
    report = build(from_records(records), resamples=20)
    profiles = {r.reviewer_id: r for r in report.reviewers}
    drifter = profiles[DRIFTER]
    assert f"reviewer {DRIFTER}" in {f.subject for f in report.flags if f.kind == "trend"}
    assert drifter.severity_drifts and drifter.recent_severity_at == report.window.end
    recent = drifter.recent_severity
    assert recent.ci_low <= AT_END[DRIFTER] <= recent.ci_high
    assert recent.ci_low > drifter.severity.estimate  # the window average understates it now
    assert (recent.n_sessions, recent.n_records) == (300, drifter.records)
    assert not any(r.severity_drifts or r.recent_severity for name, r in profiles.items() if name != DRIFTER)

    text = render.text(report)
    row = text.splitlines()[next(i for i, line in enumerate(text.splitlines()) if line.strip().startswith(DRIFTER))
                            + 1]
    assert "severity drifts" in row and "window average" in row and report.window.end in row
    assert f"{recent.estimate:+.2f} [{recent.ci_low:+.2f}, {recent.ci_high:+.2f}]" in row and "300 sessions" in row
    assert "window average; drifts:" in render.markdown(report)
    page = render_html.html(report, session_series(from_records(records)))
    assert f"{DRIFTER}&#x27;s severity drifts (trend flagged)" in page
    body = to_builtins(report)
    dumped = next(r for r in body["reviewers"] if r["reviewer_id"] == DRIFTER)
    assert dumped["severity_drifts"] is True and dumped["recent_severity"]["n_sessions"] == 300


def test_stationary_reviewers_have_no_drift_note():
    records, _ = simulated(sessions=300, days=90, seed=43_002)
    report = build(from_records(records), resamples=20)
    assert not any(r.severity_drifts or r.recent_severity for r in report.reviewers)
    assert "severity drifts" not in render.text(report)


def test_the_severity_at_the_windows_end_covers_the_planted_one():
    covered, estimates = [], []
    for seed in range(40):
        records, _ = simulated(sessions=120, days=90, seed=44_000 + seed, drift={DRIFTER: 1.0})
        data = from_records(records)
        fit = joint_model.fit(data)
        found = recent_severity.at_window_end(trends.timed_residuals(data, fit.residuals, "reviewer"), fit.severity)
        for name, recent in found.items():
            truth = AT_END.get(name, OTHERS_AT_END)
            covered.append(recent.ci_low <= truth <= recent.ci_high)
            if name == DRIFTER:
                estimates.append(recent.estimate)
    assert len(covered) == 160
    assert np.mean(covered) >= 0.9
    assert abs(np.mean(estimates) - AT_END[DRIFTER]) <= 0.05
