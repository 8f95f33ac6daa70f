"""A bad ``--answers`` folder is one error naming the file, the line and the field, before
anything is stored; a FIFO or a device in it is never opened for reading, and no file is read
past a bound; a turn's text that is not a string is an unknown length (issue 27, item 13).
These used to be tracebacks, an import blocked forever on a FIFO, one reading /dev/zero until
memory ran out, and a length of 0."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from council_db.errors import CouncilDbError
from council_db.ingest.formats import answers
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import scalar

GRADING = {"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "user_prompt": "[[ANSWER]] abc",
           "judgment": "j", "score": 7, "turn": 1, "tstamp": 1.7e9}
REVIEW = {"review_id": "r1", "question_id": 1, "answer1_id": "a1", "answer2_id": "a2", "reviewer_id": 1,
          "metadata": {}, "text": "t", "score": [7, 8]}


@pytest.fixture
def deadline():
    """A read that blocks fails the test instead of hanging it."""
    def blocked(*_):
        raise TimeoutError("the import blocked")

    signal.signal(signal.SIGALRM, blocked)
    signal.alarm(20)
    yield
    signal.alarm(0)


def model_answers(folder: Path, *lines: bytes, question: bytes | None = None) -> Path:
    """model_answer/m.jsonl holding ``lines``, and question.jsonl beside it when given."""
    (folder / "model_answer").mkdir(parents=True)
    (folder / "model_answer" / "m.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    if question is not None:
        (folder / "question.jsonl").write_bytes(question + b"\n")
    return folder / "model_answer"


def vicuna_answers(folder: Path, *lines: bytes) -> Path:
    (folder / "answer").mkdir(parents=True)
    (folder / "answer" / "answer_x.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    return folder / "answer"


def answer(turns: bytes = b'["abc"]', question_id: bytes = b"81") -> bytes:
    return b'{"question_id": ' + question_id + b', "answer_id": "x", "model_id": "m", "choices": [{"index": 0, ' \
           b'"turns": ' + turns + b"}]}"


def imported(db, tmp_path: Path, format: str, line: dict, folder: Path):
    source = tmp_path / "judgments.jsonl"
    source.write_text(json.dumps(line) + "\n")
    return import_files(db, [str(source)], options=FormatOptions(format, answers=folder)).files[0]


BAD = {
    "turns a number": (lambda folder: model_answers(folder, answer(turns=b"5")), "fastchat-single",
                       "m.jsonl line 1: choices.0.turns is a int; expected the list of the answer's turns"),
    "a 5,000-digit question_id": (lambda folder: model_answers(folder, answer(question_id=b"9" * 5_000)),
                                  "fastchat-single", "m.jsonl line 1: not valid JSON (a number of more than 4,300"),
    "deep nesting": (lambda folder: model_answers(folder, answer(turns=b"[" * 100_000 + b"]" * 100_000)),
                     "fastchat-single", "m.jsonl line 1: not valid JSON (nested too deeply)"),
    "a question_id that is a list": (lambda folder: model_answers(folder, answer(question_id=b"[1]")),
                                     "fastchat-single", "m.jsonl line 1: question_id is a list; expected a number"),
    "a lone surrogate in a category": (
        lambda folder: model_answers(folder, answer(), question=b'{"question_id": 81, "category": "w\\ud800"}'),
        "fastchat-single", "question.jsonl line 1: category contains a lone surrogate"),
    "a lone surrogate in model_id": (
        lambda folder: vicuna_answers(folder, b'{"answer_id": "a1", "model_id": "m\\udc00", "question_id": 1, '
                                              b'"text": "abc"}'),
        "fastchat-review", "answer_x.jsonl line 1: model_id contains a lone surrogate"),
    "a NUL in model_id": (
        lambda folder: vicuna_answers(folder, b'{"answer_id": "a1", "model_id": "m\\u0000", "question_id": 1, '
                                              b'"text": "abc"}'),
        "fastchat-review", "answer_x.jsonl line 1: model_id contains a NUL character"),
    "a model_id of 600 characters": (
        lambda folder: vicuna_answers(folder, json.dumps({"answer_id": "a1", "model_id": "m" * 600, "question_id": 1,
                                                          "text": "abc"}).encode()),
        "fastchat-review", "answer_x.jsonl line 1: model_id is a string of 600 characters; expected a name of 1-500"),
    "bytes that are not UTF-8": (lambda folder: model_answers(folder, answer(turns=b'["\xff"]')),
                                 "fastchat-single", "m.jsonl line 1: not valid JSON (bytes that are not UTF-8)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_answer_file_is_one_error_naming_file_line_and_field_and_nothing_is_stored(db, tmp_path, case):
    make, format, says = BAD[case]
    folder = make(tmp_path)
    with pytest.raises(CouncilDbError) as refused:
        imported(db, tmp_path, format, GRADING if format == "fastchat-single" else REVIEW, folder)
    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert scalar(db, "SELECT COUNT(*) FROM imports") == 0


def test_a_fifo_in_the_folder_is_refused_without_waiting_for_a_writer(db, tmp_path, deadline):
    folder = model_answers(tmp_path, answer())
    os.mkfifo(folder / "waiting.jsonl")
    with pytest.raises(CouncilDbError, match="waiting.jsonl: not a regular file"):
        imported(db, tmp_path, "fastchat-single", GRADING, folder)


def test_a_link_to_a_device_is_refused_before_anything_is_read(db, tmp_path, deadline):
    folder = model_answers(tmp_path, answer())
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    with pytest.raises(CouncilDbError, match="zero.jsonl: not a regular file"):
        imported(db, tmp_path, "fastchat-single", GRADING, folder)


def test_a_file_past_the_bound_is_refused_unread(db, tmp_path, monkeypatch):
    monkeypatch.setattr(answers, "MAX_FILE_BYTES", 1_000)
    folder = model_answers(tmp_path, answer(turns=json.dumps(["x" * 2_000]).encode()))
    with pytest.raises(CouncilDbError, match="m.jsonl: over 0 MiB, far more than an answer file holds"):
        imported(db, tmp_path, "fastchat-single", GRADING, folder)


def test_a_turn_or_text_that_is_no_string_is_an_unknown_length_not_zero(db, tmp_path):
    single = imported(db, tmp_path, "fastchat-single", GRADING, model_answers(tmp_path / "a", answer(turns=b"[5]")))
    review = imported(db, tmp_path, "fastchat-review", REVIEW, vicuna_answers(
        tmp_path / "b", b'{"answer_id": "a1", "model_id": "m", "question_id": 1, "text": 5}',
        b'{"answer_id": "a2", "model_id": "n", "question_id": 1, "text": "abcd"}'))
    assert (single.inserted, single.unknown_length) == (1, 1)
    assert (review.inserted, review.unknown_length) == (2, 1)
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE response_length_chars = 0") == 0


@pytest.mark.parametrize("option, value, says", [
    ("judge", "j" * 501, "--judge has 501 characters; give a name of 1-500"),
    ("judge", "gpt\x00", "--judge contains a NUL character"),
    ("bench", "b" * 101, "--bench has 101 characters; give a name of 1-100"),
    ("bench", "mt\udcffbench", "--bench contains a lone surrogate"),
])
def test_a_judge_or_bench_no_record_can_store_is_refused_before_anything_is_read(option, value, says):
    format = "fastchat-review" if option == "judge" else "fastchat-single"
    with pytest.raises(CouncilDbError, match=says):
        FormatOptions(format, answers=Path(".") if option == "judge" else None, **{option: value}).check()
