"""council-db import --from fastchat-review on FastChat's published Vicuna-80 review tables
(tests/data/realdata/fastchat-vicuna80). Expected figures are read here from the tables with
plain Python, and the totals are those the Vicuna blog published (GPT-4 as judge)."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from tests import realdata
from tests.conftest import Cli, both_backends, scalar, write_jsonl

ANSWERS = realdata.FASTCHAT / "answer"
GPT4_RUN = "vicuna-13b-20230322-clean-lang"
GPT35_RUN = "gpt-3.5-turbo_review_vicuna-13b-20230322-new-hp-fp16"
# GPT-4's total over the 80 questions, each model against Vicuna-13B (lmsys.org/blog/2023-03-30-vicuna)
BLOG_TOTALS = {"llama-13b": (513.0, 694.0), "alpaca-13b": (583.0, 704.0), "bard": (664.0, 655.5),
               "gpt35": (693.0, 638.0)}
TOTALS_SQL = """
SELECT shown_first.name AS opponent, candidate.name AS model, SUM(s.score_value) AS total
FROM scores AS s
JOIN models AS candidate ON candidate.id = s.model_id
JOIN scores AS first ON first.session_id = s.session_id AND first.position = 0
JOIN models AS shown_first ON shown_first.id = first.model_id
GROUP BY shown_first.name, candidate.name
"""


def tables(run: str) -> list:
    return sorted((realdata.FASTCHAT / "review" / run).glob("*.jsonl"))


def imported(cli: Cli, *paths, extra: tuple[str, ...] = ()) -> dict:
    result = cli("import", "--from", "fastchat-review", *map(str, paths), "--answers", str(ANSWERS), *extra,
                 "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@both_backends
def test_gpt4s_totals_per_model_are_the_published_ones_in_the_store(cli, db):
    imported(cli, *tables(GPT4_RUN))
    answers = realdata.fastchat_answers()
    raw, per_table = {}, {}  # (model shown first, model) -> total; table -> (its model's, vicuna's)
    for path in tables(GPT4_RUN):
        reviews = list(realdata.read_jsonl(path))
        first, second = (answers[reviews[0][key]]["model_id"] for key in ("answer1_id", "answer2_id"))
        assert {(answers[r["answer1_id"]]["model_id"], answers[r["answer2_id"]]["model_id"]) for r in reviews} == {
            (first, second)}
        totals = (sum(r["score"][0] for r in reviews), sum(r["score"][1] for r in reviews))
        raw[(first, first)], raw[(first, second)] = totals
        per_table[path.stem.removeprefix("review_").split("_vicuna")[0]] = totals
    assert per_table == BLOG_TOTALS
    stored = json.loads(Cli(cli.db)("sql", TOTALS_SQL, "--format", "json").stdout)
    assert {(r["opponent"], r["model"]): r["total"] for r in stored} == pytest.approx(raw)
    assert scalar(db, "SELECT COUNT(*) FROM sessions") == 320
    assert scalar(db, "SELECT COUNT(*) FROM sessions WHERE ts_us IS NULL") == 320, "the tables carry no time"


def test_the_judge_is_named_by_the_file_or_by_judge(tmp_path):
    cli = Cli(tmp_path / "council.db")
    imported(cli, tables(GPT35_RUN)[0], tables(GPT4_RUN)[0])
    imported(cli, *(realdata.FASTCHAT / "review" / "others").glob("*.jsonl"), extra=("--judge", "unknown-judge"))
    rows = json.loads(cli("sql", "SELECT m.name AS judge, COUNT(*) AS n FROM scores s JOIN models m "
                                 "ON m.id = s.reviewer_id GROUP BY m.name", "--format", "json").stdout)
    assert {r["judge"]: r["n"] for r in rows} == {"gpt-3.5-turbo": 160, "gpt-4": 160, "unknown-judge": 160}


def test_assistant_1_is_slot_0_with_its_answers_length_and_no_rating_is_kept_unscored(tmp_path):
    cli = Cli(tmp_path / "council.db")
    summary = imported(cli, *tables(GPT35_RUN))
    answers = realdata.fastchat_answers()
    reviews = realdata.fastchat_reviews(GPT35_RUN)
    no_rating = sum(r["score"].count(realdata.NO_RATING) for r in reviews)
    assert (summary["inserted"], summary["excluded"]) == (2 * len(reviews), no_rating) == (800, 4)
    shown = [(answers[r[f"answer{slot + 1}_id"]], slot, r["score"][slot]) for r in reviews for slot in (0, 1)]
    expected = sorted((answer["model_id"], slot, len(answer["text"]), 0.0 if score == realdata.NO_RATING else score)
                      for answer, slot, score in shown)
    rows = json.loads(cli("sql", "SELECT m.name AS model, s.position AS slot, s.response_length_chars AS n, "
                                 "s.score_value AS score FROM scores s JOIN models m ON m.id = s.model_id",
                          "--format", "json").stdout)
    assert sorted((r["model"], r["slot"], r["n"], r["score"]) for r in rows) == expected


def test_review_tables_need_their_answers_and_a_review_of_an_unknown_answer_is_rejected(tmp_path):
    cli = Cli(tmp_path / "council.db")
    result = cli("import", "--from", "fastchat-review", str(tables(GPT4_RUN)[0]))
    assert result.exit_code == 2 and "needs --answers DIR" in result.output
    first = next(realdata.read_jsonl(tables(GPT4_RUN)[0]))
    path = write_jsonl(tmp_path / "review.jsonl", [first, {**first, "review_id": "x", "answer2_id": "nowhere"},
                                                   {**first, "review_id": "y", "score": [9]}])
    result = cli("import", "--from", "fastchat-review", str(path), "--answers", str(ANSWERS))
    assert result.exit_code == 3
    assert "line 2: answer2_id: names no answer in the --answers folder" in result.stderr
    assert "line 3: score: not `array` of length >= 2" in result.stderr
    again = imported(cli, path, extra=())
    assert (again["inserted"], again["files"][0]["lines"]) == (0, 0)


def test_a_review_of_one_answer_shown_twice_is_one_model_in_both_slots(tmp_path):
    """FastChat's GPT-3.5 run compares vicuna-13b with itself: two records, slots 0 and 1."""
    cli = Cli(tmp_path / "council.db")
    path = next(p for p in tables(GPT35_RUN) if p.stem.endswith("fp16_vicuna-13b-20230322-new-hp-fp16"))
    imported(cli, path)
    per_session = json.loads(cli("sql", "SELECT COUNT(DISTINCT model_id) AS models, COUNT(*) AS records FROM scores "
                                        "GROUP BY session_id", "--format", "json").stdout)
    assert {(r["models"], r["records"]) for r in per_session} == {(1, 2)}
    totals = defaultdict(int)
    for review in realdata.read_jsonl(path):
        totals[review["answer1_id"] == review["answer2_id"]] += 1
    assert totals == {True: 80}
