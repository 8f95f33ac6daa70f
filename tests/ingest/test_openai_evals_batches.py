"""An OpenAI evals log's batch of lines is decoded in one call, each event's data with it, and
its usual events are taken without a second decode or a record made as a dict then checked
(ingest/formats/openai_evals.py); what it gives is exactly what reading the log a line at a
time gives: the same records in the same order, each bad line rejected with the same reason,
the same invalid choices counted, on logs with every kind of odd line mixed in."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import msgspec
import pytest

from council_db.ingest.formats import judge_lines, openai_evals, openai_evals_batch
from council_db.ingest.formats.judge_lines import stripped
from council_db.ingest.formats.openai_evals import Reader
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.sources import Source
from tests.ingest.test_batch_reading import CountingDecoder

DATA = Path(__file__).parents[1] / "data" / "openai-evals"
ARGS = {"eval_type": "cot_classify", "modelgraded_spec": "fact", "eval_kwargs": {"temperature": 0, "seed": 7}}


def spec(run_id: str, candidate: str = "cand", args: dict | None = None) -> dict:
    functions = [candidate, "grader"]
    return {"spec": {"completion_fns": functions, "eval_name": "fact.dev.v0", "run_id": run_id,
                     "run_config": {"completion_fns": functions, "eval_spec": {
                         "cls": "evals.elsuite.modelgraded.classify:ModelBasedClassify",
                         "args": ARGS if args is None else args}}}}


def event(run_id: str, event_id: int, sample: str, kind: str, data) -> dict:
    return {"run_id": run_id, "event_id": event_id, "sample_id": sample, "type": kind, "data": data,
            "created_by": "", "created_at": f"2024-05-02 10:{15 + event_id // 60 % 40:02d}:{event_id % 60:02d}."
                                            f"{event_id * 7919 % 10**6:06d}+00:00"}


def reader(scale: str | None = None) -> Reader:
    return Reader(FormatOptions("openai-evals", scale=scale), Source("log.jsonl", "file", Path("log.jsonl"), 0))


def in_batches(lines: list[bytes], sizes: random.Random, scale: str | None = None) -> Parsed:
    """What the import gets: the log in batches of lines (of random sizes), one reader for all."""
    read, parsed, start = reader(scale), Parsed(), 0
    while start < len(lines):
        size = sizes.randint(1, 40)
        part = read(LineBatch(start + 1, lines[start:start + size], 0))
        parsed.records += records_of(part)
        parsed.rejected += part.rejected
        parsed.no_verdict += part.no_verdict
        start += size
    return parsed


def records_of(parsed: Parsed) -> list:
    """The records a batch stands for: its columns' (openai_evals_columns), or its records."""
    columns = getattr(parsed, "columns", None)
    if columns is None:
        return parsed.records
    return [(number, columns.record(row)) for row, number in enumerate(columns.numbers.tolist())]


def line_at_a_time(lines: list[bytes], scale: str | None = None) -> Parsed:
    """The reference: each line read on its own, the way a batch msgspec refuses is read."""
    read, parsed = reader(scale), Parsed()
    for number, raw in enumerate(lines, start=1):
        text = raw.strip(b" \t\r").removeprefix(b"\xef\xbb\xbf")
        if text:
            read._read(number, raw, text, parsed)
    return parsed


def described(parsed: Parsed) -> tuple:
    return ([(number, msgspec.structs.asdict(record)) for number, record in parsed.records],
            sorted((r.line_number, r.field or "", r.reason) for r in parsed.rejected), parsed.no_verdict)


