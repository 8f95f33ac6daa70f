"""council-db import --from arena-hard on fixtures written from arena-hard-auto's documented
formats, both generations (tests/data/arena-hard: its README says what each file holds).
Expected figures come from the lines with plain Python, by arena-hard's own reading of them
(show_result.py: game 1 shows the baseline as A, game 2 swaps)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from council_db.errors import CouncilDbError
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import Cli, both_backends, scalar, write_jsonl

DATA = Path(__file__).parents[1] / "data" / "arena-hard"
V01, V2 = DATA / "arena-hard-v0.1", DATA / "arena-hard-v2.0"
V01_JUDGMENTS = sorted((V01 / "model_judgment" / "gpt-4-1106-preview").glob("*.jsonl"))
V2_JUDGMENTS = sorted((V2 / "model_judgment" / "gpt-4.1").glob("*.jsonl"))
# the answer shown as A's score for each verdict, its strength kept (docs/import-formats.md)
A_SCORE = {"A>>B": 1.0, "A>B": 0.75, "A=B": 0.5, "B>A": 0.25, "B>>A": 0.0,
           "B<<A": 1.0, "B<A": 0.75, "B=A": 0.5, "A<B": 0.25, "A<<B": 0.0}
STYLE = ("response_tokens", "markdown_headers", "markdown_lists", "markdown_bold")
MARKDOWN = {"header_count": "markdown_headers", "list_count": "markdown_lists", "bold_count": "markdown_bold"}


def lines(*paths: Path) -> list[dict]:
    return [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()]


def expected_scores(judgments: list[dict], bench: str, default_baseline: str = "gpt-4-0314") -> dict[tuple, float]:
    """(session, model, slot) -> score, from each line's games as arena-hard reads them."""
    found = {}
    for line in judgments:
        question = line.get("uid", line.get("question_id"))
        baseline = line.get("baseline", default_baseline)
        session = f"{bench}/{question}/{line['model']}"
        for game, shown in zip(line["games"], ((baseline, line["model"]), (line["model"], baseline))):
            if game is None or game["score"] is None:
                continue
            first = A_SCORE[game["score"]]
            found[(session, shown[0], 0)] = first
            found[(session, shown[1], 1)] = 1.0 - first
    return found


def expected_styles(answers: Path) -> dict[tuple[str, str], dict]:
    """(model, question) -> the answer's characters and style, as show_result.py sums the counts."""
    found = {}
    for line in lines(*sorted(answers.glob("*.jsonl"))):
        question = line.get("uid", line.get("question_id"))
        model = line.get("model", line.get("model_id"))
        text = (line["messages"][-1]["content"]["answer"] if "messages" in line
                else line["choices"][0]["turns"][0]["content"])
        meta = line.get("metadata") or {}
        style = {"response_tokens": meta.get("token_len")} if "token_len" in meta else {}
        style.update({field: sum(meta[key].values()) for key, field in MARKDOWN.items() if key in meta})
        found[(model, str(question))] = {"response_length_chars": len(text), **style}
    return found


def exported(cli: Cli) -> list[dict]:
    result = cli("export")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


@both_backends
@pytest.mark.parametrize("generation, files, bench, judge", [
    ("v0.1", V01_JUDGMENTS, "arena-hard-v0.1", "gpt-4-1106-preview"),
    ("v2", V2_JUDGMENTS, "arena-hard-v2.0", "gpt-4.1"),
])
def test_each_game_becomes_a_display_order_with_the_verdicts_strength_and_the_answers_style(cli, generation, files,
                                                                                            bench, judge):
    answers = files[0].parents[2] / "model_answer"
    result = cli("import", "--from", "arena-hard", "--answers", str(answers), *map(str, files), "--format", "json")
    assert result.exit_code == 0, result.output
    judgments = lines(*files)
    summary = json.loads(result.stdout)
    silent = sum(game is None or game["score"] is None for line in judgments for game in line["games"])
    assert summary["no_verdict"] == silent and summary["rejected"] == 0

    records = exported(cli)
    scores = {(r["session_id"], r["model_id"], r["position"]): r["score_value"] for r in records}
    assert scores == expected_scores(judgments, bench)
    assert {r["reviewer_id"] for r in records} == {judge} and {r["score_scale"] for r in records} == {"0-1"}
    assert len({r["session_id"] for r in records}) == len(judgments)  # one session per (question, model)
    styles = expected_styles(answers)
    for record in records:
        question = record["session_id"].split("/")[1]
        wanted = styles[(record["model_id"], question)]
        assert {k: record.get(k) for k in wanted} == wanted and not set(STYLE) - set(wanted) & set(record)
    if generation == "v2":
        assert {r["query_metadata"]["category"] for r in records} == {"hard_prompt", "creative_writing"}


