"""Bad input, fuzzed: every bad line is rejected with a message naming its line (and its
field where it has one), nothing raises, and the good lines around it are kept. Malformed
command-line arguments are usage errors (exit 2), never tracebacks.

Short hypothesis runs here; benchmarks/fuzz_long.py runs the same properties with many more examples.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from council_db.cli.app import app
from council_db.contract.fields import LINE_FIELDS
from council_db.contract.record import as_record
from council_db.errors import CouncilDbError
from council_db.ingest.fast_decode import decode_joined
from council_db.ingest.importer import import_files
from council_db.ingest.lines import BOM, LineBatch, parse_batch
from council_db.ingest.normalise import Normaliser
from council_db.ingest.validation import line_adapter
from council_db.outlets.export import ExportFilter, records
from council_db.store.database import open_database
from tests.conftest import record
from tests.outlets.test_export import as_exported, bias_records, natural_key

# benchmarks/fuzz_long.py raises the number of examples through this variable and explores
# new inputs every run; the short run in the suite tries the same inputs every time, so CI
# is reproducible (what a long run finds becomes a test of its own).
EXAMPLES = int(os.environ.get("COUNCIL_DB_FUZZ_EXAMPLES", "120"))
FIXED = "COUNCIL_DB_FUZZ_EXAMPLES" not in os.environ
SHORT = settings(max_examples=EXAMPLES, deadline=None, derandomize=FIXED,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# --- bad lines ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
AWKWARD_LITERALS = [
    b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1" + b"0" * 400, b"-0", b"1.0", b"true",
    b'"' + b"x" * 100_000 + b'"', b"[" * 3_000 + b"]" * 3_000, b'{"a":' * 3_000 + b"1" + b"}" * 3_000,
    b'"\xff\xfe"', b'"\xed\xa0\x80"', b'"\\ud800"', b"\"\\u0000\"", b"{}", b"[]", b'""',
    # where msgspec (the fast path) and pydantic could part: regex anchors, nesting depth,
    # integer and float bounds, string lengths counted in characters, raw control characters
    b'"0123456789abcdef\\n"', b'"0123456789ABCDEF"', b'{"a":' * 300 + b"1" + b"}" * 300, b'{"a":{"b":{"c":1}}}',
    b'{"category":{"x":null}}', b"2147483647", b"2147483648", b"9223372036854775808", b"18446744073709551616",
    b"1e12", b"1.0000000000000002e12", b"-1e12", b"5e-324", b"1E2", b'"' + "\U0001F600".encode() * 500 + b'"',
    b'"' + "\U0001F600".encode() * 501 + b'"', b'"a\tb"', b'"\x7f"', b'"\\ud83d\\ude00"', b"-0.0",
    # times in year 10000 and year 0 once in UTC (tests/ingest/test_time_range.py follows them to the store)
    b'"9999-12-31T23:59:59-14:00"', b'"0001-01-01T00:00:00+14:00"', b'"9999-12-31T23:59:59.999999Z"',
    # reviewer_kind's values and near misses
    b'"human"', b'"gold"', b'"Human"', b'"judge "', rb'"gol\u0064"',
]
awkward_literals = st.sampled_from(AWKWARD_LITERALS)


@st.composite
def mutated_lines(draw) -> tuple[bytes, str]:
    """A good record with one field's value replaced by something arbitrary or awkward
    (possibly still valid), or that field given a second time (the last value counts)."""
    field = draw(st.sampled_from(LINE_FIELDS))
    value = draw(st.one_of(awkward_literals, json_values.map(lambda v: json.dumps(v, ensure_ascii=False).encode())))
    if draw(st.booleans()):
        return json.dumps(record()).encode()[:-1] + b', "' + field.encode() + b'": ' + value + b"}", field
    return json.dumps(record(**{field: "__MARK__"})).encode().replace(b'"__MARK__"', value, 1), field


def _blank(line: bytes) -> bool:
    return line.strip(b" \t\r").removeprefix(BOM).strip(b" \t\r") == b""


garbage_lines = st.binary(min_size=1, max_size=300).map(lambda data: data.replace(b"\n", b" ")).filter(
    lambda data: not _blank(data))


def good_line(line: dict) -> bytes:
    return json.dumps(line, ensure_ascii=False).encode()


def validate(lines: list[bytes]):
    """parse_batch then the contract's normalisations, as an import runs them."""
    batch = LineBatch(1, lines, sum(len(line) + 1 for line in lines))
    parsed = parse_batch(batch)
    return parsed, Normaliser().rows(parsed, batch)


