"""A trend needs its time variation spread over instants: judge runs come in bursts (a batch
stamped at one instant, a late straggler, a reviewer joining late), and a slope through one
isolated instant is a difference between that batch and the rest. FastChat's pair fixture (13
sessions within 8 minutes, one two days later, 0-1 scale) flagged "drift of gpt-3.5-turbo
+1.32 points (q <0.001)". Such a slope is shown but not tested, t takes the instants' worth of
information the slope rests on as its degrees of freedom, and no effect larger than the
scale's whole range is ever flagged."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from council_db.analysis.drift import trends
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records, from_rows
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl
from tests.conftest import Cli

PAIR_BENCH = Path(__file__).parents[1] / "data" / "fastchat-pair" / "mt_bench"
TIME_KINDS = {"trend", "change_point"}
HOUR_US = 3_600 * 1_000_000


def simulated_data(**config):
    out = io.StringIO()
    write_jsonl(SimulationConfig(**config), out)
    return from_records(json.loads(line) for line in out.getvalue().splitlines())


def slopes_of(data, kind: str = "reviewer") -> list[trends.Slope]:
    return trends.slopes(trends.timed_residuals(data, joint_model.fit(data).residuals, kind))


def test_fastchat_pairs_one_late_session_makes_no_drift(tmp_path):
    cli = Cli(f"sqlite:///{tmp_path / 'pair.db'}")
    assert cli("import", "-q", "--from", "fastchat-pair", str(PAIR_BENCH / "model_judgment" / "gpt-4_pair.jsonl"),
               "--answers", str(PAIR_BENCH / "model_answer")).exit_code == 0
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    assert [f for f in report["flags"] if f["kind"] in TIME_KINDS] == []
    for model in ("gpt-3.5-turbo", "vicuna-13b-v1.3"):
        trend = next(t for t in report["trends"] if t["subject"] == model)
        assert trend["slope_per_30d"]["p_value"] is None  # shown, not tested
        assert any(re.match(f"the trend of model {model} is not tested: one instant carries (8[0-9]|9[0-9])% of its "
                            "time information", w) for w in report["warnings"])  # 88% within a prompt of GPT-4's


def test_the_instants_worth_of_a_slope_is_its_satterthwaite_degrees_of_freedom():
    even = (np.arange(10) - 4.5) ** 2  # ten equal instants, evenly spread: each one's part of Sxx
    worth, heaviest = trends.effective_instants(even)
    assert worth == pytest.approx(even.sum() ** 2 / (even ** 2).sum()) == pytest.approx(5.63, abs=0.01)
    assert heaviest == pytest.approx(20.25 / 82.5)
    burst = np.r_[np.full(13, (1 / 14) ** 2), (13 / 14) ** 2]  # 13 at one end, one straggler
    worth, heaviest = trends.effective_instants(burst)
    assert worth == pytest.approx(1.16, abs=0.01) and heaviest == pytest.approx(169 / 182)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_late_straggler_leaves_every_slope_untested_and_the_report_without_a_time_flag(seed):
    data = simulated_data(sessions=15, seed=seed, days=8 / 1440, straggler_days=2.0)
    found = slopes_of(data) + slopes_of(data, "model")
    assert len(found) == 8 and all(s.one_instant and np.isnan(s.p_value) for s in found)
    report = build(data, resamples=20)
    assert not [f for f in report.flags if f.kind in TIME_KINDS]
    assert sum("is not tested: one instant carries" in w for w in report.warnings) == 8


def test_null_slopes_in_batches_after_a_straggler_and_beside_a_late_reviewer_keep_their_size():
    # The long study: benchmarks/bench_bursty.py (100 full null reports per design, docs/accuracy.md).
    p_values = []
    for seed in range(8):
        for design in (dict(batch_size=10, straggler_days=30.0, days=30), dict(days=60, late_reviewers={
                "openai/gpt-4o": 0.8})):
            p_values += [s.p_value for s in slopes_of(simulated_data(sessions=60, seed=900 + seed, **design))]
    assert len(p_values) == 64 and not np.isnan(p_values).any()
    assert np.mean(np.array(p_values) < 0.05) <= 0.10


def test_a_drift_larger_than_the_whole_scale_is_shown_but_never_flagged():
    # Two judges on a 0-1 scale: the second joins halfway and, as the first slides from 1 to 0,
    # climbs from 0 to 1 in 19 days: +1.71 points per 30 days relative to the other, more than
    # any score can move.
    rng = np.random.default_rng(0)
    rows = []
    for s in range(60):
        for reviewer in ("r1", "r2") if s >= 30 else ("r1",):
            level = 0.5 if s < 30 else (s - 30) / 29 if reviewer == "r2" else (59 - s) / 29
            rows += [(f"s{s:02d}", s * 16 * HOUR_US, reviewer, f"m{m}", m, 100 + 10 * m,
                      float(np.clip(level + rng.normal(0, 0.05), 0, 1))) for m in range(3)]
    report = build(from_rows(rows, scale="0-1"), resamples=20)
    drift = {t.subject: t.slope_per_30d for t in report.trends if t.kind == "reviewer"}
    assert drift["r2"].estimate > 1.5 and drift["r2"].p_value is None  # the figure is shown, untested
    assert not [f for f in report.flags if f.kind == "trend"]
    assert "the drift of reviewer r2 is not tested: +1.71 points is more than the whole 0-1 scale (1 points), a " \
           "figure the data cannot support" in report.warnings
