"""A judge log's batch read as columns (contract/record_columns: no record struct a line) is
normalised into the writer's batch exactly as its records would be: the same rows, names,
envelopes and own times, batch after batch of one normaliser (its sessions and envelopes
carry over), on the real MT-bench gradings and on lines made to take every turn of the
envelope's rules (a time shared across sessions, time 0, a session's return, a bad line)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from council_db.contract.record_columns import RecordColumns
from council_db.contract.score_batch import ENVELOPE_TIME
from council_db.ingest.formats import arena_hard, fastchat_pair, fastchat_review, fastchat_single, judgebench
from council_db.ingest.formats.judge_columns import unix_us_column
from council_db.ingest.formats.judge_lines import LineReader, ParsedColumns, unix_us
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.lines import LineBatch
from council_db.ingest import normalise
from council_db.ingest.normalise import Normalised, Normaliser
from council_db.ingest.sources import resolve_sources
from tests import realdata


def record_by_record(reader: type) -> type:
    """The same reader making a record each (the path every line took before columns)."""
    return type("RecordByRecord", (reader,), {"columns": LineReader.columns})


RecordByRecord = record_by_record(fastchat_single.Reader)
PAIR = Path(__file__).parents[1] / "data" / "fastchat-pair" / "mt_bench" / "model_judgment" / "gpt-4_pair.jsonl"
REVIEWS = realdata.FASTCHAT / "review" / "vicuna-13b-20230322-clean-lang"


def made_lines(count: int, seed: int) -> list[bytes]:
    """fastchat-single lines whose times repeat within and across sessions, with a time 0, a
    session coming back after many others, ids as numbers and as text, two kinds of judge,
    no-rating scores and one line no record can be made of."""
    rng = random.Random(seed)
    lines = []
    for number in range(count):
        question = rng.choice([81, 82, "81", 90 + number // 150])
        judge = rng.choice([["gpt-4", "single-v1"], "gpt-4", ["gpt-4", "single-math-v1"]])
        tstamp = (0.0 if number % 97 == 13 and number > 50 else 1.7e9 + rng.randrange(5) if number % 31 == 5
                  else rng.choice([1.7e9 + number, 1.7e9 + number + 0.25]))
        line = {"question_id": question, "model": f"m{rng.randrange(4)}", "judge": judge,
                "score": rng.choice([-1, 3, 7.5, 10]), "turn": rng.choice([1, 2]), "tstamp": tstamp,
                "user_prompt": "..."}
        lines.append(json.dumps(line).encode())
    lines[count // 2] = b'{"question_id": 81, "model": "m1", "judge": "gpt-4", "score": "x", "turn": 1, "tstamp": 1}'
    return lines


def normalised(reader_type: type, options: FormatOptions, path: Path, lines: list[bytes], size: int) -> list:
    """Every batch of ``size`` lines normalised in turn by one normaliser."""
    normaliser = Normaliser(reader_type(options, resolve_sources([str(path)])[0]))
    return [normaliser.normalise(LineBatch(start + 1, lines[start:start + size], 0))
            for start in range(0, len(lines), size)]


def stored(part: Normalised) -> list[tuple]:
    """What the writer gets of each row: names, envelope, own time, and the per-row values."""
    rows = part.rows
    times = np.full(len(rows), ENVELOPE_TIME) if rows.times is None else rows.times
    return [(rows.session_keys[session], rows.names[reviewer], rows.names[model], rows.envelopes[envelope].stored,
             rows.envelopes[envelope].ts_us, time, position, length, score, exclusion, given)
            for session, reviewer, model, envelope, time, position, length, score, exclusion, given in zip(
                rows.session.tolist(), rows.reviewer.tolist(), rows.model.tolist(), rows.envelope.tolist(),
                times.tolist(), rows.position.tolist(), rows.length.tolist(), rows.score.tolist(),
                rows.exclusion.tolist(), rows.position_given.tolist())]


def summary(part: Normalised) -> tuple:
    return (stored(part), part.rows.identities, part.rows.reviewer_kinds, [r.line_number for r in part.rejected],
            part.excluded, part.no_position, part.unknown_length, part.no_verdict)


def test_a_fastchat_single_batch_is_read_as_columns_without_a_record_a_line():
    lines = realdata.MT_BENCH_JUDGMENTS.read_bytes().splitlines()[:200]
    source = resolve_sources([str(realdata.MT_BENCH_JUDGMENTS)])[0]
    reader = fastchat_single.Reader(FormatOptions("fastchat-single"), source)
    parsed = reader(LineBatch(1, lines, 0))
    assert isinstance(parsed, ParsedColumns) and len(parsed.columns) == 200 and parsed.records == []


@pytest.mark.parametrize("answers", [None, realdata.MT_BENCH_ANSWERS])
def test_mt_bench_gradings_as_columns_normalise_as_their_records(answers):
    options = FormatOptions("fastchat-single", answers=answers, bench="mt")
    lines = realdata.MT_BENCH_JUDGMENTS.read_bytes().splitlines()
    for size in (37, 500):
        columns = normalised(fastchat_single.Reader, options, realdata.MT_BENCH_JUDGMENTS, lines, size)
        records = normalised(RecordByRecord, options, realdata.MT_BENCH_JUDGMENTS, lines, size)
        assert [summary(part) for part in columns] == [summary(part) for part in records]


@pytest.mark.parametrize(("seed", "answers"), [(0, None), (1, None), (2, None), (3, realdata.MT_BENCH_ANSWERS)])
def test_lines_taking_every_envelope_rule_normalise_as_their_records(seed, answers, tmp_path):
    path = tmp_path / "gpt-4_single.jsonl"
    lines = made_lines(600, seed)
    path.write_bytes(b"\n".join(lines))
    options = FormatOptions("fastchat-single", answers=answers)
    columns = normalised(fastchat_single.Reader, options, path, lines, 25)
    records = normalised(RecordByRecord, options, path, lines, 25)
    assert [summary(part) for part in columns] == [summary(part) for part in records]
    assert sum(len(part.rejected) for part in columns) == 1


def test_a_column_of_times_gets_each_time_its_own_microseconds_and_key():
    rng = random.Random(5)
    seconds = [rng.uniform(0, 4e9) for _ in range(20_000)] + [1.7e9 + k * 5e-7 for k in range(50)] + [0.0, 2.5e-6]
    column = np.array(seconds)
    assert unix_us_column(column).tolist() == [unix_us("tstamp", value) for value in seconds]
    assert fastchat_single.call_keys(column).tolist() == [fastchat_single.call_key(value) for value in seconds]
    assert unix_us_column(np.array([1.7e9, -1.0])) is None and unix_us_column(np.array([3e11])) is None


def made_pair_lines(count: int, seed: int) -> list[bytes]:
    """fastchat-pair lines with every winner (an "error" game gives no record), a line of two
    errors, a time repeated, a pair judged twice, two judges, and two lines no record is made of."""
    rng = random.Random(seed)
    winners = ["model_1", "model_2", "tie", "error"]
    lines = []
    for number in range(count):
        first, second = rng.sample([f"m{k}" for k in range(5)], 2)
        line = {"question_id": rng.choice([81, "81", 82]), "model_1": first, "model_2": second,
                "g1_winner": rng.choice(winners), "g2_winner": rng.choice(winners),
                "judge": rng.choice([["gpt-4", "pair-v2"], ["gpt-4", "pair-math-v1"], "gpt-4"]),
                "turn": rng.choice([1, 2]), "tstamp": 1.7e9 + rng.choice([number, number // 3, 7]),
                "g1_user_prompt": "..."}
        lines.append(json.dumps(line).encode())
    lines[count // 3] = lines[count // 3].replace(b'"model_2": "', b'"model_2": "x", "model_1": "x", "_": "')
    lines[count // 2] = lines[count // 2].replace(b'"g2_winner": "', b'"g2_winner": "A', 1)
    return lines


@pytest.mark.parametrize(("seed", "answers"), [(0, None), (1, None), (2, realdata.MT_BENCH_ANSWERS)])
def test_pairwise_lines_as_columns_normalise_as_their_records(seed, answers, tmp_path):
    path = tmp_path / "gpt-4_pair.jsonl"
    lines = made_pair_lines(300, seed) + PAIR.read_bytes().splitlines()
    path.write_bytes(b"\n".join(lines))
    options = FormatOptions("fastchat-pair", answers=answers)
    columns = normalised(fastchat_pair.Reader, options, path, lines, 20)
    records = normalised(record_by_record(fastchat_pair.Reader), options, path, lines, 20)
    assert [summary(part) for part in columns] == [summary(part) for part in records]
    assert sum(len(part.rejected) for part in columns) == 2
    assert any(isinstance(fastchat_pair.Reader(options, resolve_sources([str(path)])[0])(
        LineBatch(1, lines[start:start + 20], 0)), ParsedColumns) for start in range(0, len(lines), 20))


def test_a_new_sessions_envelope_that_differs_only_in_its_time_is_made_without_its_record(tmp_path, monkeypatch):
    """A pairwise log has a session a line, each at its own time: its envelope is the one made
    before at that time (the same in every field as its first record's), not a record made."""
    path = tmp_path / "gpt-4_pair.jsonl"
    lines = made_pair_lines(300, 4)
    path.write_bytes(b"\n".join(lines))
    options = FormatOptions("fastchat-pair")
    records = normalised(record_by_record(fastchat_pair.Reader), options, path, lines, 20)
    made = []
    record = RecordColumns.record
    monkeypatch.setattr(RecordColumns, "record", lambda self, row: made.append(row) or record(self, row))
    columns = normalised(fastchat_pair.Reader, options, path, lines, 20)

    assert [summary(part) for part in columns] == [summary(part) for part in records]
    assert [part.rows.envelopes for part in columns] == [part.rows.envelopes for part in records]
    assert len(made) == 1 and len({key for part in columns for key in part.rows.session_keys}) > 100


@pytest.mark.parametrize("cache_limit", [60, 100_000])
def test_pairwise_runs_are_decided_once_a_batch_per_envelope_as_run_by_run_decides_them(tmp_path, monkeypatch,
                                                                                           cache_limit):
    """A batch of dated runs where no cache is cleared looks each envelope's base and times up
    once (no _known a run: a pairwise log's every line is a new session), and gives the rows
    the record path gives; with caches cleared every few batches, batches take either way."""
    path = tmp_path / "gpt-4_pair.jsonl"
    made = made_pair_lines(300, 5)
    lines = [line for number, line in enumerate(made) if number not in (100, 150)] + PAIR.read_bytes().splitlines()
    path.write_bytes(b"\n".join(lines))  # without the two lines no record is made of: every batch is columns
    options = FormatOptions("fastchat-pair")
    monkeypatch.setattr(normalise, "CACHE_LIMIT", cache_limit)
    records = normalised(record_by_record(fastchat_pair.Reader), options, path, lines, 20)
    looked = []
    known = Normaliser._known
    monkeypatch.setattr(Normaliser, "_known", lambda self, *args: looked.append(args) or known(self, *args))
    columns = normalised(fastchat_pair.Reader, options, path, lines, 20)
    assert [summary(part) for part in columns] == [summary(part) for part in records]
    assert [part.rows.envelopes for part in columns] == [part.rows.envelopes for part in records]
    assert (len(looked) == 0) is (cache_limit == 100_000)


def made_review_lines(count: int, seed: int) -> list[bytes]:
    """Review lines naming the published answers, a review id repeated, no-rating scores, and
    a line naming an answer the folder lacks."""
    rng = random.Random(seed)
    ids = [json.loads(line)["answer_id"] for path in sorted(realdata.FASTCHAT_ANSWERS.glob("*.jsonl"))
           for line in path.read_text(encoding="utf-8").splitlines()]
    lines = [json.dumps({"review_id": f"r{rng.randrange(count // 2)}", "question_id": rng.randrange(1, 81),
                         "answer1_id": rng.choice(ids), "answer2_id": rng.choice(ids),
                         "score": [rng.choice([-1, 3, 8.5]), rng.choice([-1, 7, 10])]}).encode()
             for _ in range(count)]
    lines[count // 2] = lines[count // 2].replace(b'"answer1_id": "', b'"answer1_id": "missing', 1)
    return lines


def test_review_lines_as_columns_normalise_as_their_records():
    published = sorted(REVIEWS.glob("*.jsonl"))[0]
    lines = made_review_lines(300, 1) + published.read_bytes().splitlines()
    options = FormatOptions("fastchat-review", answers=realdata.FASTCHAT_ANSWERS)
    columns = normalised(fastchat_review.Reader, options, published, lines, 20)
    records = normalised(record_by_record(fastchat_review.Reader), options, published, lines, 20)
    assert [summary(part) for part in columns] == [summary(part) for part in records]
    assert sum(len(part.rejected) for part in columns) == 1


def made_arena_lines(count: int, seed: int) -> list[bytes]:
    """arena-hard lines of both generations: every verdict and its mirrored spelling, null
    games and verdicts, categories (one past the kept length), and a line with no verdict."""
    rng = random.Random(seed)
    verdicts = [*arena_hard.VERDICTS, None]
    lines = []
    for number in range(count):
        games = [rng.choice([None, {"score": rng.choice(verdicts)}]) for _ in range(rng.choice([1, 2]))]
        line = {"model": f"m{rng.randrange(5)}", "games": games, "judge": rng.choice(["gpt-4.1", None])}
        if number % 2:
            line.update(uid=f"q{rng.randrange(30)}", baseline="o3", category=rng.choice(["hard", "x" * 120, ""]))
        else:
            line.update(question_id=rng.randrange(30))
        lines.append(json.dumps(line).encode())
    lines[count // 2] = lines[count // 2].replace(b'"games": [', b'"games": [{"score": "A>B>C"}, ', 1)
    return lines


def test_arena_hard_lines_as_columns_normalise_as_their_records(tmp_path):
    folder = tmp_path / "arena-hard-v2.0" / "model_judgment" / "gpt-4.1"
    folder.mkdir(parents=True)
    path = folder / "m.jsonl"
    lines = made_arena_lines(400, 2)
    path.write_bytes(b"\n".join(lines))
    options = FormatOptions("arena-hard")
    columns = normalised(arena_hard.Reader, options, path, lines, 20)
    records = normalised(record_by_record(arena_hard.Reader), options, path, lines, 20)
    assert [summary(part) for part in columns] == [summary(part) for part in records]
    assert sum(len(part.rejected) for part in columns) >= 1


def made_judgebench_lines(count: int, seed: int) -> list[bytes]:
    """JudgeBench lines: one or two judgments, null judgments and decisions, every verdict,
    sources (one past the kept length, one absent), pairs judged again, and lines no record
    is made of (a decision that is none, a judgment naming no judge)."""
    rng = random.Random(seed)

    def judgment() -> dict | None:
        return rng.choice([None, {"decision": rng.choice([*judgebench.VERDICTS, None]),
                                  "judgment": {"judge_model": rng.choice(["gpt-4o", "claude"])}}])

    lines = [json.dumps({"pair_id": f"p{rng.randrange(count // 2)}", "response_A": "a" * rng.randrange(9),
                         "response_B": "bé" * rng.randrange(9), "label": rng.choice(["A>B", "B>A"]),
                         "judge_name": "arena_hard", "judgments": [judgment() for _ in range(rng.choice([1, 2]))],
                         "source": rng.choice(["mmlu", "s" * 120, None])}).encode()
             for _ in range(count)]
    lines[count // 3] = lines[count // 3].replace(b'"judgments": [', b'"judgments": [{"decision": "A>B>C"}, ', 1)
    lines[count // 2] = lines[count // 2].replace(b'"judgments": [', b'"judgments": [{"decision": "A>B"}, ', 1)
    return lines


@pytest.mark.parametrize("judge", [None, "gold"])
def test_judgebench_lines_as_columns_normalise_as_their_records(judge, tmp_path):
    real = sorted((Path(__file__).parents[1] / "data" / "judgebench" / "outputs").glob("*.jsonl"))
    lines = made_judgebench_lines(400, 3) + [line for path in real for line in path.read_bytes().splitlines()]
    path = tmp_path / "judgebench.jsonl"
    path.write_bytes(b"\n".join(lines))
    options = FormatOptions("judgebench", judge=judge)
    columns = normalised(judgebench.Reader, options, path, lines, 20)
    records = normalised(record_by_record(judgebench.Reader), options, path, lines, 20)
    assert [summary(part) for part in columns] == [summary(part) for part in records]
    assert sum(len(part.rejected) for part in columns) == (2 if judge is None else 1)
