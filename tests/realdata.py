"""Public LLM-judge data (tests/data/realdata, as published; provenance and licences in its
README): where the files are, how council-db imports them (``import --from``, the adapters of
issue 18), and plain readings of the files for tests to derive expected figures from.

Tests prove the report on real judge data (tied or missing times, a discrete 1-10 scale,
constant sessions, repeated gradings) through the same import a user runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

REALDATA = Path(__file__).parent / "data" / "realdata"  # in the repository, so CI proves it too
MT_BENCH = REALDATA / "mt-bench-orpo"
MT_BENCH_JUDGMENTS = MT_BENCH / "model_judgment" / "gpt-4_single.jsonl"
MT_BENCH_ANSWERS = MT_BENCH / "model_answer"
FASTCHAT = REALDATA / "fastchat-vicuna80"
FASTCHAT_ANSWERS = FASTCHAT / "answer"
NO_RATING = -1  # llm_judge's score when it could not parse a rating from the judgment


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)
    return path


# --- MT-bench single grading -------------------------------------------------------------------

def mt_bench_import(path: Path = MT_BENCH_JUDGMENTS) -> list[str]:
    """``council-db import`` arguments for MT-bench single grading, with the answers' lengths."""
    return ["import", "--from", "fastchat-single", str(path), "--answers", str(MT_BENCH_ANSWERS)]


def mt_bench_judgments(root: Path = MT_BENCH) -> list[dict[str, Any]]:
    """gpt-4_single.jsonl as published, every line (including the -1 "no rating" ones)."""
    return list(read_jsonl(root / "model_judgment" / "gpt-4_single.jsonl"))


def mt_bench_answer_texts(root: Path = MT_BENCH) -> dict[tuple[str, int, int], str]:
    """(model, question_id, turn) -> the answer in model_answer/ (the model is the file's name)."""
    texts = {}
    for path in sorted((root / "model_answer").glob("*.jsonl")):
        for answer in read_jsonl(path):
            for turn, text in enumerate(answer["choices"][0]["turns"], start=1):
                texts[(path.stem, answer["question_id"], turn)] = text
    return texts


def graded_length(judgment: dict[str, Any], texts: dict[tuple[str, int, int], str]) -> int | None:
    """Characters of the answer the judge graded, when model_answer/ holds it (its text is in
    the judge's prompt); None otherwise: mistral-orpo was graded first on answers since replaced."""
    text = texts.get((judgment["model"], judgment["question_id"], judgment["turn"]))
    return len(text) if text is not None and text in judgment["user_prompt"] else None


def latest_grading(judgments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One grading per answer (question, turn, model): the latest, where the file has two."""
    latest: dict[tuple, dict[str, Any]] = {}
    for j in sorted(judgments, key=lambda j: j["tstamp"]):
        latest[(j["question_id"], j["turn"], j["model"])] = j
    return sorted(latest.values(), key=lambda j: j["tstamp"])


# --- FastChat Vicuna-80 review tables ----------------------------------------------------------

def fastchat_tables(run: str, root: Path = FASTCHAT) -> list[Path]:
    """The review tables of one run (one directory of review/), in name order."""
    return sorted((root / "review" / run).glob("*.jsonl"))


def fastchat_import(*runs: str) -> list[str]:
    """``council-db import`` arguments for these runs' review tables and their answers."""
    return ["import", "--from", "fastchat-review", "--answers", str(FASTCHAT_ANSWERS),
            *(str(path) for run in runs for path in fastchat_tables(run))]


def fastchat_answers(root: Path = FASTCHAT) -> dict[str, dict[str, Any]]:
    """answer_id -> the answer (model_id, question_id, text)."""
    return {answer["answer_id"]: answer
            for path in sorted((root / "answer").glob("answer_*.jsonl")) for answer in read_jsonl(path)}


def fastchat_reviews(run: str, root: Path = FASTCHAT) -> list[dict[str, Any]]:
    """Every review of one run (one directory of review/), as published."""
    return [review for path in fastchat_tables(run, root) for review in read_jsonl(path)]
