"""Every reader (llm-council's and the three FastChat formats) takes any bytes a line holds the
same way: no exception escapes the import, the good lines are stored, and each bad one is
counted and kept in rejected_lines with a reason (issue 27, item 11). One bad byte or one line
nested a thousand deep used to abort a FastChat import and store none of its good lines.

Each example is a file of good lines of the format, lines of arbitrary bytes, and good lines
with one field (or an extra, unread one) replaced by an awkward value: bytes that are not
UTF-8, deep nesting, a NUL, a lone surrogate, too long a name, a 5,000-digit number. Every
example imports into the same database under its own session keys, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from council_db.contract.reviewer_identity import Identity
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from tests.conftest import both_backends, record
from tests.ingest.test_fuzz import AWKWARD_LITERALS, FIXED, garbage_lines

EXAMPLES = 12  # per reader and backend: each is one import (~0.1 s)
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, derandomize=FIXED,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# What used to escape a FastChat reader (UnicodeDecodeError, RecursionError) or the writer
# (a NUL or an over-long key on PostgreSQL, a lone surrogate anywhere), beside the fuzz suite's values
HOSTILE = [b'"\xed\xa0\x80"', b'"\xc0\x80"', b'"a\xffb"', b"[" * 1_100 + b"]" * 1_100,
           b'{"a":' * 1_100 + b"1" + b"}" * 1_100, b'"a\\u0000b"', b'"\\ud800"', b'"' + b"m" * 600 + b'"',
           b"9" * 5_000, b"[" * 250 + b"]" * 250]
VALUES = st.sampled_from(HOSTILE + AWKWARD_LITERALS)
EXAMPLE = itertools.count()  # each example's own session keys in the shared database
MODELS = st.sampled_from(["gpt-4", "vicuna-13b", "llama-2-70b-chat", "claude-v1", "mistral/7b ünïcode"])
TIMES = st.floats(1.6e9, 1.8e9)
PROMPT = st.text(max_size=40)


class Format:
    """A reader under test: a good line of it, the records it must store (session key,
    reviewer, model), and the options it is imported with."""

    def __init__(self, name: str, good: Callable[[int], st.SearchStrategy[dict]],
                 stored: Callable[[dict, int], set[tuple[str, str, str]]]):
        self.name, self.good, self.stored = name, good, stored


def _council(example: int) -> st.SearchStrategy[dict]:
    return st.builds(lambda session, reviewer, model, position, score: record(
        session_id=f"e{example}/{session}", reviewer_id=reviewer, model_id=model, position=position,
        score_value=score), st.integers(0, 3), MODELS, MODELS, st.integers(0, 5), st.integers(1, 10))


def _single(example: int) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({
        "question_id": st.integers(81, 160) | st.sampled_from(["q-7", "writing_3"]), "model": MODELS,
        "judge": st.just(["gpt-4", "single-v1"]), "user_prompt": PROMPT, "judgment": PROMPT,
        "score": st.integers(1, 10) | st.just(-1), "turn": st.integers(1, 2), "tstamp": TIMES})


def _pair(example: int) -> st.SearchStrategy[dict]:
    winners = st.sampled_from(["model_1", "model_2", "tie", "error"])
    return st.fixed_dictionaries({
        "question_id": st.integers(81, 160), "model_1": st.just("gpt-4"), "model_2": MODELS.filter(
            lambda name: name != "gpt-4"), "g1_winner": winners, "g2_winner": winners,
        "judge": st.just(["gpt-4", "pair-v2"]), "g1_user_prompt": PROMPT, "g1_judgment": PROMPT,
        "turn": st.integers(1, 2), "tstamp": TIMES})


ANSWERS = {"a1": "gpt-4", "a2": "vicuna-13b", "a3": "alpaca-13b"}


def _review(example: int) -> st.SearchStrategy[dict]:
    return st.builds(lambda number, first, second, scores: {
        "review_id": f"e{example}-r{number}", "question_id": number, "answer1_id": first, "answer2_id": second,
        "reviewer_id": 1, "metadata": {}, "text": "Assistant 1 is better.", "score": scores},
        st.integers(1, 80), st.sampled_from(sorted(ANSWERS)), st.sampled_from(sorted(ANSWERS)),
        st.lists(st.integers(1, 10), min_size=2, max_size=2))


def _bench(example: int) -> str:
    return f"e{example}"


def judge(line: dict) -> str:
    """The reviewer an llm_judge line names: the judge model with its prompt (judge[1])."""
    return Identity(line["judge"][0], prompt=line["judge"][1]).label


FORMATS = {
    "llm-council": Format("llm-council", _council, lambda line, example: {
        (line["session_id"], line["reviewer_id"], line["model_id"])}),
    "fastchat-single": Format("fastchat-single", _single, lambda line, example: {
        (f"{_bench(example)}/q{line['question_id']}/t{line['turn']}", judge(line), line["model"])}),
    "fastchat-pair": Format("fastchat-pair", _pair, lambda line, example: {
        (f"{_bench(example)}/q{line['question_id']}/t{line['turn']}/gpt-4/{line['model_1']}/{line['model_2']}/"
         f"{line['tstamp']!r}", judge(line), model)
        for model in (line["model_1"], line["model_2"])
        if {line["g1_winner"], line["g2_winner"]} != {"error"}}),
    "fastchat-review": Format("fastchat-review", _review, lambda line, example: {
        (f"review/{line['review_id']}", "gpt-4", ANSWERS[line[key]]) for key in ("answer1_id", "answer2_id")}),
}


def mutated(line: dict, field: str | None, value: bytes) -> bytes:
    """The good line with ``field`` replaced by ``value`` (raw bytes), or with an extra field
    holding it when ``field`` is None (a field the reader does not read)."""
    if field is None:
        return json.dumps(line).encode()[:-1] + b', "unread": ' + value + b"}"
    return json.dumps({**line, field: "__MARK__"}).encode().replace(b'"__MARK__"', value, 1)


@st.composite
def files(draw, form: Format, example: int) -> list[tuple[str, bytes, dict | None]]:
    """A good first line (so the file reads as the format), then good, garbage and mutated lines."""
    good = form.good(example)
    lines = [("good", json.dumps(first := draw(good)).encode(), first)]
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["good", "garbage", "mutated"]))
        if kind == "garbage":
            lines.append((kind, draw(garbage_lines), None))
            continue
        line = draw(good)
        if kind == "good":
            lines.append((kind, json.dumps(line).encode(), line))
        else:
            lines.append((kind, mutated(line, draw(st.sampled_from([None, *sorted(line)])), draw(VALUES)), None))
    return lines


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> Path:
    """The Vicuna-80 answer files the review lines name."""
    folder = tmp_path_factory.mktemp("table") / "answer"
    folder.mkdir()
    for answer_id, model in ANSWERS.items():
        (folder / f"answer_{model}.jsonl").write_text(json.dumps(
            {"answer_id": answer_id, "model_id": model, "question_id": 1, "text": "x" * len(model)}) + "\n")
    return folder


def options(form: Format, example: int, answers: Path) -> FormatOptions:
    if form.name == "llm-council":
        return FormatOptions()
    if form.name == "fastchat-review":
        return FormatOptions(form.name, answers=answers)
    return FormatOptions(form.name, bench=_bench(example))


def stored_keys(db) -> set[tuple[str, str, str]]:
    """(session key, reviewer, model) of every stored record."""
    with db.engine.connect() as connection:
        return set(connection.execute(text(
            "SELECT s.session_key, r.name, m.name FROM scores x JOIN sessions s ON s.id = x.session_id "
            "JOIN models r ON r.id = x.reviewer_id JOIN models m ON m.id = x.model_id")).all())


def kept_rejections(db, import_id: int) -> list[tuple[int, str]]:
    with db.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(
            "SELECT line_number, reason FROM rejected_lines WHERE import_id = :id"), {"id": import_id})]


def check_import(db, form: Format, answers: Path, example: int, lines: list[tuple[str, bytes, dict | None]],
                 crlf: bool) -> None:
    ending = b"\r\n" if crlf else b"\n"
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / f"{form.name}-{example}.jsonl"
        source.write_bytes(b"".join(line + ending for _, line, _ in lines))
        result = import_files(db, [str(source)], options=options(form, example, answers)).files[0]
    rejected = {bad.line_number for bad in result.rejected_lines}
    numbered = list(enumerate(lines, start=1))
    assert result.status == "complete" and result.lines == len(lines)
    assert {n for n, (kind, _, _) in numbered if kind == "garbage"} <= rejected
    assert not rejected & {n for n, (kind, _, _) in numbered if kind == "good"}, result.rejected_lines
    kept = kept_rejections(db, result.import_id)
    assert sorted(n for n, _ in kept) == sorted(rejected) and len(kept) == result.rejected
    assert all(reason for _, reason in kept)
    expected = set().union(*(form.stored(line, example) for kind, _, line in lines if kind == "good"))
    assert expected <= stored_keys(db)


@both_backends
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_any_bytes_in_a_line_leave_the_good_lines_stored_and_the_bad_ones_kept_with_a_reason(
        db, answers, name):
    form = FORMATS[name]

    @PROPERTY
    @given(data=st.data(), crlf=st.booleans())
    def prove(data: Any, crlf: bool) -> None:
        example = next(EXAMPLE)
        check_import(db, form, answers, example, data.draw(files(form, example)), crlf)

    prove()


# --- every hostile value in every field, on both read paths -----------------------------------

GOOD = {
    "llm-council": record(session_id="hostile/1"),
    "fastchat-single": {"question_id": 81, "model": "vicuna-13b", "judge": ["gpt-4", "single-v1"], "user_prompt": "p",
                        "judgment": "j", "score": 7, "turn": 1, "tstamp": 1.7e9},
    "fastchat-pair": {"question_id": 81, "model_1": "gpt-4", "model_2": "vicuna-13b", "g1_winner": "model_1",
                      "g2_winner": "tie", "judge": ["gpt-4", "pair-v2"], "g1_user_prompt": "p", "turn": 1,
                      "tstamp": 1.7e9},
    "fastchat-review": {"review_id": "hostile-1", "question_id": 1, "answer1_id": "a1", "answer2_id": "a2",
                        "reviewer_id": 1, "metadata": {}, "text": "t", "score": [7, 8]},
}


def hostile_file(name: str) -> list[tuple[str, bytes, dict | None]]:
    """Every HOSTILE value in every field of a good line and in an unread one, each line
    followed by a good line of its own."""
    lines: list[tuple[str, bytes, dict | None]] = []
    good = GOOD[name]
    for number, (field, value) in enumerate((field, value) for field in [None, *good] for value in HOSTILE):
        lines.append(("mutated", mutated(good, field, value), None))
        line = {**good, **_distinct(name, number)}
        lines.append(("good", json.dumps(line).encode(), line))
    return lines


def _distinct(name: str, number: int) -> dict:
    """Changes that make the good line a record of its own."""
    if name == "llm-council":
        return {"session_id": f"hostile/{number}"}
    if name == "fastchat-review":
        return {"review_id": f"hostile-{number}"}
    return {"tstamp": 1.7e9 + number}


@pytest.fixture(params=["in this process", "in worker processes"])
def read_path(request, monkeypatch) -> str:
    """Small thresholds make a small file take the worker-process path (test_parallel_import.py)."""
    if request.param == "in worker processes":
        from council_db.ingest import pipeline

        monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(pipeline, "SEGMENT_BYTES", 20_000)
    return request.param


@both_backends
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_hostile_value_in_every_field_is_one_rejected_line_on_both_read_paths(db, answers, read_path, name):
    example = next(EXAMPLE)
    lines = hostile_file(name)
    check_import(db, FORMATS[name], answers, example, lines, crlf=False)


@both_backends
def test_a_key_or_name_past_the_records_limits_is_rejected_saying_what_it_is_made_of(db, tmp_path):
    """Fields each within their own limits can make a session key past 500 characters, and
    a question id can carry a NUL into one: PostgreSQL's index refused them (a traceback)."""
    pair = {**GOOD["fastchat-pair"], "model_1": "a" * 300, "model_2": "b" * 300}
    nul = {**GOOD["fastchat-single"], "question_id": "q\u0000"}
    cases = [("fastchat-pair", pair, "session_id: got a string of 6", "is q<question_id>/t<turn>/<judge>/"),
             ("fastchat-single", nul, "session_id: contains a NUL character", "is q<question_id>/t<turn>")]
    for name, line, reason, made_of in cases:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(line) + "\n" + json.dumps(GOOD[name]) + "\n")
        result = import_files(db, [str(path)], options=FormatOptions(name)).files[0]
        assert (result.rejected, result.inserted > 0) == (1, True)
        assert result.rejected_lines[0].reason.startswith(reason) and made_of in result.rejected_lines[0].reason
