"""council-db leaderboard --method ppi: the real CLI on real databases, judges and human raters
imported as lines with their kind, and LLMBar's published runs with their gold labels."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from council_db.simulate import SimulationConfig, write_jsonl
from tests.conftest import both_backends, run_module

QUALITY = {"a": 0.6, "b": 0.2, "c": -0.2, "d": -0.6}
NATURAL = Path(__file__).parents[1] / "data" / "llmbar-natural"


@pytest.fixture
def rated(cli, tmp_path):
    """400 sessions a judge a point too generous scored, a fifth also rated by two of three
    humans (their lines say reviewer_kind human)."""
    config = SimulationConfig(models=list(QUALITY), model_quality=QUALITY, reviewers=["judge"],
                              humans=["h1", "h2", "h3"], humans_per_session=2, reference_share=0.2, sessions=400,
                              base_score=5.5, answer_sd=1.0, reviewer_offsets={"judge": 1.0}, seed=5)
    path = tmp_path / "rated.jsonl"
    with path.open("w") as out:
        write_jsonl(config, out)
    assert cli("import", str(path)).exit_code == 0
    return cli


@both_backends
def test_ppi_ranks_on_the_peoples_scale_and_says_what_it_used_and_removed(rated):
    result = rated("leaderboard", "--method", "ppi", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    reference = found["reference"]
    assert (reference["kind"], reference["raters"], reference["judges"], reference["quality"]) == \
        ("human", ["h1", "h2", "h3"], ["judge"], "mean score")
    assert reference["labelled_sessions"] + reference["unlabelled_sessions"] == 400
    assert "the judges' bias per candidate" in found["removes"]
    assert [m["model"] for m in found["models"]] == ["a", "b", "c", "d"]

    def covers(figure: dict, value: float) -> bool:
        return figure["ci_low"] <= value <= figure["ci_high"]

    people = {m["model"]: 5.5 + QUALITY[m["model"]] for m in found["models"]}
    assert sum(covers(m["score"], people[m["model"]]) for m in found["models"]) >= 3, "95% intervals, 4 of them"
    assert not any(covers(m["judges_only"], people[m["model"]]) for m in found["models"])
    assert sum(covers(m["judge_bias"], 1.0) for m in found["models"]) >= 3
    assert {m["labelled_sessions"] for m in found["models"]} == {reference["labelled_sessions"]}


def test_the_table_shows_the_labelled_sessions_and_the_judge_bias_and_csv_every_column(rated):
    table = rated("leaderboard", "--method", "ppi")
    assert table.exit_code == 0, table.output
    assert "labelled" in table.stdout and "judge bias" in table.stdout
    assert "calibration: " in table.stderr and "sessions human raters rated (h1, h2, h3)" in table.stderr
    rows = list(csv.DictReader(io.StringIO(rated("leaderboard", "--method", "ppi", "--csv").stdout)))
    own = {"labelled", "lambda", "judge_bias", "judge_bias_ci_low", "judge_bias_ci_high", "judges_only"}
    assert own <= set(rows[0])
    assert rows[0]["method"] == "ppi"


def test_a_window_without_people_is_refused_in_one_line_saying_how_to_mark_them(tmp_path):
    path, db = tmp_path / "judges.jsonl", str(tmp_path / "council.db")
    with path.open("w") as out:
        write_jsonl(SimulationConfig(sessions=20), out)
    assert run_module("--db", db, "import", str(path)).returncode == 0
    result = run_module("--db", db, "leaderboard", "--method", "ppi")
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        "error: --method ppi needs sessions that people or gold labels rated too, and no reviewer in this window is "
        "a human rater or a gold label: mark the people's reviewers with council-db reviewers --kind human PATTERN "
        "(or import their scores with --reviewer-kind human; gold for known right answers)"]


def test_on_llmbar_every_candidate_is_one_items_answer_so_the_gold_verdict_is_all_there_is(cli):
    """LLMBar's outputs are anonymous and each met in one item: the ranking is the gold label's
    verdict per answer (1 or 0), every session rated, and both are said."""
    assert cli("import", "--from", "llmbar", *map(str, sorted(NATURAL.glob("evaluators/*/*/result.json")))) \
        .exit_code == 0
    result = cli("leaderboard", "--method", "ppi", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["reference"] | {"judges": None} == {
        "kind": "gold", "raters": ["gold"], "judges": None, "quality": "win rate", "labelled_sessions": 100,
        "unlabelled_sessions": 0, "unrated_answers_left_out": 0}
    assert len(found["reference"]["judges"]) == 10
    assert len(found["models"]) == 200
    assert sorted({m["score"]["estimate"] for m in found["models"]}) == [0.0, 1.0]
    assert sum(m["score"]["estimate"] for m in found["models"]) == 100, "one right answer an item"
    for model in found["models"]:
        assert model["lambda"] == 0 and model["score"]["ci_low"] is None
        assert model["judge_bias"]["estimate"] == pytest.approx(model["judges_only"]["estimate"]
                                                               - model["score"]["estimate"])
    assert any("every session the judges scored was rated by the gold raters" in w for w in found["warnings"])
    assert any("200 candidate(s) have fewer than 2 sessions" in w for w in found["warnings"])