def assert_well_rejected(rejected, lines: list[bytes]) -> None:
    for bad in rejected:
        assert 1 <= bad.line_number <= len(lines)
        assert bad.reason and (bad.field is None or bad.field in LINE_FIELDS)
        assert bad.field is None or bad.reason.startswith(bad.field)
        assert bad.known_values is None or set(json.loads(bad.known_values)) <= set(LINE_FIELDS), "no unknown key"


@SHORT
@given(st.lists(st.one_of(bias_records().map(lambda line: ("good", good_line(line))),
                          garbage_lines.map(lambda line: ("garbage", line))), min_size=1, max_size=30))
def test_garbage_lines_are_rejected_by_number_and_the_good_lines_kept(lines):
    raw = [line for _, line in lines]
    parsed, normalised = validate(raw)
    assert_well_rejected(normalised.rejected, raw)
    good = {number for number, (kind, _) in enumerate(lines, 1) if kind == "good"}
    assert {number for number, _ in parsed.records} == good
    assert {bad.line_number for bad in normalised.rejected} == set(range(1, len(lines) + 1)) - good
    assert [line for _, line in parsed.records] == [as_record(json.loads(lines[n - 1][1])) for n in sorted(good)]


@SHORT
@given(st.lists(mutated_lines(), min_size=1, max_size=12), st.lists(bias_records(), min_size=1, max_size=5))
def test_a_wrong_value_in_any_field_is_rejected_naming_that_field_or_accepted(mutated, good):
    raw = [text for text, _ in mutated] + [good_line(line) for line in good]
    parsed, normalised = validate(raw)
    assert_well_rejected(normalised.rejected, raw)
    taken = len(normalised.rows) + normalised.skipped
    assert taken + len(normalised.rejected) == len(raw), "every line is taken or rejected"
    for bad in normalised.rejected:
        assert bad.line_number <= len(mutated), "good lines are never rejected"
        assert bad.field in (mutated[bad.line_number - 1][1], None)
    assert [n for n, _ in parsed.records][-len(good):] == list(range(len(mutated) + 1, len(raw) + 1))


# --- whole imports --------------------------------------------------------------------------


def assert_fast_path_agrees(line: bytes) -> None:
    """The fast decoder takes the line only if pydantic does, and reads the same values."""
    fast = decode_joined(b"[" + line + b"]")
    if fast is not None:
        assert repr(fast) == repr([as_record(line_adapter().validate_json(line))])  # repr: 4 and 4.0 differ


@pytest.mark.parametrize("field", LINE_FIELDS)
def test_the_fast_decoder_agrees_with_pydantic_on_every_awkward_value_in_every_field(field):
    for value in AWKWARD_LITERALS:
        assert_fast_path_agrees(json.dumps(record(**{field: "__MARK__"})).encode().replace(b'"__MARK__"', value, 1))
        assert_fast_path_agrees(json.dumps(record()).encode()[:-1] + b', "' + field.encode() + b'": ' + value + b"}")


@SHORT
@given(mutated_lines())
def test_the_fast_decoder_accepts_only_what_pydantic_accepts_with_the_same_values(mutated):
    assert_fast_path_agrees(mutated[0])


@SHORT
@given(st.lists(bias_records(), min_size=1, max_size=12))
def test_every_valid_llm_council_record_takes_the_fast_path(lines):
    data = [good_line(line) for line in lines]
    fast = decode_joined(b"[" + b",\n".join(data) + b"]")
    assert repr(fast) == repr([as_record(line_adapter().validate_json(line)) for line in data])


@pytest.fixture(scope="module")
def empty_database(tmp_path_factory) -> Path:
    """A migrated database to copy for each example (building one costs more than a test)."""
    path = tmp_path_factory.mktemp("template") / "council.db"
    open_database(f"sqlite:///{path}", notify=lambda _: None).engine.dispose()
    return path


@SHORT
@given(lines=st.lists(st.one_of(bias_records().map(lambda line: ("good", good_line(line))),
                                garbage_lines.map(lambda line: ("garbage", line)),
                                mutated_lines().map(lambda pair: ("mutated", pair[0]))), min_size=1, max_size=25),
       bom=st.booleans(), crlf=st.booleans())