# Ways an event line can differ from the usual one, each a change of its dict (or its text).
ODD = [
    lambda e: e["data"].update(choice="__invalid__"),
    lambda e: e["data"].pop("choice", None),
    lambda e: e["data"].update(choice=None),
    lambda e: e["data"].update(choice="Y", score=None),
    lambda e: e["data"].update(choice="4", score=None),
    lambda e: e["data"].update(choice="zzz", score=None),
    lambda e: e["data"].update(score=3.0),
    lambda e: e["data"].update(score=2e12),
    lambda e: e["data"].update(score=-0.0),
    lambda e: e["data"].update(choice=5),
    lambda e: e["data"].update(sampled="one string"),
    lambda e: e["data"].update(sampled=[]),
    lambda e: e["data"].update(sampled=[3, "x"]),
    lambda e: e.update(data=[1]),
    lambda e: e.update(data=None),
    lambda e: e.pop("data"),
    lambda e: e.pop("event_id"),
    lambda e: e.update(event_id="7"),
    lambda e: e.pop("type"),
    lambda e: e.update(type=None),
    lambda e: e.update(type="match"),
    lambda e: e.update(type=3),
    lambda e: e.update(run_id="another run"),
    lambda e: e.pop("run_id"),
    lambda e: e.pop("sample_id"),
    lambda e: e.update(sample_id=""),
    lambda e: e.update(sample_id="fact.dév.1"),
    lambda e: e.update(sample_id="fact\u0000dev"),
    lambda e: e.update(sample_id="s" * 501),
    lambda e: e.pop("created_at"),
    lambda e: e.update(created_at="yesterday"),
    lambda e: e.update(created_at="2024-02-30 10:15:00.000001+00:00"),
    lambda e: e.update(created_at="2024-05-02T10:15:00Z"),
    lambda e: e.update(created_at="2024-05-02 10:15:00+00:00"),
    lambda e: e.update(created_at="2024-05-02T10:15:00.000001+00:00"),  # isoformat()'s: a batch of two forms
    lambda e: e.update(created_at="2024-05-02 10:15:00.000000+00:00"),  # str(datetime) writes no ".000000"
    lambda e: e.update(created_at="2024-05-02 10:15:00.000001+02:00"),
    lambda e: e.update(created_at="2024-05-02\u00e910:15:00"),
    lambda e: e.update(created_at="9999-12-31 23:59:59.999999+00:00"),
    lambda e: e.update(created_at="0000-12-31 23:59:59+00:00"),
    lambda e: e.update(created_at="2024-05-02 24:00:00+00:00"),
    lambda e: e.update(created_at="2024-05-02 10:60:00+00:00"),
    lambda e: e.update(created_at="2024-05-02 10:15:00.1234567+00:00"),
    lambda e: e.update(created_at="2024-05-02 10:15:00." + "0" * 600),
    lambda e: e.update(final_report={"score": 1}),
    lambda e: e.update(spec=spec("r2")["spec"]),
]
ODD_TEXT = [b"{not json", b"", b"   ", b"[1, 2]", b'{"run_id": "r1", "x": 1e999999}', b'{"a": "\xff\xfe"}',
            b"\xef\xbb\xbf{}", json.dumps(spec("r1", "other model")).encode(),
            json.dumps(spec("r3", args={**ARGS, "modelgraded_spec": "p" * 450, "eval_type": "t" * 100})).encode(),
            json.dumps(spec("r4", args={**ARGS, "eval_kwargs": {"temperature": 500}})).encode(),
            json.dumps({"spec": {"completion_fns": []}}).encode(), b'{"final_report": {"score": 0.5}}']


def log(draw: random.Random) -> list[bytes]:
    """A run log of a few interleaved samples, about one line in eight changed in one odd way."""
    run_ids, lines, event_id = ["r1"], [json.dumps(spec("r1")).encode()], 0
    for _ in range(draw.randint(5, 25)):
        run_id = run_ids[-1]
        samples = [f"fact.dev.{draw.randrange(6)}" for _ in range(draw.randint(1, 3))]
        events = []
        for sample in samples:
            answers = [["x" * draw.randrange(50)] for _ in range(draw.randint(0, 3))]
            events.append([event(run_id, 0, sample, "raw_sample", {"input": [{"content": "q"}], "ideal": "a"})]
                          + [event(run_id, 0, sample, "sampling", {"prompt": "q", "sampled": a}) for a in answers]
                          + [event(run_id, 0, sample, "metrics", draw.choice(
                              [{"choice": "C", "score": 1.0}, {"choice": "B", "score": 0.75},
                               {"choice": "A", "score": 0.5}]))])
        while any(events):  # the samples' events interleaved, as evals' threads write them
            line = draw.choice([pending for pending in events if pending]).pop(0)
            line["event_id"] = event_id
            line["created_at"] = event(run_id, event_id, "", "", None)["created_at"]
            event_id += 1
            if draw.random() < 0.12:
                draw.choice(ODD)(line)
            if "spec" in line:
                run_ids.append(line["spec"]["run_id"])
            lines.append(json.dumps(line, ensure_ascii=draw.random() < 0.5).encode())
            if draw.random() < 0.03:
                lines.append(draw.choice(ODD_TEXT))
    return [line + draw.choice([b"", b"", b"\r", b" "]) for line in lines]  # as read_batches gives them


