"""The answers a judge saw (``import --answers DIR``), for their lengths, and the questions'
categories. Judge logs name answers but carry their text only inside the judge's prompt;
the answer files are where a length comes from.

Two layouts, both FastChat's: llm_judge's ``model_answer/<model>.jsonl`` (question_id,
choices[0].turns, one text per turn; the model is the file's name, as llm_judge's own
``load_model_answers`` takes it) and the Vicuna-80 tables' ``answer/answer_<name>.jsonl``
(answer_id, model_id, question_id, text). A ``question.jsonl`` beside DIR gives categories.
Answer files are read whole, once per file imported (they may change between imports): they
hold one answer per model and question, far smaller than the judgments, which are streamed.
So each must be a regular file (a FIFO or a device is never opened for reading) of at most
MAX_FILE_BYTES, and a line that cannot be read is one error naming the file, the line and
the field, before anything is stored. A turn's text that is not a string is an unknown length.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from council_db.contract.fields import METADATA_VALUE_MAX_CHARS
from council_db.contract.storable import unstorable
from council_db.errors import CouncilDbError
from council_db.text_values import printable_path

# MT-bench's answer files hold ~300 KB each; a file far larger is not one, and is not read
# into memory whole (a link to /dev/zero is refused before that: it is no regular file).
MAX_FILE_BYTES = 64 * 1024 * 1024
NAME_CHARS = 500  # a model's name, as a record's (contract.record.Name)
BOM = b"\xef\xbb\xbf"
FIX = "--answers DIR must hold FastChat's answer files"
_NOT_JSON = {json.JSONDecodeError: "broken JSON", UnicodeDecodeError: "bytes that are not UTF-8",
             RecursionError: "nested too deeply", ValueError: "a number of more than 4,300 digits"}


@dataclass(frozen=True)
class Answer:
    model: str
    chars: int | None  # None: the answer's text is not a string, so its length is unknown


def _read(path: Path) -> bytes:
    """The file's bytes. It is opened without blocking and must be a regular file before
    anything is read: a FIFO named *.jsonl would block the import forever."""
    shown = printable_path(str(path))
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise CouncilDbError(f"{shown}: cannot open it ({error.strerror}); {FIX}") from None
    with os.fdopen(descriptor, "rb") as handle:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise CouncilDbError(f"{shown}: not a regular file (a FIFO, a device or a directory); {FIX}")
        data = b"" if found.st_size > MAX_FILE_BYTES else handle.read(MAX_FILE_BYTES + 1)  # it may grow meanwhile
    if found.st_size > MAX_FILE_BYTES or len(data) > MAX_FILE_BYTES:
        raise CouncilDbError(f"{shown}: over {MAX_FILE_BYTES >> 20} MiB, far more than an answer file holds; {FIX}")
    return data


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(_read(path).removeprefix(BOM).split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except (ValueError, RecursionError) as error:  # ValueError: a number json will not convert
            why = next(words for kind, words in _NOT_JSON.items() if isinstance(error, kind))
            raise CouncilDbError(f"{_where(path, number)}: not valid JSON ({why}); {FIX}") from None


def _where(path: Path, number: int) -> str:
    return f"{printable_path(str(path))} line {number}"


def check_directory(directory: Path) -> None:
    """Refuse an --answers that is not a directory, before anything is read or written."""
    if not directory.is_dir():
        raise CouncilDbError(f"--answers {printable_path(str(directory))}: no such directory (give the folder of "
                             "FastChat's answer files, e.g. data/mt_bench/model_answer)")


def answer_files(directory: Path, pattern: str) -> list[Path]:
    check_directory(directory)
    found = sorted(directory.glob(pattern))
    if not found:
        raise CouncilDbError(f"--answers {printable_path(str(directory))}: no {pattern} files in it")
    return found


def answer_field(path: Path, number: int, line: Any, *keys: Any, layout: str = "FastChat's answer format") -> Any:
    """The value at ``keys`` in an answer line; an error naming the file, line and field, and
    the ``layout`` the line should have, when it has none."""
    value: Any = line
    try:
        for key in keys:
            value = value[key]
    except (KeyError, IndexError, TypeError):
        raise CouncilDbError(f"{_where(path, number)}: no {'.'.join(map(str, keys))}; expected {layout}") from None
    return value


def answer_id(path: Path, number: int, line: Any, key: str) -> str:
    """A question or answer id as text (as judgments give it, a number or a string)."""
    value = answer_field(path, number, line, key)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise CouncilDbError(f"{_where(path, number)}: {key} is a {type(value).__name__}; expected a number or a "
                             "string, as in FastChat's answer format")
    return str(value)


def model_name(path: Path, number: int, key: str, value: Any) -> str:
    """A model's name a record will store: a string of 1 to NAME_CHARS characters."""
    if not isinstance(value, str) or not 0 < len(value) <= NAME_CHARS:
        got = f"a string of {len(value):,} characters" if isinstance(value, str) else f"a {type(value).__name__}"
        raise CouncilDbError(f"{_where(path, number)}: {key} is {got}; expected a name of 1-{NAME_CHARS} characters")
    return _storable(path, number, key, value)


def _storable(path: Path, number: int, key: str, value: str) -> str:
    """Text a record will store, refused here when no database can (contract.storable), so
    the error names the answer file's line rather than every judgment that uses it."""
    problem = unstorable(value)
    if problem is not None:
        raise CouncilDbError(f"{_where(path, number)}: {key} {problem}")
    return value


def turn_texts(directory: Path) -> dict[tuple[str, str], tuple[str | None, ...]]:
    """(model, question id as text) -> the answer's text per turn (None where a turn is not a
    string), from model_answer/*.jsonl."""
    texts = {}
    for path in answer_files(directory, "*.jsonl"):
        for number, line in json_lines(path):
            turns = answer_field(path, number, line, "choices", 0, "turns")
            if not isinstance(turns, list):
                raise CouncilDbError(f"{_where(path, number)}: choices.0.turns is a {type(turns).__name__}; expected "
                                     "the list of the answer's turns, as in FastChat's answer format")
            texts[(path.stem, answer_id(path, number, line, "question_id"))] = tuple(
                turn if isinstance(turn, str) else None for turn in turns)
    return texts


def answers_by_id(directory: Path) -> dict[str, Answer]:
    """answer_id -> the model that wrote it and its length (unknown when its text is not a
    string), from answer/answer_*.jsonl."""
    answers = {}
    for path in answer_files(directory, "*.jsonl"):
        for number, line in json_lines(path):
            text = answer_field(path, number, line, "text")
            model = model_name(path, number, "model_id", answer_field(path, number, line, "model_id"))
            length = len(text) if isinstance(text, str) else None
            answers[answer_id(path, number, line, "answer_id")] = Answer(model, length)
    return answers


def categories(directory: Path | None) -> dict[str, str]:
    """question id as text -> category (its first METADATA_VALUE_MAX_CHARS characters), from
    the question.jsonl beside the answers' folder; a line without both is passed over."""
    path = None if directory is None else directory.parent / "question.jsonl"
    if path is None or not path.is_file():
        return {}
    found = {}
    for number, line in json_lines(path):
        if isinstance(line, dict) and isinstance(line.get("category"), str) and "question_id" in line:
            category = _storable(path, number, "category", line["category"][:METADATA_VALUE_MAX_CHARS])
            found[answer_id(path, number, line, "question_id")] = category
    return found


def metadata(found: dict[str, str], question: int | str) -> dict[str, str] | None:
    """A record's query_metadata: the question's category when known (never its text)."""
    category = found.get(str(question))
    return None if category is None else {"category": category}
