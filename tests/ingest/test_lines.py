"""Reading lines in batches: byte offsets, segments, and the safety of joined validation."""

from __future__ import annotations

import io
import json
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from council_db.ingest import lines as lines_module
from council_db.ingest.lines import BOM, LineBatch, parse_batch, read_batches
from tests.conftest import record


def test_lines_crafted_to_merge_in_a_joined_array_are_each_judged_alone():
    minimal = '{"session_id": "s", "reviewer_id": "r", "model_id": "m", "position": 0, ' \
              '"response_length_chars": 1, "score_value": 5.0'
    first_half = minimal + ', "note": [{"q": 1}'  # joined with the next line, a valid record
    second_half = '{"q": 2}]}'
    two_in_one = json.dumps(record(position=1)) + "," + json.dumps(record(position=2))  # keeps the count
    lines = [json.dumps(record()), first_half, second_half, two_in_one, json.dumps(record(position=3))]
    parsed = parse_batch(LineBatch(1, [line.encode() for line in lines], 0))
    assert [number for number, _ in parsed.records] == [1, 5]
    assert [bad.line_number for bad in sorted(parsed.rejected, key=lambda r: r.line_number)] == [2, 3, 4]


def test_strings_with_escaped_quotes_and_brackets_are_still_read():
    lines = [json.dumps(record(model_id='tricky "model" [v2] \\ end')), json.dumps(record(position=1))]
    parsed = parse_batch(LineBatch(1, [line.encode() for line in lines], 0))
    assert [r.model_id for _, r in parsed.records][0] == 'tricky "model" [v2] \\ end'
    assert not parsed.rejected


def test_batches_report_the_bytes_consumed_and_number_lines_from_the_start():
    data = b"".join(json.dumps(record(position=n)).encode() + b"\n" for n in range(5))
    batches = list(read_batches(io.BytesIO(data), first_line=1))
    assert batches[-1].end_offset == len(data)
    assert (batches[0].first_line, sum(len(b.lines) for b in batches)) == (1, 5)


def test_a_byte_order_mark_is_skipped_but_counted_in_the_offset():
    data = BOM + json.dumps(record()).encode() + b"\n"
    (batch,) = read_batches(io.BytesIO(data))
    assert batch.end_offset == len(data) and batch.lines[0].startswith(b"{")


def test_a_byte_order_mark_inside_the_file_is_skipped_too_as_cat_leaves_them():
    line = json.dumps(record()).encode()
    parsed = parse_batch(LineBatch(1, [line, BOM + line.replace(b"8.5", b"7.5") + b"\r"], 0))
    assert parsed.rejected == [] and [r.score_value for _, r in parsed.records] == [8.5, 7.5]


def test_a_length_limit_reads_one_segment_only():
    one = json.dumps(record()).encode() + b"\n"
    (batch,) = read_batches(io.BytesIO(one * 3), length=len(one) * 2)
    assert (len(batch.lines), batch.end_offset) == (2, len(one) * 2)


def test_an_incomplete_last_line_is_left_unless_the_stream_is_final():
    data = json.dumps(record()).encode() + b"\n" + b'{"session_id": "half'
    (kept,) = read_batches(io.BytesIO(data), keep_partial_tail=True)
    assert len(kept.lines) == 1 and kept.end_offset == data.index(b"\n") + 1
    (final,) = read_batches(io.BytesIO(data), keep_partial_tail=False)
    assert len(final.lines) == 2 and final.end_offset == len(data)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
       st.integers(1, 64), st.integers(1, 5))
def test_every_batch_ends_at_the_byte_after_its_last_line_whatever_the_read_and_batch_sizes(lines, chunk, batch):
    data = b"".join(line + b"\n" for line in lines)
    with patch.object(lines_module, "CHUNK_BYTES", chunk), patch.object(lines_module, "BATCH_LINES", batch):
        batches = list(read_batches(io.BytesIO(data), first_line=1, keep_partial_tail=False))
    assert [line for b in batches for line in b.lines] == [line for line in lines]
    ends = 0
    for number, found in enumerate(batches):
        ends += sum(len(line) + 1 for line in found.lines)
        assert found.end_offset == ends
        assert len(found.lines) <= batch
        assert found.first_line == 1 + sum(len(b.lines) for b in batches[:number])


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30), st.booleans(),
       st.integers(1, 64), st.sampled_from([0, 4, 16, 10**9]))
def test_lines_split_by_memchr_or_by_bytes_split_are_the_same_lines_whichever_chunk_takes_which(lines, ends, chunk,
                                                                                                  long_line):
    """read_batches splits a chunk by split_lines (BytesIO's lines, without their breaks) where
    the last chunk's lines were long, else by bytes.split: the same lines and offsets either
    way, a chunk's last line (cut by the read or by the file's end, with or without its break)
    included."""
    data = b"\n".join(lines) + (b"\n" if ends else b"")
    assert lines_module.split_lines(data or b"\n") == (data or b"\n").split(b"\n")
    with patch.object(lines_module, "CHUNK_BYTES", chunk), patch.object(lines_module, "LONG_LINE_BYTES", long_line):
        batches = list(read_batches(io.BytesIO(data), first_line=1, keep_partial_tail=False))
    expected = data.split(b"\n")
    last = expected.pop()  # after the last break: kept when it holds anything but blanks (a final stream)
    if last.strip():
        expected.append(last)
    assert [line for b in batches for line in b.lines] == expected
    assert (batches[-1].end_offset if batches else 0) == (len(data) - (0 if last.strip() else len(last))
                                                          if expected else 0)
