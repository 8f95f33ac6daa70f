"""council-db import --from fastchat-single on the published MT-bench grading of four ORPO
models by GPT-4 (tests/data/realdata/mt-bench-orpo). Every expected figure is read here from
the published files with plain Python."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict

import pytest

from council_db.contract.reviewer_identity import Identity
from tests import realdata
from tests.conftest import Cli, both_backends, scalar, write_jsonl

JUDGMENTS = realdata.MT_BENCH / "model_judgment" / "gpt-4_single.jsonl"
ANSWERS = realdata.MT_BENCH / "model_answer"


def graded_text_known(judgment: dict) -> bool:
    """The answer in model_answer/ is the one the judge saw: its text is in the judge's prompt."""
    for line in realdata.read_jsonl(ANSWERS / f"{judgment['model']}.jsonl"):
        if line["question_id"] == judgment["question_id"]:
            return line["choices"][0]["turns"][judgment["turn"] - 1] in judgment["user_prompt"]
    return False


def imported(cli: Cli, *args: str) -> dict:
    result = cli("import", "--from", "fastchat-single", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@both_backends
def test_every_grading_is_one_record_in_a_session_per_question_and_turn(cli, db):
    summary = imported(cli, str(JUDGMENTS), "--answers", str(ANSWERS))
    published = realdata.mt_bench_judgments()
    stale = sum(not graded_text_known(j) for j in published)
    assert (summary["inserted"], summary["rejected"], summary["excluded"]) == (len(published), 0, 1) == (800, 0, 1)
    assert summary["unknown_length"] == stale == 157, "the first grading of mistral-orpo saw answers since replaced"
    assert scalar(db, "SELECT COUNT(*) FROM sessions") == len({(j["question_id"], j["turn"]) for j in published})
    reviewers = {Identity(j["judge"][0], prompt=j["judge"][1]).label for j in published}  # judge[1]: the prompt
    assert len(reviewers) == 4  # single-v1, single-math-v1 and their multi-turn prompts: four judges
    with db.engine.connect() as connection:
        stored = set(connection.exec_driver_sql(
            "SELECT DISTINCT m.name FROM models AS m JOIN scores ON scores.reviewer_id = m.id").scalars())
    assert stored == reviewers
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE display_order") == 0
    assert scalar(db, "SELECT session_key FROM sessions ORDER BY id LIMIT 1") == "q81/t1"


def test_stored_scores_add_up_per_model_as_in_the_file_and_no_rating_is_kept_unscored(tmp_path):
    cli = Cli(tmp_path / "council.db")
    imported(cli, str(JUDGMENTS))
    totals = defaultdict(float)
    for j in realdata.mt_bench_judgments():
        if j["score"] != realdata.NO_RATING:
            totals[j["model"]] += j["score"]
    rows = json.loads(cli("sql", "SELECT m.name AS model, SUM(s.score_value) AS total FROM scores s JOIN models m "
                                 "ON m.id = s.model_id WHERE s.exclusion_id IS NULL GROUP BY m.name",
                          "--format", "json").stdout)
    assert {row["model"]: row["total"] for row in rows} == pytest.approx(dict(totals))
    unscored = json.loads(cli("sql", "SELECT score_value, exclusion_id FROM scores WHERE exclusion_id IS NOT NULL",
                              "--format", "json").stdout)
    assert unscored == [{"score_value": 0.0, "exclusion_id": 1}]


def test_lengths_are_the_characters_of_the_answer_the_judge_saw(tmp_path):
    cli = Cli(tmp_path / "council.db")
    imported(cli, str(JUDGMENTS), "--answers", str(ANSWERS))
    texts = {(path.stem, line["question_id"]): line["choices"][0]["turns"]
             for path in ANSWERS.glob("*.jsonl") for line in realdata.read_jsonl(path)}
    expected = sorted(len(texts[(j["model"], j["question_id"])][j["turn"] - 1]) if graded_text_known(j) else -1
                      for j in realdata.mt_bench_judgments())
    rows = json.loads(cli("sql", "SELECT response_length_chars AS n FROM scores", "--format", "json").stdout)
    assert sorted(row["n"] for row in rows) == expected


def test_without_answers_every_length_is_unknown_and_the_summary_says_so(tmp_path):
    cli = Cli(tmp_path / "council.db")
    result = cli("import", "--from", "fastchat-single", str(JUDGMENTS))
    assert result.exit_code == 0
    assert "800 records whose answer length is unknown" in result.stderr
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    assert report["length"]["naive_pooled_r"] is None and report["length"]["adjusted_effect"] is None


def test_importing_again_or_a_copy_elsewhere_stores_nothing_new(tmp_path):
    cli = Cli(tmp_path / "council.db")
    imported(cli, str(JUDGMENTS))
    again = imported(cli, str(JUDGMENTS))
    assert (again["inserted"], again["files"][0]["lines"], again["files"][0]["mode"]) == (0, 0, "incremental")
    copy = shutil.copy(JUDGMENTS, tmp_path / "copy.jsonl")
    elsewhere = imported(cli, str(copy))
    assert (elsewhere["inserted"], elsewhere["duplicates"]) == (0, 800)


def test_a_grown_file_imports_only_its_new_lines(tmp_path):
    lines = JUDGMENTS.read_text(encoding="utf-8").splitlines(keepends=True)
    growing = tmp_path / "gpt-4_single.jsonl"
    growing.write_text("".join(lines[:500]), encoding="utf-8")
    cli = Cli(tmp_path / "council.db")
    assert imported(cli, str(growing))["inserted"] == 500
    with growing.open("a", encoding="utf-8") as out:
        out.write("".join(lines[500:]))
    grown = imported(cli, str(growing))
    assert (grown["inserted"], grown["files"][0]["lines"], grown["files"][0]["mode"]) == (300, 300, "incremental")
    assert scalar_count(cli) == 800


def scalar_count(cli: Cli) -> int:
    return json.loads(cli("stats", "--format", "json").stdout)["records"]


def test_lines_that_do_not_fit_are_rejected_with_line_field_and_fix_and_the_rest_kept(tmp_path):
    good = realdata.mt_bench_judgments()[:3]
    bad = [{**good[0], "turn": "1"}, {k: v for k, v in good[1].items() if k != "tstamp"}, {**good[2], "judge": []},
           "{not json", {**good[0], "model": "a\u0000b"}]
    cli = Cli(tmp_path / "council.db")
    result = cli("import", "--from", "fastchat-single", str(write_jsonl(tmp_path / "in.jsonl", good + bad)),
                 "--format", "json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["inserted"] == 3
    assert "line 4: turn: got a str; expected 1 or 2, the turn graded" in result.stderr
    assert "line 5: tstamp: missing; expected the Unix time the grading was written, a number" in result.stderr
    assert "line 6: judge:" in result.stderr
    assert "line 7: not valid JSON" in result.stderr
    assert "line 8: model: contains a NUL character" in result.stderr
    shown = json.loads(cli("rejected", "--format", "json").stdout)
    assert [(row["line_number"], row["field"]) for row in shown] == [(4, "turn"), (5, "tstamp"), (6, "judge"),
                                                                      (7, None), (8, "model")]
    assert not any("user_prompt" in json.dumps(row) or "judgment" in (row["known_values"] or "") for row in shown)


def test_bench_prefixes_the_session_keys(tmp_path):
    cli = Cli(tmp_path / "council.db")
    imported(cli, str(JUDGMENTS), "--bench", "mt_bench")
    assert json.loads(cli("sql", "SELECT MIN(session_key) AS k FROM sessions", "--format", "json").stdout) == [
        {"k": "mt_bench/q100/t1"}]
