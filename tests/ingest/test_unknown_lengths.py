"""An answer's length can be unknown: a judge log names no answer text, and its answers were
not given (``import --answers``). A line says so with ``"response_length_chars": null``; the
database keeps -1; export writes null back; and no length figure uses such a record. Every
expected figure is computed here from the lines with plain numpy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import Cli, both_backends, record, scalar, write_jsonl

UNKNOWN = "records whose answer length is unknown"


def sessions(count: int, unknown_from: int) -> list[dict]:
    """4x4 sessions whose answers score higher the longer they are; from session
    ``unknown_from`` on, the lines say the length is unknown."""
    rng = np.random.default_rng(7)
    lines = []
    for number in range(count):
        lengths = rng.integers(200, 3_000, size=4)
        for reviewer in range(4):
            for model in range(4):
                score = float(np.clip(np.round(3 + np.log(lengths[model]) - 5 + rng.normal(0, 1)), 1, 10))
                lines.append(record(session_id=f"s{number}", timestamp=f"2025-12-01T{number % 24:02d}:00:00Z",
                                    reviewer_id=f"judge-{reviewer}", model_id=f"model-{model}", position=model,
                                    response_length_chars=None if number >= unknown_from else int(lengths[model]),
                                    score_value=score))
    return lines


def known(lines: list[dict]) -> list[dict]:
    return [line for line in lines if line["response_length_chars"] is not None]


@both_backends
def test_a_null_length_is_stored_as_unknown_and_counted(cli, db, tmp_path):
    lines = sessions(6, unknown_from=4)
    result = cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)), "--format", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    missing = len(lines) - len(known(lines))
    assert (summary["inserted"], summary["unknown_length"]) == (len(lines), missing) == (96, 32)
    assert f"{missing:,} {UNKNOWN}" in result.stderr
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE response_length_chars = -1") == missing


def test_export_writes_null_for_an_unknown_length_and_imports_back_the_same(tmp_path):
    lines = sessions(3, unknown_from=1)
    first, second = Cli(tmp_path / "a.db"), Cli(tmp_path / "b.db")
    assert first("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    exported = first("export", "--format", "jsonl").stdout
    assert sum(json.loads(line)["response_length_chars"] is None for line in exported.splitlines()) == 32
    again = first("import", "-", "--format", "json", input=exported)
    assert (json.loads(again.stdout)["inserted"], json.loads(again.stdout)["duplicates"]) == (0, 48)
    assert second("import", "-", input=exported).exit_code == 0
    assert second("export", "--format", "jsonl").stdout == exported


@pytest.mark.parametrize("sample", [None, "10"], ids=["records", "session_sums"])
def test_length_figures_use_only_the_records_whose_length_is_known(tmp_path, sample):
    """A window read record by record and one summed per session (a sample of 10 sessions
    for the rest) give the naive pooled r of the known-length records only."""
    lines = sessions(40, unknown_from=25)
    cli = Cli(tmp_path / "council.db")
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    report = json.loads(cli("bias-report", "--format", "json", *(["--sample-sessions", sample] if sample else []))
                        .stdout)
    rated = known(lines)
    pooled = np.corrcoef([line["response_length_chars"] for line in rated],
                         [line["score_value"] for line in rated])[0, 1]
    naive = report["length"]["naive_pooled_r"]
    assert (naive["estimate"], naive["n_records"]) == (pytest.approx(pooled), len(rated))
    assert report["length"]["headline"]["n_records"] == 25 * 4  # answers of the 25 sessions with lengths
    assert report["window"]["records"] == len(lines)


def test_with_no_length_known_the_report_computes_no_length_figure_and_says_why(tmp_path):
    lines = sessions(30, unknown_from=0)
    cli = Cli(tmp_path / "council.db")
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    length = report["length"]
    assert length["naive_pooled_r"] is None and length["headline"] is None
    assert length["adjusted_effect"] is None and length["log_length_sd"] is None
    assert not [flag for flag in report["flags"] if flag["kind"] == "verbosity"]
    assert any("no answer length is known" in warning for warning in report["warnings"])
    assert report["window"]["records"] == len(lines)
    assert cli("bias-report").exit_code == 0


def test_a_display_slot_past_1000_is_refused_but_a_position_that_is_no_slot_is_a_key(tmp_path):
    cli = Cli(tmp_path / "council.db")
    lines = [record(position=1_001), record(schema_version="1.0.0", position=2_000_000_000)]
    result = cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)), "--format", "json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["inserted"] == 1
    assert "line 1: position: 1001 is not a display slot" in result.stderr


def test_a_copy_to_another_database_keeps_an_unknown_length_unknown(tmp_path):
    lines = [dict(line, consent_level=2) for line in sessions(2, unknown_from=1)]
    source, target = Cli(tmp_path / "a.db"), Cli(tmp_path / "b.db")
    assert source("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    assert source("db", "copy", "--to", str(tmp_path / "b.db")).exit_code == 0
    assert target("export", "--format", "jsonl").stdout == source("export", "--format", "jsonl").stdout
    copied = json.loads(target("stats", "--format", "json").stdout)["records"]
    assert copied == len(lines) == 32


def test_the_views_mean_lengths_leave_unknown_lengths_out(tmp_path):
    lines = sessions(3, unknown_from=1)
    cli = Cli(tmp_path / "council.db")
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines))).exit_code == 0
    sized = known(lines)
    daily = json.loads(cli("sql", "SELECT mean_length_chars FROM daily_scores", "--format", "json").stdout)
    assert daily == [{"mean_length_chars": pytest.approx(np.mean([line["response_length_chars"] for line in sized]))}]
    profiles = json.loads(cli("sql", "SELECT model, mean_length_chars FROM model_profiles", "--format", "json").stdout)
    assert {row["model"]: row["mean_length_chars"] for row in profiles} == pytest.approx({
        model: np.mean([line["response_length_chars"] for line in sized if line["model_id"] == model])
        for model in {line["model_id"] for line in lines}})
