"""The answers a judge saw (``import --answers DIR``), for their lengths, and the questions'
categories. Judge logs name answers but carry their text only inside the judge's prompt;
the answer files are where a length comes from.

Two layouts, both FastChat's: llm_judge's ``model_answer/<model>.jsonl`` (question_id,
choices[0].turns, one text per turn; the model is the file's name, as llm_judge's own
``load_model_answers`` takes it) and the Vicuna-80 tables' ``answer/answer_<name>.jsonl``
(answer_id, model_id, question_id, text). A ``question.jsonl`` beside DIR gives categories.
Answer files are read whole, once per file imported (they may change between imports): they
hold one answer per model and question, far smaller than the judgments, which are streamed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from council_db.errors import CouncilDbError
from council_db.text_values import printable_path


@dataclass(frozen=True)
class Answer:
    model: str
    chars: int


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with path.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, json.loads(line)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CouncilDbError(f"{printable_path(str(path))}: cannot read it as JSON lines ({type(error).__name__}); "
                             "--answers DIR must hold FastChat's answer files") from None


def check_directory(directory: Path) -> None:
    """Refuse an --answers that is not a directory, before anything is read or written."""
    if not directory.is_dir():
        raise CouncilDbError(f"--answers {printable_path(str(directory))}: no such directory (give the folder of "
                             "FastChat's answer files, e.g. data/mt_bench/model_answer)")


def _files(directory: Path, pattern: str) -> list[Path]:
    check_directory(directory)
    found = sorted(directory.glob(pattern))
    if not found:
        raise CouncilDbError(f"--answers {printable_path(str(directory))}: no {pattern} files in it")
    return found


def _field(path: Path, number: int, line: dict[str, Any], *keys: Any) -> Any:
    value: Any = line
    try:
        for key in keys:
            value = value[key]
    except (KeyError, IndexError, TypeError):
        raise CouncilDbError(f"{printable_path(str(path))} line {number}: no {'.'.join(map(str, keys))}; expected "
                             "FastChat's answer format") from None
    return value


def turn_texts(directory: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """(model, question id as text) -> the answer's text per turn, from model_answer/*.jsonl."""
    texts = {}
    for path in _files(directory, "*.jsonl"):
        for number, line in _lines(path):
            turns = _field(path, number, line, "choices", 0, "turns")
            question = _field(path, number, line, "question_id")
            texts[(path.stem, str(question))] = tuple(turn if isinstance(turn, str) else "" for turn in turns)
    return texts


def answers_by_id(directory: Path) -> dict[str, Answer]:
    """answer_id -> the model that wrote it and its length, from answer/answer_*.jsonl."""
    answers = {}
    for path in _files(directory, "*.jsonl"):
        for number, line in _lines(path):
            text = _field(path, number, line, "text")
            answers[str(_field(path, number, line, "answer_id"))] = Answer(
                str(_field(path, number, line, "model_id")), len(text) if isinstance(text, str) else 0)
    return answers


def categories(directory: Path | None) -> dict[str, str]:
    """question id as text -> category, from the question.jsonl beside the answers' folder."""
    path = None if directory is None else directory.parent / "question.jsonl"
    if path is None or not path.is_file():
        return {}
    return {str(line["question_id"]): line["category"] for _, line in _lines(path)
            if isinstance(line, dict) and "question_id" in line and isinstance(line.get("category"), str)}


def metadata(found: dict[str, str], question: int | str) -> dict[str, str] | None:
    """A record's query_metadata: the question's category when known (never its text)."""
    category = found.get(str(question))
    return None if category is None else {"category": category[:100]}
