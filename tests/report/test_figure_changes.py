"""report/figure_changes: two windows' reports compared figure by figure. Nothing planted, few
figures change (the study, benchmarks/bench_diff.py: 2.0% of 200 sets); a figure only one
window gives is listed, not compared; each change is after minus before with a CI from both."""

from __future__ import annotations

import io
import json
import math

import pytest

from council_db.analysis.loading.score_data import from_records, keep_sessions
from council_db.report.builder import build
from council_db.report.figure_changes import compare_reports
from council_db.simulate import SimulationConfig, write_jsonl


def _halves(seed: int, sessions: int, **config):
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=sessions, seed=seed, **config), out)
    data = from_records([json.loads(line) for line in out.getvalue().splitlines()])
    times = data.session_ts_us
    middle = times.min() + (times.max() - times.min()) // 2
    return [build(keep_sessions(data, mask), seed=seed) for mask in (times < middle, times >= middle)]


def _half(metric) -> float:
    """Half a 95% CI's width: 1.96 SE."""
    return (metric.ci_high - metric.ci_low) / 2


def test_with_nothing_planted_at_most_one_of_six_sets_is_called_changed():
    """Six sets of 80 sessions: two or more false calls of six has probability 3% at a 5% rate."""
    calls = sum(any(c.changed() for c in compare_reports(*_halves(seed, 80))[0]) for seed in range(6))

    assert calls <= 1


def test_each_change_is_after_minus_before_with_both_windows_uncertainty():
    before, after = _halves(7, 80)
    changes, _ = compare_reports(before, after)

    change = next(c for c in changes if c.figure.startswith("severity "))
    assert change.difference == pytest.approx(change.after.estimate - change.before.estimate)
    assert change.ci_high - change.difference == pytest.approx(math.hypot(_half(change.before), _half(change.after)))
    assert change.ci_low < change.difference < change.ci_high
    assert change.before.n_sessions + change.after.n_sessions == 80


def test_a_reviewer_in_one_window_only_is_listed_not_compared():
    before, _ = _halves(8, 80)
    _, after = _halves(8, 80, reviewers=SimulationConfig().models[:3])

    changes, unmatched = compare_reports(before, after)

    gone = SimulationConfig().models[3]
    assert f"severity {gone}" in unmatched and not any(gone in c.figure and "severity" in c.figure for c in changes)