@pytest.mark.parametrize("scale", [None, "1-5"])
def test_a_log_read_in_batches_gives_what_reading_it_a_line_at_a_time_gives(scale, monkeypatch):
    draw, records, decoded = random.Random(20261128 if scale is None else 5), 0, 0
    monkeypatch.setattr(openai_evals, "_METRICS", metrics := CountingDecoder(openai_evals._METRICS))
    for _ in range(120):
        lines = log(draw)
        before = metrics.calls
        batched = in_batches(lines, draw, scale)
        records, decoded = records + len(batched.records), decoded + metrics.calls - before
        assert described(batched) == described(line_at_a_time(lines, scale))
    assert decoded < records * 0.8  # many batches were taken the quick way (one odd line sends a batch the other)


def test_every_odd_line_is_met_by_the_logs_compared():
    """The comparison above sees each odd change: some of them reject, some are taken."""
    draw = random.Random(20261128)
    parsed = [line_at_a_time(log(draw)) for _ in range(120)]
    reasons = {reason.split(";")[0] for p in parsed for _, _, reason in described(p)[1]}
    assert len(reasons) >= 15 and sum(p.no_verdict for p in parsed) >= 5
    assert sum(len(p.records) for p in parsed) >= 1_000


@pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")), ids=lambda path: path.name)
def test_the_fixture_logs_read_in_batches_as_a_line_at_a_time(path):
    lines = path.read_bytes().splitlines()
    assert described(in_batches(lines, random.Random(1))) == described(line_at_a_time(lines))


def test_a_batch_of_usual_events_is_decoded_once_with_their_data(monkeypatch):
    """Each event line is decoded once with its data: no second decode of a sampling's or a
    metrics' data (an invalid choice's included), and only the spec line read on its own."""
    sampling = CountingDecoder(openai_evals._SAMPLING)
    metrics = CountingDecoder(openai_evals._METRICS)
    monkeypatch.setattr(openai_evals, "_SAMPLING", sampling)
    monkeypatch.setattr(openai_evals, "_METRICS", metrics)
    path = DATA / "ab-gpt-3.5-turbo.jsonl"  # one grading "__invalid__"
    read = reader()
    read._decoder = lines = CountingDecoder(read._decoder)
    parsed = read(LineBatch(1, path.read_bytes().splitlines(), 0))
    assert (len(records_of(parsed)), parsed.no_verdict, parsed.rejected) == (5, 1, [])
    assert (sampling.calls, metrics.calls, lines.calls) == (0, 0, 1)


def test_an_events_position_is_the_digest_of_its_run_and_number_with_the_run_hashed_once(monkeypatch):
    """event_key hashes a run's id once and each event's number after it: the same 31 bits as
    blake2b over the two joined (the position stored for every grading, so a log imported
    again stores nothing twice)."""
    draw = random.Random(3)
    runs = ["240502101500BENCHRUN", "rún\ud800", "", "r" * 300]
    pairs = [(draw.choice(runs), draw.choice([0, 7, -3, 10**12, draw.randrange(10**6)])) for _ in range(500)]
    expected = [int.from_bytes(hashlib.blake2b(f"{run}\x00{number}".encode("utf-8", "surrogatepass"),
                                               digest_size=4).digest(), "little") & 0x7FFF_FFFF
                for run, number in pairs]
    made = []
    blake2b = hashlib.blake2b
    monkeypatch.setattr(openai_evals_batch.hashlib, "blake2b", lambda *a, **k: made.append(a) or blake2b(*a, **k))
    openai_evals_batch._run_digest.cache_clear()
    assert [openai_evals_batch.event_key(run, number) for run, number in pairs] == expected
    assert len(made) <= len(runs)


def test_a_batch_of_plain_lines_is_decoded_as_read_and_one_with_blanks_stripped_first(monkeypatch):
    """Lines that each start with "{" and end with "}" (as oaieval writes them) go to msgspec
    as read, with no stripped copy of each made; a batch with a carriage return or a blank is
    stripped first, and gives the same records."""
    strips = []
    monkeypatch.setattr(judge_lines, "stripped", lambda batch: strips.append(batch) or stripped(batch))
    lines = (DATA / "ab-gpt-3.5-turbo.jsonl").read_bytes().splitlines()
    plain = reader()(LineBatch(1, lines, 0))
    assert strips == []
    padded = reader()(LineBatch(1, [line + b"\r" for line in lines[:3]] + [b"  " + lines[3]] + lines[4:], 0))
    assert len(strips) == 1 and len(records_of(plain)) == 5
    assert described(Parsed(records_of(plain), plain.rejected, plain.no_verdict)) == described(
        Parsed(records_of(padded), padded.rejected, padded.no_verdict))