def test_an_import_of_a_fuzzed_file_keeps_its_good_lines_and_stores_every_rejection(
        empty_database, lines, bom, crlf):
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        shutil.copy(empty_database, folder / "council.db")
        source = folder / "in.jsonl"
        ending = b"\r\n" if crlf else b"\n"
        source.write_bytes((BOM if bom else b"") + b"".join(line + ending for _, line in lines))
        db = open_database(f"sqlite:///{folder / 'council.db'}", notify=lambda _: None)
        try:
            try:
                result = import_files(db, [str(source)]).files[0]
            except CouncilDbError:  # refused up front as plainly no JSON Lines (ingest/sniff.py)
                with db.engine.connect() as connection:
                    assert connection.exec_driver_sql("SELECT COUNT(*) FROM imports").scalar() == 0
                assert lines[0][0] != "good", "a file starting with a good line is read"
                return
            stored = list(records(db, ExportFilter()))
            with db.engine.connect() as connection:
                kept = connection.exec_driver_sql("SELECT line_number FROM rejected_lines").scalars().all()
        finally:
            db.engine.dispose()
    garbage = {n for n, (kind, _) in enumerate(lines, 1) if kind == "garbage"}
    rejected = {bad.line_number for bad in result.rejected_lines}
    assert result.status == "complete" and result.lines == len(lines)
    assert garbage <= rejected and sorted(kept) == sorted(rejected)
    assert not rejected & {n for n, (kind, _) in enumerate(lines, 1) if kind == "good"}
    first = {}
    for kind, line in lines:
        if kind == "good":
            value = json.loads(line)
            first.setdefault(natural_key(value), as_exported(value))
    for key, value in first.items():
        assert value in stored or any(  # a mutated line with the same natural key may have come first
            natural_key(s) == key for s in stored)
    assert result.inserted + result.duplicates + result.skipped + result.rejected == len(lines)


# --- the command line -------------------------------------------------------------------------

MALFORMED = [
    ("bias-report", "--since", "notadate"), ("bias-report", "--as-of", "2025-13-45"), ("bias-report", "--days", "-3"),
    ("bias-report", "--sessions", "0"), ("bias-report", "--sessions", "ten"), ("bias-report", "--format", "yaml"),
    ("bias-report", "--seed", "x"), ("bias-report", "--reviewer"),
    ("audit",), ("audit", "s", "--format", "html"),
    ("import",), ("import", "--format", "yaml", "f.jsonl"), ("import", "--strict=maybe", "f.jsonl"),
    ("export", "--min-consent", "9"), ("export", "--min-consent", "-1"), ("export", "--since", "yesterday"),
    ("export", "--format", "xml"), ("export", "--until", "2025-02-30"),
    ("export", "--since", "2025-02-01", "--until", "2025-01-01"),
    ("bias-report", "--since", "2025-01-01T12:00:00+02:00", "--until", "2025-01-01T10:00:00Z"),
    ("stats", "--format", "yaml"), ("sessions", "--sessions", "-1"), ("sessions", "-n", "1.5"),
    ("rejected", "--limit", "0"), ("rejected", "--import", "x"),
    ("simulate",), ("simulate", "-o", "-", "--sessions", "-1"), ("simulate", "-o", "-", "--position-effect", "a,b"),
    ("simulate", "-o", "-", "--end", "notadate"), ("simulate", "-o", "-", "--quality", "foo"),
    ("simulate", "-o", "-", "--noise", "-1"), ("simulate", "-o", "-", "--consent-level", "7"),
    ("simulate", "-o", "-", "--unscored", "2"), ("simulate", "-o", "-", "--schema-version", "abc"),
    ("simulate", "-o", "-", "--days", "-1"), ("simulate", "-o", "-", "--candidates-per-session", "0"),
    ("db", "downgrade"), ("db", "downgrade", "zzz"), ("db", "upgrade", "9999"), ("db", "current", "--format", "x"),
    ("db", "nonsense"), ("no-such-command",), ("--db",),
]


@pytest.mark.parametrize("args", MALFORMED, ids=" ".join)
def test_a_malformed_argument_is_a_usage_error_never_a_traceback(tmp_path, empty_database, args):
    shutil.copy(empty_database, tmp_path / "council.db")
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "council.db"), *args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


@settings(max_examples=EXAMPLES // 3, deadline=None, derandomize=FIXED,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(option=st.sampled_from([("export", "--since"), ("export", "--until"), ("bias-report", "--as-of"),
                               ("bias-report", "--since"), ("simulate", "--end")]),
       value=st.text(max_size=40).filter(lambda text: not text.startswith("-")))
def test_an_arbitrary_time_argument_is_accepted_or_a_usage_error(empty_database, option, value):
    command, name = option
    extra = ["-o", "-", "--sessions", "1"] if command == "simulate" else ["--format", "json"] * (command != "export")
    result = CliRunner().invoke(app, ["--db", str(empty_database), command, name, value, *extra])
    assert result.exit_code in (0, 2), (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
