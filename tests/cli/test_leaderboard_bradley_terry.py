"""council-db leaderboard --method bradley-terry: the real CLI on a real SQLite file holding
FastChat's pairwise judgments (both display orders in one session) with their answers' lengths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from council_db.cli.app import app
from council_db.contract.reviewer_identity import Identity
from tests.conftest import both_backends, run_module

MT_BENCH = Path(__file__).parents[1] / "data" / "fastchat-pair" / "mt_bench"
JUDGMENTS = MT_BENCH / "model_judgment" / "gpt-4_pair.jsonl"


@pytest.fixture
def pairs(cli):
    result = cli("import", str(JUDGMENTS), "--from", "fastchat-pair",
                 "--answers", str(MT_BENCH / "model_answer"))
    assert result.exit_code == 0, result.output
    return cli


def judges() -> set[str]:
    """The file's judges: the judge model with each of its prompts (judge[1]), as reviewers are named."""
    return {Identity(model, prompt=prompt).label
            for model, prompt in {tuple(json.loads(line)["judge"]) for line in JUDGMENTS.read_text().splitlines()}}


@both_backends
def test_json_keeps_the_leaderboards_shape_and_adds_the_coefficients(pairs):
    result = pairs("leaderboard", "--method", "bradley-terry", "--style", "length", "--baseline", "gpt-3.5-turbo",
                   "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["method"] == "bradley-terry" and found["outcome_model"]["name"] == "rao-kupper"
    assert {m["model"] for m in found["models"]} == {"gpt-3.5-turbo", "llama-2-13b-chat", "vicuna-13b-v1.3"}
    for model in found["models"]:
        assert {"estimate", "ci_low", "ci_high", "n_sessions"} <= set(model["score"])
        assert model["rank_ci_low"] <= model["rank"] <= model["rank_ci_high"]
    baseline = next(m for m in found["models"] if m["model"] == "gpt-3.5-turbo")
    assert baseline["score"]["estimate"] == 0.0 and baseline["win_rate"]["estimate"] == pytest.approx(0.5)
    assert all("length_controlled" in m for m in found["models"] if m is not baseline)
    slots = found["coefficients"]["slot"]
    length, = found["coefficients"]["style"]
    assert {slot["name"] for slot in slots} == {f"first shown, {judge}" for judge in judges()} | {
        "first shown, pooled"}  # several judges (gpt-4's two prompts): each, and pooled
    assert all(slot["ci_low"] < slot["estimate"] < slot["ci_high"] for slot in slots)
    assert length["name"].startswith("length (characters)") and "equal length" in found["removes"]
    assert any("2 of 27 games left out" in warning for warning in found["warnings"])


def test_the_table_shows_win_rates_and_the_coefficients_with_what_each_removes(pairs):
    result = pairs("leaderboard", "--method", "bradley-terry", "--style", "length")
    assert result.exit_code == 0, result.output
    assert "win %" in result.stdout and all(f"first shown, {judge}:" in result.stdout for judge in judges())
    assert "length (characters), per SD:" in result.stdout and "removes the judges' preference" in result.stdout
    assert "separability:" in result.stdout and "removes: the first-shown answer's advantage" in result.stderr


def _error(cli, *args: str) -> str:
    """The one line a real process prints on stderr, exit code 1."""
    done = run_module("--db", cli.db, "leaderboard", "--method", "bradley-terry", *args)
    text = done.stderr.decode()
    assert done.returncode == 1 and text.startswith("error: ") and text.count("\n") == 1, text
    return text


def test_markdown_without_counts_is_one_clear_error(pairs):
    assert "carry no markdown counts; import with --from arena-hard --answers DIR" in \
        _error(pairs, "--style", "length,markdown")


def test_a_baseline_that_played_no_game_and_an_unknown_style_are_refused(pairs):
    assert "--baseline 'gpt-4o' played no game" in _error(pairs, "--baseline", "gpt-4o")
    assert "--style verbosity: not a style covariate" in _error(pairs, "--style", "verbosity")


def test_include_self_keeps_a_judges_verdicts_on_its_own_answers_and_says_so(cli, tmp_path):
    lines = []
    for s, (a, b) in enumerate([("judge", "x"), ("x", "y"), ("judge", "y")] * 5):
        for first, second in ((a, b), (b, a)):
            lines += [{"schema_version": "1.2.0", "session_id": f"s{s}", "timestamp": f"2025-01-01T00:00:{s:02d}Z",
                       "consent_level": 1, "reviewer_id": "judge", "model_id": model, "position": slot,
                       "response_length_chars": 100, "score_value": float(model == a), "score_scale": "0-1",
                       "council_config_version": "0.1.0", "query_hash": None, "query_metadata": None}
                      for slot, model in enumerate((first, second))]
    path = tmp_path / "self.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert cli("import", str(path)).exit_code == 0
    left_out = json.loads(cli("leaderboard", "--method", "bradley-terry", "--json").stdout)
    kept = json.loads(cli("leaderboard", "--method", "bradley-terry", "--include-self", "--json").stdout)
    assert (left_out["games"], kept["games"]) == (10, 30)
    assert "self-judgments kept" in kept["removes"] and "left out unless --include-self" in left_out["removes"]


def test_pairwise_options_with_another_method_are_noted_as_unused(pairs):
    result = pairs("leaderboard", "--method", "mean", "--baseline", "gpt-3.5-turbo")
    assert result.exit_code == 0 and "--baseline is used by --method bradley-terry only" in result.stderr


def test_without_answer_lengths_the_lc_win_rate_is_missing_and_said_to_be(cli):
    judgments = MT_BENCH / "model_judgment" / "gpt-4_pair.jsonl"
    assert cli("import", str(judgments), "--from", "fastchat-pair").exit_code == 0
    found = json.loads(cli("leaderboard", "--method", "bradley-terry", "--baseline", "gpt-3.5-turbo", "--json").stdout)
    assert not any("length_controlled" in model for model in found["models"])
    assert any(warning.startswith("no length-controlled win rate for ") for warning in found["warnings"])


def test_arena_hards_five_level_verdicts_rank_against_its_baseline_as_the_readme_shows(cli):
    """The README's arena-hard example: undated judgments, the answers' style from --answers."""
    arena = Path(__file__).parents[1] / "data" / "arena-hard" / "arena-hard-v0.1"
    result = cli("import", "--from", "arena-hard", "--answers", str(arena / "model_answer"),
                 *map(str, sorted((arena / "model_judgment").glob("*/*.jsonl"))))
    assert result.exit_code == 0, result.output
    result = cli("leaderboard", "--method", "bradley-terry", "--style", "length,markdown", "--baseline", "gpt-4-0314")
    assert result.exit_code == 0, result.output
    assert "found: no session with a time" in result.output and "to ?" not in result.output
    assert "ordinal (cumulative logit) Bradley-Terry on the five verdict levels" in result.output

    on_80 = CliRunner().invoke(app, ["--db", cli.db, "leaderboard", "--method", "bradley-terry", "--style", "length"],
                               env={"COLUMNS": "80"})
    assert on_80.exit_code == 0, on_80.output
    assert max(map(len, on_80.stdout.splitlines())) <= 80 and "prior: a normal prior" in on_80.stdout