def test_without_answers_lengths_and_style_are_unknown_and_the_default_baseline_is_stated(tmp_path):
    cli = Cli(tmp_path / "council.db")
    result = cli("import", "--from", "arena-hard", *map(str, V01_JUDGMENTS))
    assert result.exit_code == 0, result.output
    assert "judged against gpt-4-0314, the format's default; --baseline MODEL names another" in result.stderr
    records = exported(cli)
    assert {r["response_length_chars"] for r in records} == {None}
    assert not any(set(STYLE) & set(r) for r in records)
    assert {r["model_id"] for r in records} == {"gpt-4-0314", "claude-3-opus-20240229", "llama-3-70b-instruct"}


def test_baseline_judge_and_bench_options_name_what_v01_lines_do_not(tmp_path):
    cli = Cli(tmp_path / "council.db")
    judgments = write_jsonl(tmp_path / "judged.jsonl", [
        {"question_id": 7, "model": "m", "games": [{"score": "A>B"}, {"score": "B>>A"}]}])
    result = cli("import", "--from", "arena-hard", "--baseline", "base", "--judge", "j", "--bench", "ah",
                 str(judgments))
    assert result.exit_code == 0, result.output
    assert "gpt-4-0314" not in result.stderr
    scores = {(r["session_id"], r["reviewer_id"], r["model_id"], r["position"]): r["score_value"]
              for r in exported(cli)}
    assert scores == {("ah/7/m", "j", "base", 0): 0.75, ("ah/7/m", "j", "m", 1): 0.25,
                      ("ah/7/m", "j", "m", 0): 0.0, ("ah/7/m", "j", "base", 1): 1.0}


BAD = {
    "an unknown verdict": ({"games": [{"score": "A>>>B"}, {"score": "A=B"}]}, "games[0].score: a string of 5 "
                           'characters that is no verdict; expected "A>>B", "A>B", "A=B", "B>A" or "B>>A"'),
    "no question id": ({"question_id": ...}, "uid: missing; expected the question's id as uid (v2) or question_id"),
    "no judge anywhere": ({"judge": ...}, "judge: missing, and the file is not in model_judgment/<judge>/; give "
                          "--judge NAME"),
    "the baseline judged": ({"model": "gpt-4-0314"}, "model: is the baseline"),
    "three games": ({"games": [{"score": "A>B"}] * 3}, "games: not `array` of length <= 2"),
    "a score that is a number": ({"games": [{"score": 7}, None]}, "games: got a int"),
    "another baseline than --baseline": ({"baseline": "other"}, "baseline: names another model than --baseline"),
}


@both_backends
def test_a_bad_line_is_rejected_naming_its_field_and_the_good_lines_are_kept(db, tmp_path):
    good = {"question_id": "q1", "model": "m", "judge": "j", "games": [{"score": "A>B"}, {"score": "B>A"}]}
    bad = [{k: v for k, v in {**good, "question_id": f"q{n + 2}", **change}.items() if v is not ...}
           for n, (change, _) in enumerate(BAD.values())]
    path = write_jsonl(tmp_path / "judged.jsonl", [good, *bad, "not json"])
    summary = import_files(db, [str(path)], options=FormatOptions("arena-hard", baseline="gpt-4-0314"))
    assert summary.total("inserted") == 4
    reasons = {bad.line_number: bad.reason for bad in summary.files[0].rejected_lines}
    for number, (case, (_, says)) in enumerate(BAD.items(), start=2):
        assert reasons[number].startswith(says), (case, reasons[number])
    assert reasons[len(BAD) + 2].startswith("not valid JSON")
    assert scalar(db, "SELECT COUNT(*) FROM rejected_lines") == len(BAD) + 1


def test_an_answer_file_without_the_answer_stops_the_import_naming_file_line_and_layout(tmp_path):
    answers = tmp_path / "model_answer"
    answers.mkdir()
    write_jsonl(answers / "m.jsonl", [{"uid": "u1", "model": "m", "messages": [{"role": "user", "content": "q"}]}])
    judged = write_jsonl(tmp_path / "judged.jsonl", [{"uid": "u1", "model": "m", "judge": "j",
                                                      "games": [{"score": "A>B"}, None]}])
    result = Cli(tmp_path / "council.db")("import", "--from", "arena-hard", "--answers", str(answers), str(judged))
    assert result.exit_code == 1 and isinstance(result.exception, CouncilDbError)  # one line on stderr, no traceback
    assert str(result.exception).endswith("m.jsonl line 1: no messages.-1.content.answer; expected arena-hard-auto's "
                                          "v2 answer format (the last of messages holds content.answer)")
