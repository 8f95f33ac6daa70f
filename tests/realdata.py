"""Public LLM-judge data (tests/data/realdata, as published; provenance and licences in its
README) as llm-council bias records.

A test helper until the import adapters of issue 18 exist: small functions that turn the files
as published into the 13-field records council-db imports, so that tests can prove the report
on real judge data (tied timestamps, a discrete 1-10 scale, constant sessions, repeats).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

REALDATA = Path(__file__).parent / "data" / "realdata"  # in the repository, so CI proves it too
MT_BENCH = REALDATA / "mt-bench-orpo"
FASTCHAT = REALDATA / "fastchat-vicuna80"
NO_RATING = -1  # llm_judge's score when it could not parse a rating from the judgment
FASTCHAT_RUN_TIME = "2023-05-04T00:00:00+00:00"  # the tables carry no time: one instant per run
FASTCHAT_JUDGES = {"gpt-3.5-turbo_review_vicuna-13b-20230322-new-hp-fp16": "gpt-3.5-turbo",
                   "others": "unknown-judge"}  # every other run was judged by GPT-4 (README)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def bias_record(session_id: str, timestamp: str, reviewer: str, model: str, position: int, length: int,
                score: float, schema_version: str, category: str | None) -> dict[str, Any]:
    """One llm-council bias_metrics line, every one of its 13 fields given."""
    return {
        "schema_version": schema_version, "session_id": session_id, "timestamp": timestamp,
        "consent_level": 1, "reviewer_id": reviewer, "model_id": model, "position": position,
        "response_length_chars": length, "score_value": float(score), "score_scale": "1-10",
        "council_config_version": None, "query_hash": None,
        "query_metadata": {"category": category} if category else None,
    }


def iso_utc(unix_seconds: float) -> str:
    return datetime.fromtimestamp(unix_seconds, tz=timezone.utc).isoformat()


# --- MT-bench single grading -------------------------------------------------------------------

def mt_bench_judgments(root: Path = MT_BENCH) -> list[dict[str, Any]]:
    """gpt-4_single.jsonl as published, every line (including the -1 "no rating" ones)."""
    return list(read_jsonl(root / "model_judgment" / "gpt-4_single.jsonl"))


def mt_bench_answer_lengths(root: Path = MT_BENCH) -> dict[tuple[str, int, int], int]:
    """(model, question_id, turn) -> characters of the answer the judge graded."""
    lengths = {}
    for path in sorted((root / "model_answer").glob("*.jsonl")):
        for answer in read_jsonl(path):
            for turn, text in enumerate(answer["choices"][0]["turns"], start=1):
                lengths[(path.stem, answer["question_id"], turn)] = len(text)
    return lengths


def latest_grading(judgments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One grading per answer (question, turn, model): the latest, where the file has two."""
    latest: dict[tuple, dict[str, Any]] = {}
    for j in sorted(judgments, key=lambda j: j["tstamp"]):
        latest[(j["question_id"], j["turn"], j["model"])] = j
    return list(latest.values())


def mt_bench_records(root: Path = MT_BENCH, repeats: bool = True) -> tuple[list[dict[str, Any]], int]:
    """Records of the MT-bench single grading, and how many lines had no rating (skipped).

    A session is one question's turn; the judge grades each answer alone, so nothing is shown
    side by side: schema 1.0.0, whose position is not a display slot. Position numbers the
    judgments within the session in time order, which keeps a repeated grading of the same
    answer (the published file grades one model twice) as its own record instead of a
    duplicate of the first. ``repeats=False`` keeps only the latest grading of each answer."""
    categories = {q["question_id"]: q["category"] for q in read_jsonl(root / "question.jsonl")}
    lengths = mt_bench_answer_lengths(root)
    judgments = mt_bench_judgments(root)
    rated = [j for j in judgments if j["score"] != NO_RATING]
    in_order = sorted(rated if repeats else latest_grading(rated),
                      key=lambda j: (j["question_id"], j["turn"], j["tstamp"]))
    records, slot = [], {}
    for j in in_order:
        session = (j["question_id"], j["turn"])
        slot[session] = slot.get(session, -1) + 1
        records.append(bias_record(
            f"mt-bench-q{j['question_id']}-t{j['turn']}", iso_utc(j["tstamp"]), j["judge"][0], j["model"],
            slot[session], lengths[(j["model"], j["question_id"], j["turn"])], j["score"], "1.0.0",
            categories[j["question_id"]]))
    return records, len(judgments) - len(rated)


# --- FastChat Vicuna-80 review tables ----------------------------------------------------------

def fastchat_answers(root: Path = FASTCHAT) -> dict[str, dict[str, Any]]:
    """answer_id -> the answer (model_id, question_id, text)."""
    return {answer["answer_id"]: answer
            for path in sorted((root / "answer").glob("answer_*.jsonl")) for answer in read_jsonl(path)}


def fastchat_reviews(run: str, root: Path = FASTCHAT) -> list[dict[str, Any]]:
    """Every review of one run (one directory of review/), as published."""
    return [review for path in sorted((root / "review" / run).glob("*.jsonl")) for review in read_jsonl(path)]


def fastchat_records(run: str, root: Path = FASTCHAT) -> tuple[list[dict[str, Any]], int]:
    """Two records per review: Assistant 1 (shown first) at slot 0, Assistant 2 at slot 1; and
    how many reviews had no rating ([-1, -1], FastChat's mark for a review it could not parse).

    A session is one review (run, question, pair of answers). The tables carry no time, so the
    whole run gets one timestamp: every session of it is at the same instant."""
    categories = {q["question_id"]: q["category"] for q in read_jsonl(root / "question.jsonl")}
    answers = fastchat_answers(root)
    judge = FASTCHAT_JUDGES.get(run, "gpt-4")
    records, no_rating = [], 0
    for review in fastchat_reviews(run, root):
        if NO_RATING in review["score"]:
            no_rating += 1
            continue
        shown = [answers[review["answer1_id"]], answers[review["answer2_id"]]]
        session = f"{run}/q{review['question_id']}/{shown[0]['model_id']}-vs-{shown[1]['model_id']}"
        for slot, (answer, score) in enumerate(zip(shown, review["score"])):
            records.append(bias_record(session, FASTCHAT_RUN_TIME, judge, answer["model_id"], slot,
                                       len(answer["text"]), score, "1.2.0",
                                       categories[review["question_id"]]))
    return records, no_rating
