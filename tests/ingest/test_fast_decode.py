"""The batch path (msgspec) and the authority (pydantic) accept the same lines, byte for byte.

msgspec skips the key and value of a field the record lacks without decoding them. Bytes that
were not UTF-8 there, objects nested 201 deep or a number of 4,301 digits thus passed the fast
path while pydantic refused the line: a corrupted byte in "schema_version" made an unknown key
and stored the record as schema 1.0.0. Here lines are corrupted as bytes, not only as strings.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from council_db.contract.record import Record, as_record
from council_db.ingest.fast_decode import (
    any_hides_from_msgspec,
    decode_joined,
    hides_from_msgspec,
    most_brackets_within,
)
from council_db.ingest.formats import judge_lines
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.readers import reader
from council_db.ingest.lines import BOM, LineBatch, parse_batch
from council_db.ingest.sources import Source
from council_db.ingest.validation import line_adapter
from tests.conftest import record
from tests.ingest.test_fuzz import AWKWARD_LITERALS, SHORT, assert_fast_path_agrees, good_line
from tests.outlets.test_export import bias_records

# Byte sequences that are not UTF-8 (a stray continuation byte, bytes that never occur,
# overlong forms, an encoded surrogate, a code point past U+10FFFF, a cut sequence), and
# others where decoders tend to part (escaped lone surrogates, a BOM, a no-break space).
NOT_UTF8 = [b"\x8f", b"\xff", b"\xfe", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf",
            b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xe2\x82", b"\xf0\x9f\x98"]
AWKWARD_BYTES = [*NOT_UTF8, b"\\ud800", b"\\udc00", b"\\ud83d\\ude00", BOM, b"\xc2\xa0", b"\x00", b"\x7f",
                 b'"', b"\\", b":", b",", b"{", b"}", "é".encode(), "\U0001F600".encode(), b"1" * 4_301,
                 b'{"a":' * 200]
# Where corrupted bytes are most telling: unknown keys and their values, nested ones included.
EXTRAS = [b'"note": "free text"', b'"schema_versin": "2.0.0"', b'"extra": {"k": "v", "n": 1}',
          b'"n": 12345', b'"list": ["a", 1]']


@st.composite
def corrupted_lines(draw) -> bytes:
    """A good line, perhaps with unknown keys, with a few bytes inserted or replaced: often just
    inside a string (a key or a value, known or unknown, in query_metadata or not)."""
    line = good_line(draw(bias_records()))
    extras = draw(st.lists(st.sampled_from(EXTRAS), max_size=2))
    if extras:
        line = line[:-1] + b", " + b", ".join(extras) + b"}"
    for _ in range(draw(st.integers(1, 3))):
        quotes = [i + 1 for i, byte in enumerate(line) if byte == ord('"')]
        at = draw(st.sampled_from(quotes or [0]) | st.integers(0, len(line)))
        piece = draw(st.sampled_from(AWKWARD_BYTES) | st.binary(min_size=1, max_size=3))
        cut = at + draw(st.sampled_from([0, 0, len(piece)]))  # insert, or write over
        line = line[:at] + piece.replace(b"\n", b" ") + line[cut:]
    return line


def authority(line: bytes) -> Record | None:
    """What pydantic makes of the line on its own: its record, or None when it refuses it."""
    try:
        return as_record(line_adapter().validate_json(line.strip(b" \t\r").removeprefix(BOM).strip(b" \t\r")))
    except ValidationError:
        return None


def assert_batch_agrees(line: bytes) -> None:
    """Among good lines, the batch path takes the line exactly when the authority does, with
    the same values, and the good lines around it are kept."""
    good = [good_line(record(position=1)), good_line(record(position=2))]
    parsed = parse_batch(LineBatch(1, [good[0], line, good[1]], 0))
    expected = authority(line)
    taken = {number: repr(found) for number, found in parsed.records}
    assert taken.get(2) == (None if expected is None else repr(expected))
    assert [bad.line_number for bad in parsed.rejected] == ([] if expected else [2])
    assert taken[1] == repr(authority(good[0])) and taken[3] == repr(authority(good[1]))


def assert_both_paths_agree(line: bytes) -> None:
    """The batch path agrees with the authority; so does msgspec on any line it is given."""
    if not hides_from_msgspec(line):
        assert_fast_path_agrees(line)
    assert_batch_agrees(line)


@SHORT
@given(corrupted_lines())
def test_a_line_corrupted_as_bytes_is_taken_by_the_fast_path_only_as_the_authority_takes_it(line):
    assume(b"\\u0000" not in line)  # a NUL is refused after decoding, on both paths alike
    assert_both_paths_agree(line)


def unknown_key(value: bytes, key: bytes = b"note") -> bytes:
    return json.dumps(record()).encode()[:-1] + b', "' + key + b'": ' + value + b"}"


@pytest.mark.parametrize("value", AWKWARD_LITERALS, ids=lambda value: repr(value[:20]))
def test_the_fast_path_agrees_with_pydantic_on_every_awkward_value_of_an_unknown_key(value):
    for line in (unknown_key(value), unknown_key(b'{"k": ' + value + b"}"),
                 json.dumps(record()).encode()[:-1] + b", " + value + b": 1}"):  # the value as a key
        assert_both_paths_agree(line)


NOT_UTF8_LINES = {
    "a corrupted byte in a known key": json.dumps(record(schema_version="2.0.0")).encode().replace(
        b'"schema_version"', b'"schema_versi\x8fn"'),
    **{f"{sequence!r} in an unknown key": unknown_key(b"1", b"no" + sequence + b"te") for sequence in NOT_UTF8},
    **{f"{sequence!r} in an unknown key's value": unknown_key(b'"a' + sequence + b'b"') for sequence in NOT_UTF8},
    "an overlong '/' nested in an unknown object": unknown_key(b'{"k": "\xc0\xaf"}'),
    "invalid UTF-8 in a query_metadata key": json.dumps(record()).encode().replace(b'"category"', b'"cat\xffegory"'),
}
REFUSED = {
    "a lone surrogate escape in an unknown key": unknown_key(b"1", b"\\ud800"),
    "a lone surrogate escape in an unknown key's value": unknown_key(b'"\\udc00"'),
    "a surrogate pair the wrong way round": unknown_key(b'"\\ude00\\ud83d"'),
}
HIDDEN_FROM_MSGSPEC = {
    "an integer of 4,301 digits in an unknown key's value": unknown_key(b"1" * 4_301),
    "a number whose integer part has 4,301 digits": unknown_key(b"-" + b"9" * 4_301 + b".5e-3"),
    "objects nested 201 deep in an unknown key's value": unknown_key(b'{"a":' * 200 + b"1" + b"}" * 200),
}


@pytest.mark.parametrize("line", [*NOT_UTF8_LINES.values(), *REFUSED.values()], ids=[*NOT_UTF8_LINES, *REFUSED])
def test_a_line_the_authority_refuses_is_refused_by_the_fast_decoder_too(line):
    assert authority(line) is None
    assert decode_joined(b"[" + line + b"]") is None
    assert_batch_agrees(line)


@pytest.mark.parametrize("line", HIDDEN_FROM_MSGSPEC.values(), ids=HIDDEN_FROM_MSGSPEC.keys())
def test_a_line_that_may_hide_what_the_authority_refuses_is_left_to_the_authority(line):
    assert authority(line) is None
    assert hides_from_msgspec(line)
    assert_batch_agrees(line)


# A judge log's long line: a few brackets each, more than 200 in a batch of them
JUDGED = b'{"judge": ["gpt-4", "single-v1"], "user_prompt": "' + b"[Question] 12345 ... " * 20 + b"x" * 4_000 + b'"}'


@pytest.mark.parametrize("line", HIDDEN_FROM_MSGSPEC.values(), ids=HIDDEN_FROM_MSGSPEC.keys())
def test_a_batch_holding_a_line_that_may_hide_is_told_from_one_look_at_the_batch(line):
    assert not any_hides_from_msgspec(b"\n".join([JUDGED] * 300))
    assert any_hides_from_msgspec(b"\n".join([JUDGED, JUDGED, line, JUDGED]))
    assert any_hides_from_msgspec(line)


# Lines of brackets, text and breaks of any length: runs of them straddle the counted blocks.
BRACKETED = st.lists(st.binary(max_size=0) | st.text("{[]}x \"", max_size=700).map(str.encode), min_size=1,
                     max_size=120)


@SHORT
@given(BRACKETED, st.integers(0, 600))
def test_no_line_holds_more_brackets_than_the_block_count_bounds(lines, padding):
    """The numpy count (per 512-byte block, summed over the blocks a line can touch) is never
    below a line's brackets, wherever the lines fall against the blocks, so a batch it clears
    holds no line the translate's count would find (no line that may hide is missed)."""
    data = b"\n".join([b"x" * padding + lines[0], *lines[1:]])
    longest = max(map(len, data.split(b"\n")))
    assert most_brackets_within(data, longest) >= max(line.count(b"{") + line.count(b"[") for line in data.split(b"\n"))
    if any_hides_from_msgspec(data):
        assert any_hides_from_msgspec(data, longest)


