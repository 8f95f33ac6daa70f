"""Anomalous sessions: broken sessions are found (recall and precision >= 90% at 1%
prevalence), the reason names what is wrong, and analyses can leave them out."""

from __future__ import annotations

import io
import json

import pytest

from council_db.analysis import anomalies, joint_model
from council_db.analysis.score_data import from_records
from council_db.simulate import SimulationConfig, write_jsonl
from tests.conftest import write_jsonl as write_lines


def simulated(sessions: int, seed: int, **config):
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(sessions=sessions, seed=seed, **config), out)
    return from_records(json.loads(line) for line in out.getvalue().splitlines()), truth


def test_broken_sessions_are_found_with_recall_and_precision_of_at_least_90_percent_at_1_percent():
    found = planted = hits = 0
    for seed in range(3):
        data, truth = simulated(1000, seed, anomaly_rate=0.01, reviewer_offsets={"openai/gpt-4o": -0.6},
                                position_effects=[0.3], verbosity=0.2)
        flagged = {a.session_id for a, _ in anomalies.flagged(data, joint_model.fit(data).residuals)}
        truly = set(truth["anomalous_sessions"])
        found, planted, hits = found + len(flagged), planted + len(truly), hits + len(flagged & truly)
    assert planted >= 20
    assert hits / planted >= 0.9 and hits / found >= 0.9


def test_the_reason_says_every_score_was_the_same_or_which_reviewer_was_off():
    data, truth = simulated(400, 5, anomaly_rate=0.02)
    flagged = {a.session_id: a.reason for a, _ in anomalies.flagged(data, joint_model.fit(data).residuals)}
    for session_id, planted in truth["anomalous_sessions"].items():
        if planted["kind"] == "constant":
            assert flagged[session_id].startswith(f"every score is {planted['score']:g}")
        else:
            assert flagged[session_id].startswith(f"reviewer {planted['reviewer']}'s scores do not fit")


def test_clean_data_has_no_anomalous_session():
    data, _ = simulated(500, 8)
    assert anomalies.flagged(data, joint_model.fit(data).residuals) == []


@pytest.fixture
def broken_db(tmp_path, cli):
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(sessions=200, seed=4, anomaly_rate=0.02), out)
    path = write_lines(tmp_path / "broken.jsonl", out.getvalue().splitlines())
    assert cli("import", str(path)).exit_code == 0
    return truth


def test_anomalies_lists_the_flagged_sessions_in_every_format(cli, broken_db):
    planted = set(broken_db["anomalous_sessions"])
    listed = json.loads(cli("anomalies", "--format", "json").stdout)
    assert {row["session_id"] for row in listed} == planted
    assert all(row["q_value"] <= 0.05 and row["reason"] for row in listed)
    csv = cli("anomalies", "--format", "csv", "--all").stdout.splitlines()
    assert csv[0] == "session_id,timestamp,p_value,q_value,flagged,reason" and len(csv) == 201
    table = cli("anomalies", "--days", "400").stdout
    assert all(session_id in table for session_id in planted)


def test_bias_report_can_exclude_anomalies_and_says_how_many(cli, broken_db):
    planted = broken_db["anomalous_sessions"]
    report = json.loads(cli("bias-report", "--format", "json", "--exclude-anomalies").stdout)
    assert report["window"]["sessions"] == 200 - len(planted)
    assert report["window"]["filters"]["exclude_anomalies"] == len(planted)
    assert any(w.startswith(f"--exclude-anomalies: {len(planted)} anomalous session") for w in report["warnings"])
    full = json.loads(cli("bias-report", "--format", "json").stdout)
    assert {a["session_id"] for a in full["anomalies"]} == set(planted)
    assert {f["subject"] for f in full["flags"] if f["kind"] == "anomaly"} == set(planted)
