"""--dimension NAME (issue 30): every analysis command runs on one rubric dimension's scores in
place of the overall score, says so with its window, leaves out (and counts) the records
without the dimension, and refuses a dimension the window does not have, listing those it has."""

from __future__ import annotations

import json

import pytest

from council_db.analysis.loading.dimension_scores import UnknownDimension
from tests.conftest import Cli, both_backends, run_module, session, simulated, write_jsonl

GPT = "openai/gpt-4o"
PLANTED = {"sessions": 60, "seed": 7, "dimensions": ["accuracy", "clarity"],
           "dimension_reviewer_offsets": {"accuracy": {GPT: -1.5}}}


@pytest.fixture
def rated(tmp_path, cli: Cli) -> Cli:
    """A database of 60 simulated sessions whose judge GPT-4o is harsh on accuracy alone."""
    lines, _ = simulated(**PLANTED)
    assert cli("import", "-q", str(write_jsonl(tmp_path / "rated.jsonl", lines))).exit_code == 0
    return cli


def report(cli: Cli, *options: str) -> dict:
    result = cli("bias-report", "--json", *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def severity_flagged(found: dict, reviewer: str) -> bool:
    return any(flag["kind"] == "reviewer_severity" and flag["subject"] == reviewer for flag in found["flags"])


@both_backends
def test_a_severity_planted_on_one_dimension_is_found_by_its_report_and_not_in_the_overall_score(rated):
    overall, accuracy, clarity = report(rated), report(rated, "--dimension", "accuracy"), \
        report(rated, "--dimension", "clarity")
    assert severity_flagged(accuracy, GPT)
    assert not severity_flagged(overall, GPT) and not severity_flagged(clarity, GPT)
    gpt = next(row for row in accuracy["reviewers"] if row["reviewer_id"] == GPT)
    assert -1.5 < gpt["severity"]["estimate"] < -0.75  # -1.5 less its share of the average reviewer (1/4)
    assert accuracy["window"]["filters"] == {"dimension": "accuracy"}
    assert "dimension" not in overall["window"]["filters"]
    text = rated("bias-report", "--dimension", "accuracy").stdout
    assert "dimension: accuracy" in text


def test_a_dimension_the_window_does_not_have_exits_2_listing_those_it_has(rated):
    listed = ("--dimension acuracy: no record in this window has that dimension; its dimensions: "
              "accuracy (960 scores), clarity (960 scores)")
    shown = run_module("--db", rated.db, "bias-report", "--dimension", "acuracy")
    assert shown.returncode == 2 and shown.stderr.decode().strip() == f"error: {listed}"
    for command in (["trends"], ["anomalies"], ["leaderboard"]):
        result = rated(*command, "--dimension", "acuracy")
        assert isinstance(result.exception, UnknownDimension), (command, result.output)
        assert str(result.exception) == listed and result.exception.exit_code == 2


def test_records_without_the_dimension_are_left_out_and_counted(tmp_path, cli):
    plain = session("plain", timestamp="2025-01-01T00:00:00Z")
    named = session("named", timestamp="2025-01-02T00:00:00Z")
    for line in named:
        line["score_dimensions"] = {"clarity": 2.0 if line["position"] == 0 else 9.0}
    assert cli("import", "-q", str(write_jsonl(tmp_path / "a.jsonl", plain + named))).exit_code == 0
    found = report(cli, "--dimension", "clarity")
    assert found["window"]["records"] == 16 and found["window"]["sessions"] == 1
    assert found["excluded"] == {"without_dimension": 16}


def test_every_analysis_command_says_which_dimension_it_read(rated):
    board = json.loads(rated("leaderboard", "--json", "--dimension", "clarity").stdout)
    assert board["window"]["dimension"] == "clarity"
    drift = json.loads(rated("trends", "--json", "--dimension", "clarity").stdout)
    assert drift["dimension"] == "clarity"
    assert "dimension: clarity" in rated("anomalies", "--dimension", "clarity").stdout
    key = json.loads(rated("sessions", "--json", "-n", "1").stdout)[0]["session_id"]
    one = json.loads(rated("scores", "--session", key, "--json", "--dimension", "clarity").stdout)
    assert one["dimension"] == "clarity"
    assert one["candidates"] != json.loads(rated("scores", "--session", key, "--json").stdout)["candidates"]