@pytest.mark.parametrize("where", [0, 1, 150, 298, 299])
def test_a_line_nested_201_deep_among_a_judge_logs_long_lines_is_found_by_the_block_count(where):
    """A batch of 300 long lines of a few brackets each is cleared by the block count (it is
    large enough for numpy to count it: under 200 in any line's span), and one line of 201 is
    found wherever it stands; a line of 200 is not."""
    batch = [JUDGED] * 300
    assert len(b"\n".join(batch)) > 1_000_000 and most_brackets_within(b"\n".join(batch), len(JUDGED)) <= 200
    assert not any_hides_from_msgspec(b"\n".join(batch), len(JUDGED))
    for brackets, found in ((201, True), (200, False)):
        nested = brackets - 1  # the line's own object is one
        deep = b'{"x": ' + b"[" * nested + b"]" * nested + b', "pad": "' + b"y" * 4_000 + b'"}'
        lines = batch[:where] + [deep] + batch[where + 1:]
        assert any_hides_from_msgspec(b"\n".join(lines), len(deep)) is found


def test_a_judge_logs_long_lines_are_decoded_without_a_look_at_each(monkeypatch):
    def looked(_line):
        raise AssertionError("a line was looked at on its own")
    monkeypatch.setattr(judge_lines, "hides_from_msgspec", looked)
    grading = {"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "score": 7, "turn": 1,
               "tstamp": 1.7e9, "user_prompt": "[Question] ... " * 20 + "x" * 4_000}
    read = reader(FormatOptions("fastchat-single"), Source("judged.jsonl", "stream", None, None))
    parsed = read(LineBatch(1, [json.dumps(dict(grading, model=f"m{n}")).encode() for n in range(50)], 0))
    assert len(parsed.columns) == 50 and not parsed.rejected  # read as columns (contract/record_columns)


