"""Tied timestamps are one instant: real judge runs (FastChat, MT-bench) stamp a whole batch
with one time, so file order is not time. A trend or change test needs distinct times; sessions
sharing a timestamp must never be split, and when too few distinct times exist the report says
why instead of flagging."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np

from council_db.analysis.drift import changepoints, trends
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from tests.conftest import simulated, write_jsonl

END = datetime(2026, 6, 1, tzinfo=timezone.utc)
TIME_KINDS = {"trend", "change_point"}
STEPPED_MODEL = "anthropic/claude-3-5-sonnet"


def stepped_records(sessions: int = 300, seed: int = 41, step_from: int = 150, step: float = 1.5) -> list[dict]:
    """Simulated records where one model scores ``step`` points more from session ``step_from``
    on (in file order), and one reviewer steps up by 1 point halfway: changes a test would find
    if file order were time."""
    records, _ = simulated(sessions=sessions, seed=seed, end=END, drift={"openai/gpt-4o": 1.0}, drift_at=0.5)
    order = list(dict.fromkeys(r["session_id"] for r in records))
    place = {s: i for i, s in enumerate(order)}
    for r in records:
        if r["model_id"] == STEPPED_MODEL and place[r["session_id"]] >= step_from:
            r["score_value"] = round(min(10.0, r["score_value"] + step), 1)
    return records


def stamp(records: list[dict], batches: int) -> list[dict]:
    """Give the sessions ``batches`` distinct timestamps, consecutive sessions (file order) sharing one."""
    order = list(dict.fromkeys(r["session_id"] for r in records))
    per_batch = -(-len(order) // batches)
    when = {s: (END - timedelta(days=batches - i // per_batch)).isoformat() for i, s in enumerate(order)}
    for r in records:
        r["timestamp"] = when[r["session_id"]]
    return records


def test_sessions_sharing_one_timestamp_raise_no_trend_or_change_and_the_report_says_why():
    report = build(from_records(stamp(stepped_records(), batches=1)), resamples=100)
    assert not [f for f in report.flags if f.kind in TIME_KINDS]
    assert report.trends == []
    assert report.window.start == report.window.end
    assert "all 300 sessions with two or more scores share one time: no trend or change can be tested" \
        in report.warnings
    assert "change" not in " ".join(f.message for f in report.flags)


def test_two_batches_of_sessions_are_two_instants_too_few_for_a_trend_or_a_change():
    # Two distinct times: a difference between the batches cannot be told from the batches asking
    # different things; a trend needs 3 distinct times, a change point 3 on each side.
    report = build(from_records(stamp(stepped_records(), batches=2)), resamples=100)
    assert not [f for f in report.flags if f.kind in TIME_KINDS]
    assert report.trends == []
    assert any(w.startswith("the 300 sessions with two or more scores fall at only 2 distinct times: a trend needs "
                            "at least 3, a change point at least 3 on each side") for w in report.warnings)


def test_a_change_inside_a_batch_is_placed_between_distinct_times_never_inside_the_batch():
    # 20 batches of 15 sessions; the model steps up in the middle of batch 11 (session 172). Against a
    # null that holds a line, a step smeared across one of only 10 batches is too much like a ramp (p 0.11).
    records = stamp(stepped_records(step_from=172), batches=20)
    data = from_records(records)
    timed = trends.timed_residuals(data, joint_model.fit(data).residuals, "model")
    found = {c.subject: c for c in changepoints.search(timed, np.random.default_rng(0))}
    change = found[STEPPED_MODEL]
    assert change.p_value < 0.01
    assert change.sessions_before in (165, 180)  # a batch boundary
    batch_times = sorted(set(timed.ts_us.tolist()))
    assert change.at_us in batch_times[1:]
    for c in found.values():
        assert c.sessions_before % 15 == 0


def test_distinct_times_per_subject_not_sessions_decide_whether_a_slope_is_estimated():
    data = from_records(stamp(stepped_records(), batches=2))
    timed = trends.timed_residuals(data, joint_model.fit(data).residuals, "reviewer")
    assert timed.n_instants == 2
    assert trends.slopes(timed) == []
    assert changepoints.search(timed, np.random.default_rng(0)) == []


def test_trends_and_bias_report_say_why_when_every_session_shares_one_time(cli, tmp_path):
    path = write_jsonl(tmp_path / "one-run.jsonl", stamp(stepped_records(sessions=60), batches=1))
    assert cli("import", str(path)).exit_code == 0
    result = cli("trends", "--by", "model", "--format", "json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    why = "all 60 sessions with two or more scores share one time: no trend or change can be tested"
    assert body["trends"] == [] and why in body["warnings"]
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    assert why in report["warnings"] and not [f for f in report["flags"] if f["kind"] in TIME_KINDS]


def test_slopes_over_a_few_batches_keep_the_false_flag_rate_near_five_percent():
    # Three batches: the end instants carry most of the leverage and their residuals are nearly
    # 0; a plain clustered SE with (instants - 1) df flagged 22% of null slopes at p < 0.05.
    p_values = []
    for seed in range(60):
        records, _ = simulated(sessions=30, seed=2000 + seed)
        data = from_records(stamp(records, batches=3))
        timed = trends.timed_residuals(data, joint_model.fit(data).residuals, "reviewer")
        p_values += [s.p_value for s in trends.slopes(timed)]
    assert len(p_values) == 240
    assert np.mean(np.array(p_values) < 0.05) <= 0.10
