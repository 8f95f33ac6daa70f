"""A judge log's batch of lines is decoded in one call and its records checked in one
(ingest/formats/judge_lines.py), and gives exactly what reading it a line at a time gives:
the same records, and each bad line rejected alone with the same reason."""

from __future__ import annotations

import json

import msgspec

from council_db.contract.record import as_record
from council_db.contract.storable import all_storable, unstorable_field
from council_db.ingest.formats import judge_lines
from council_db.ingest.formats.judge_lines import stripped
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.readers import reader
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.sources import resolve_sources
from tests import realdata

JUDGMENTS = realdata.MT_BENCH / "model_judgment" / "gpt-4_single.jsonl"


def fastchat_single():
    return reader(FormatOptions("fastchat-single"), resolve_sources([str(JUDGMENTS)])[0])


def real_lines(count: int) -> list[bytes]:
    return JUDGMENTS.read_bytes().splitlines()[:count]


def line_at_a_time(lines: list[bytes]) -> Parsed:
    """What the reader gives reading each line on its own (the path a batch it refuses takes)."""
    read, parsed = fastchat_single(), Parsed()
    for number, raw in enumerate(lines, start=1):
        read._read(number, raw, raw.strip(), parsed)
    return parsed


def described(parsed: Parsed) -> tuple:
    return ([(number, msgspec.structs.asdict(record)) for number, record in parsed.records],
            [vars(r) for r in parsed.rejected], parsed.no_verdict)


class CountingDecoder:
    """A decoder that counts its calls."""

    def __init__(self, decoder):
        self.decoder, self.calls = decoder, 0

    def decode(self, data):
        self.calls += 1
        return self.decoder.decode(data)

    def decode_lines(self, data):
        self.calls += 1
        return self.decoder.decode_lines(data)


def test_a_batch_of_good_lines_is_decoded_in_one_call():
    read = fastchat_single()
    read._decoder = counting = CountingDecoder(read._decoder)
    parsed = read(LineBatch(1, real_lines(200), 0))
    assert (len(parsed.columns), parsed.rejected, counting.calls) == (200, [], 1)  # columns: test_record_columns.py
    read.columns = lambda numbers, lines: None  # the records a batch makes when it cannot make columns
    parsed = read(LineBatch(1, real_lines(200), 0))
    assert (len(parsed.records), parsed.rejected, counting.calls) == (200, [], 2)
    assert described(parsed) == described(line_at_a_time(real_lines(200)))


def test_a_batch_of_plain_lines_is_decoded_as_read_and_one_with_blanks_stripped_first(monkeypatch):
    """Lines that each start with "{" and end with "}" (as llm_judge writes them) go to msgspec
    as read, with no stripped copy of each made; a batch with a carriage return or a blank
    around a line is stripped first, and gives the same records."""
    strips = []
    monkeypatch.setattr(judge_lines, "stripped", lambda batch: strips.append(batch) or stripped(batch))
    lines = real_lines(60)
    plain = fastchat_single()(LineBatch(1, lines, 0))
    assert strips == [] and len(plain.columns) == 60
    padded = fastchat_single()(LineBatch(1, [line + b"\r" for line in lines[:3]] + [b"  " + lines[3]] + lines[4:], 0))
    assert len(strips) == 1

    def rows(parsed):
        return list(parsed.columns.numbers), [parsed.columns.record(row) for row in range(len(parsed.columns))]
    assert rows(padded) == rows(plain)


def test_a_bad_line_among_good_ones_is_rejected_alone_with_the_reason_a_line_alone_gets():
    lines = real_lines(50)
    bad_score = json.loads(lines[3])
    bad_score["score"] = "ten"
    nul_model = json.loads(lines[7])
    nul_model["model"] = "vicuna\u0000"
    lines[3], lines[7] = json.dumps(bad_score).encode(), json.dumps(nul_model).encode()
    lines[20] = b'{"question_id": 81, "model": "x"'  # cut short: no JSON
    parsed = fastchat_single()(LineBatch(1, lines, 0))
    assert [r.line_number for r in parsed.rejected] == [4, 8, 21]
    assert [r.field for r in parsed.rejected[:2]] == ["score", "model"]
    assert described(parsed) == described(line_at_a_time(lines))


def test_all_storable_finds_every_record_the_record_by_record_look_refuses():
    base = {"session_id": "s", "reviewer_id": "r", "model_id": "m", "score_value": 1.0,
            "response_length_chars": None, "query_metadata": {"category": "writing", "kept_not": {"x": "\u0000"}}}
    refused = [{**base, "model_id": "m\u0000"}, {**base, "reviewer_prompt": "p\ud800"},
               {**base, "query_metadata": {"category": "w\u0000"}}, {**base, "timestamp": "2024\u0000"}]
    assert unstorable_field(as_record(base)) is None and all_storable([as_record(base)] * 3)
    for values in refused:
        assert unstorable_field(as_record(values)) is not None
        assert not all_storable([as_record(base), as_record(values), as_record(base)])