def test_a_line_that_is_not_utf8_is_rejected_naming_the_byte_and_where_it_is():
    line = NOT_UTF8_LINES["a corrupted byte in a known key"]
    (bad,) = parse_batch(LineBatch(7, [line], 0)).rejected
    column = line.index(b"\x8f") + 1
    assert (bad.line_number, bad.field) == (7, None)
    assert bad.reason == f"not UTF-8 text (byte 0x8f at byte {column}); save the file as UTF-8"


def test_a_byte_that_is_not_utf8_is_found_anywhere_in_a_batch_of_many_pieces():
    good = json.dumps(record(model_id="modèle-€-😀"), ensure_ascii=False).encode()
    encoded_surrogate = unknown_key(b'"\xed\xa0\x80"')
    for where in (0, 100, 199):  # ~100 KB: the first piece checked, one in the middle, the last
        lines = [good] * 200
        lines[where] = encoded_surrogate
        parsed = parse_batch(LineBatch(1, lines, 0))
        assert [bad.line_number for bad in parsed.rejected] == [where + 1] and len(parsed.records) == 199


TAKEN = {
    "a misspelt known key (unknown keys are ignored)": unknown_key(b'"2.0.0"', b"schema_versin"),
    "non-ASCII characters of each UTF-8 length": unknown_key(
        json.dumps("é\u00a0\u2028\ufeff\uffff\U0001F600\U0010FFFF", ensure_ascii=False).encode()),
    "an escaped surrogate pair": unknown_key(b'"\\ud83d\\ude00"', b"\\ud83d\\ude00"),
    "a known key given twice (the last counts)": unknown_key(b'"1-5"', b"score_scale"),
    "a long line of short numbers and shallow objects": unknown_key(b'{"k": {"n": 12345}}, "x": ' * 60 + b"1"),
    "a line without position (llm-council's reader takes 0)": json.dumps(record(position=...)).encode(),
    "a line with position null": json.dumps(record(position=None)).encode(),
}


@pytest.mark.parametrize("line", TAKEN.values(), ids=TAKEN.keys())
def test_a_line_the_authority_takes_is_taken_by_the_fast_decoder_with_the_same_values(line):
    expected = authority(line)
    assert expected is not None and not hides_from_msgspec(line)
    assert repr(decode_joined(b"[" + line + b"]")) == repr([expected])
    assert_batch_agrees(line)


def test_lines_at_the_authoritys_limits_are_taken_whichever_path_reads_them():
    for line in (unknown_key(b"1" * 4_300), unknown_key(b'{"a":' * 199 + b"1" + b"}" * 199)):
        assert authority(line) is not None
        assert_both_paths_agree(line)


def test_every_unicode_character_is_taken_by_both_decoders_in_any_key_and_value():
    characters = [chr(c) for c in range(0x20, 0x110000) if not 0xD800 <= c <= 0xDFFF and chr(c) not in '"\\']
    for start in range(0, len(characters), 8_192):
        text = "".join(characters[start:start + 8_192]).encode()
        for line in (unknown_key(b'"' + text + b'"'), unknown_key(b"1", text)):
            assert authority(line) is not None and decode_joined(b"[" + line + b"]") is not None
