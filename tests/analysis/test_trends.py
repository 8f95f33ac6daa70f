"""Trends and change points on joint-model residuals: a planted drift is found with its sign
and about its size, the other reviewers are not flagged, and stationary data flags nothing."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pytest

from council_db.analysis.drift import trends
from council_db.analysis.drift.subjects import median_of_others
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.simulate.config import DEFAULT_MODELS
from tests.conftest import simulated

END = datetime(2026, 6, 1, tzinfo=timezone.utc)
TIME_KINDS = {"trend", "change_point"}


def simulated_report(**config):
    records, truth = simulated(end=END, **config)
    return build(from_records(records), resamples=100), truth


@pytest.mark.parametrize("reviewer, drift, seed", [("openai/gpt-4o", 1.0, 11),
                                                   ("google/gemini-1.5-pro", -1.2, 12)])
def test_a_drifting_reviewer_is_found_with_its_sign_and_size_and_nobody_else_drifts(reviewer, drift, seed):
    report, truth = simulated_report(sessions=300, seed=seed, drift={reviewer: drift})
    per_30_days = drift * 30 / truth_days(truth)
    trend = next(t for t in report.trends if t.kind == "reviewer" and t.subject == reviewer)
    assert np.sign(trend.slope_per_30d.estimate) == np.sign(drift)
    assert trend.slope_per_30d.ci_low <= per_30_days <= trend.slope_per_30d.ci_high
    flagged = {f.subject for f in report.flags if f.kind in TIME_KINDS}
    assert flagged and flagged <= {f"reviewer {reviewer}"}
    assert f"reviewer {reviewer}" in {f.subject for f in report.flags if f.kind == "trend"}


def truth_days(truth) -> float:
    return (datetime.fromisoformat(truth["end"]) - datetime.fromisoformat(truth["start"])).days


def test_a_step_change_is_found_near_where_it_was_planted_with_about_its_size():
    report, truth = simulated_report(sessions=300, seed=21, drift={"anthropic/claude-3-5-sonnet": 1.0}, drift_at=0.5)
    changed = [t for t in report.trends if t.change_points]
    assert [(t.kind, t.subject) for t in changed] == [("reviewer", "anthropic/claude-3-5-sonnet")]
    change = changed[0].change_points[0]
    halfway = datetime.fromisoformat(truth["start"]) + (END - datetime.fromisoformat(truth["start"])) / 2
    assert abs((datetime.fromisoformat(change.at.replace("Z", "+00:00")) - halfway).days) <= 14
    assert 0.6 <= change.shift <= 1.4
    assert change.q_value <= 0.05 and change.sessions_before + change.sessions_after == 300


@pytest.mark.parametrize("seed", [31, 32])
def test_stationary_data_raises_no_trend_change_or_anomaly_flag(seed):
    # The complete null, as in benchmarks/bench_alarms.py: with true flags in the family,
    # Benjamini-Hochberg lets a null test through more easily (it controls the false discovery rate).
    report, _ = simulated_report(sessions=300, seed=seed)
    assert not [f for f in report.flags if f.kind in TIME_KINDS | {"anomaly"}]
    assert len(report.trends) == 8 and all(not t.change_points for t in report.trends)


def reviewer_slopes(sessions: int, seed: int, drift: dict[str, float]) -> list:
    records, _ = simulated(sessions=sessions, seed=seed, days=90, end=END, drift=drift)
    data = from_records(records)
    return trends.slopes(trends.timed_residuals(data, joint_model.fit(data).residuals, "reviewer"))


def test_one_drifting_reviewer_does_not_bias_the_other_reviewers_slopes():
    # The median of the three others is, once one of them drifts, the larger (or smaller) of two
    # noisy slopes: it centred the non-drifting reviewers 0.05 points per 30 days off at 40 sessions.
    drifter, truth = "google/gemini-1.5-pro", 1.0 * 30 / 90
    errors, covered = {"drifter": [], "others": []}, []
    for seed in range(60):
        for s in reviewer_slopes(40, 3000 + seed, {drifter: 1.0}):
            planted = truth if s.subject == drifter else 0.0
            errors["drifter" if s.subject == drifter else "others"].append(s.estimate - planted)
            covered.append(s.ci_low <= planted <= s.ci_high)
    assert len(errors["others"]) == 180
    assert abs(np.mean(errors["others"])) < 0.02  # Monte-Carlo SE about 0.009
    assert abs(np.mean(errors["drifter"])) < 0.04
    assert np.mean(covered) >= 0.92


def test_median_of_others_is_each_subjects_median_of_the_rest():
    values = np.array([[3.0, 0.0, 0.1, -0.1], [1.0, 1.0, 5.0, 2.0]])
    expected = np.array([[0.0, 0.1, 0.0, 0.1], [2.0, 2.0, 1.0, 1.0]])
    assert np.allclose(median_of_others(values), expected)


@pytest.fixture
def two_versions(tmp_path, cli):
    """90 days under config 0.1.0, then 90 under 0.2.0 in which gpt-4o became 1 point more generous."""
    for name, version, end, offsets in (("old", "0.1.0", datetime(2026, 3, 1, tzinfo=timezone.utc), {}),
                                        ("new", "0.2.0", END, {"openai/gpt-4o": 1.0})):
        path = tmp_path / f"{name}.jsonl"
        with path.open("w") as out:
            write_jsonl(SimulationConfig(sessions=150, seed=len(name) + len(offsets), end=end,
                                         council_config_version=version, reviewer_offsets=offsets), out)
        assert cli("import", str(path)).exit_code == 0


def test_trends_prints_slopes_changes_and_the_rolling_series_in_every_format(cli, two_versions):
    result = cli("trends", "--format", "json", "--every", "30d")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    changed = {row["subject"] for row in body["trends"] if row["change_at"]}
    assert changed == {"openai/gpt-4o"}
    assert body["series"] and {"period_start", "mean_residual", "rolling_mean", "cusum"} <= set(body["series"][0])
    assert sum(row["change_point"] for row in body["series"]) == 1
    csv = cli("trends", "--format", "csv", "--by", "model").stdout.splitlines()
    assert csv[0] == "subject,period_start,sessions,records,mean_residual,rolling_mean,cusum,change_point"
    table = cli("trends", "--since", "2026-01-01")
    assert table.exit_code == 0 and "rolling series" in table.stdout and "adjusted severity by version" in table.stdout


def test_drift_by_config_version_shows_each_versions_severity_and_warns_that_the_window_mixes_them(cli, two_versions):
    result = cli("trends", "--format", "json")
    rows = {(r["reviewer"], r["version"]): r for r in json.loads(result.stdout)["drift_by_version"]
            if r["version_kind"] == "council_config_version"}
    assert len(rows) == 8
    def jump(reviewer: str) -> float:
        return rows[(reviewer, "0.2.0")]["severity"] - rows[(reviewer, "0.1.0")]["severity"]

    assert 0.75 - 0.3 <= jump("openai/gpt-4o") <= 0.75 + 0.3  # 1 point less its share of the average (1/4)
    assert all(-0.25 - 0.3 <= jump(r) <= -0.25 + 0.3 for r, _ in rows if r != "openai/gpt-4o")
    assert "mixes council_config_version values: 0.1.0 (150 sessions), 0.2.0 (150 sessions)" in result.stderr
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    assert any("mixes council_config_version" in w for w in report["warnings"])
    single = cli("trends", "--config-version", "0.2.0", "--format", "json")
    assert json.loads(single.stdout)["drift_by_version"] == [] and "mixes" not in single.stderr


def test_model_ids_with_a_snapshot_suffix_are_versions_of_one_family():
    from council_db.analysis.drift.version_drift import family

    assert family("openai/gpt-4o-2024-08-06") == "openai/gpt-4o"
    assert family("anthropic/claude-3-5-sonnet-20241022") == "anthropic/claude-3-5-sonnet"
    assert family("google/gemini-1.5-pro-002") == "google/gemini-1.5-pro"
    assert family("claude-3-5-sonnet@20240620") == "claude-3-5-sonnet"
    assert family("meta-llama/llama-3.1-70b") == "meta-llama/llama-3.1-70b"


def test_trends_on_too_few_sessions_is_a_clear_error(cli):
    assert cli("db", "upgrade").exit_code == 0  # an empty database: trends never creates one
    result = cli("trends")
    assert result.exit_code == 1 and "time analyses need at least 10" in str(result.exception or result.output)


LATE_REVIEWER, LIKED = "mistral/mistral-large", "anthropic/claude-3-5-sonnet"


def panel_joined_late(seed: int) -> list[dict]:
    """The four council models review throughout; a fifth reviewer scores only the last third of
    the window and likes one candidate 1.5 points beyond its quality. No candidate drifts."""
    records, _ = simulated(sessions=300, seed=seed, end=END, reviewers=[*DEFAULT_MODELS, LATE_REVIEWER])
    cut = sorted({r["timestamp"] for r in records})[200]
    kept = [r for r in records if r["reviewer_id"] != LATE_REVIEWER or r["timestamp"] >= cut]
    for r in kept:
        if r["reviewer_id"] == LATE_REVIEWER and r["model_id"] == LIKED:
            r["score_value"] = min(10.0, r["score_value"] + 1.5)
    return kept


@pytest.mark.parametrize("seed", [51, 52])
def test_a_reviewer_joining_late_with_a_liking_is_no_candidate_drift_and_the_report_says_the_panel_changed(seed):
    report = build(from_records(panel_joined_late(seed)), resamples=50)
    liked = next(t for t in report.trends if t.kind == "model" and t.subject == LIKED)
    assert liked.slope_per_30d.ci_low <= 0.0 <= liked.slope_per_30d.ci_high
    assert not [f for f in report.flags if f.kind == "trend"]
    joined = [w for w in report.warnings if w.startswith("the reviewer panel changes over the window")]
    assert len(joined) == 1 and f"reviewer {LATE_REVIEWER} scores only from" in joined[0]
    assert "(100 of 300 sessions)" in joined[0]
