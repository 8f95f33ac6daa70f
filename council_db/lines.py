"""Reading JSONL in byte-accurate batches and validating them fast.

Validating 2,000 lines in one pydantic call is ~3x faster than one call per line. Joining
lines into one JSON array is only safe when no line can swallow its neighbour, so a line
joins the batch only if it is a flat object: starts with "{", ends with "}", has no
brackets, and has balanced quotes (no string runs past its end). Anything else is
validated on its own, as is every line of a batch that fails, so each bad line gets its
own message and the good ones are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator, Sequence

from pydantic import ValidationError

from council_db.contract import FIELDS, METADATA_KEYS, LineError
from council_db.validation import LINE, LINES, explain

CHUNK_BYTES = 1 << 20
BATCH_LINES = 2_000
RAW_KEEP_CHARS = 1_000
BOM = b"\xef\xbb\xbf"


@dataclass
class LineBatch:
    first_line: int  # 1-based number of lines[0]
    lines: list[bytes]
    end_offset: int  # bytes consumed up to and including this batch


@dataclass
class Rejected:
    line_number: int
    field: str | None
    reason: str
    raw: str


@dataclass
class Parsed:
    records: list[tuple[int, dict]] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


def read_batches(
    stream: BinaryIO, *, offset: int = 0, first_line: int = 1, keep_partial_tail: bool = True,
    length: int | None = None,
) -> Iterator[LineBatch]:
    """Complete lines, in batches, with the byte offset after each batch.

    ``length`` stops after that many bytes (a segment of a file read in parallel). A last
    line without a newline may be a record still being written: with ``keep_partial_tail``
    it is only taken if it is a complete JSON value, else left for the next import (the
    offset stops before it).
    """
    pending = b""
    line_no = first_line
    consumed = offset
    remaining = length
    batch: list[bytes] = []
    while chunk := stream.read(CHUNK_BYTES if remaining is None else min(CHUNK_BYTES, remaining)):
        if remaining is not None:
            remaining -= len(chunk)
        if consumed == 0 and not pending and chunk.startswith(BOM):
            chunk, consumed = chunk[len(BOM):], len(BOM)
        pieces = (pending + chunk).split(b"\n")
        pending = pieces.pop()
        start = 0
        while start < len(pieces):  # whole slices of lines, not one line at a time: this is the hot path
            taken = pieces[start:start + BATCH_LINES - len(batch)]
            start += len(taken)
            batch += taken
            consumed += sum(map(len, taken)) + len(taken)
            if len(batch) == BATCH_LINES:
                yield LineBatch(line_no, batch, consumed)
                line_no += len(batch)
                batch = []
    if pending.strip() and (not keep_partial_tail or _is_complete_json(pending)):
        batch.append(pending)
        consumed += len(pending)
    if batch:
        yield LineBatch(line_no, batch, consumed)


def _is_complete_json(data: bytes) -> bool:
    try:
        LINE.validate_json(data)
    except ValidationError as error:
        return all(e["type"] != "json_invalid" for e in error.errors())
    return True


def _batchable(line: bytes) -> bool:
    """True when joining this line into a JSON array cannot merge it with a neighbour."""
    if not (line[:1] == b"{" and line[-1:] == b"}") or b"[" in line or b"]" in line:
        return False
    if b"\\" in line:
        line = line.replace(b"\\\\", b"")
        return (line.count(b'"') - line.count(b'\\"')) % 2 == 0
    return line.count(b'"') % 2 == 0


def parse_batch(batch: LineBatch) -> Parsed:
    """Validated records (line number, dict) and rejected lines with their reasons."""
    parsed = Parsed()
    # Searching for a one-byte string is a memchr; a longer one costs ~50x more (measured),
    # so rare longer strings are looked for only where a byte of theirs occurs.
    lines = [raw.strip(b" \t\r") for raw in batch.lines]
    whole = b"\n".join(lines)
    if BOM[:1] in whole and BOM in whole:  # files joined with cat keep each one's byte order mark
        lines = [line.removeprefix(BOM).strip(b" \t\r") for line in lines]
        whole = b"\n".join(lines)
    if b"[" in whole or b"]" in whole or b"\\" in whole:
        flat = [_batchable(line) for line in lines]
    else:  # the common case, checked in one pass per batch instead of one per line
        flat = [line[:1] == b"{" and line[-1:] == b"}" and not line.count(b'"') % 2 for line in lines]
    numbers: Sequence[int] = range(batch.first_line, batch.first_line + len(lines))
    joinable = lines
    if not all(flat):
        numbers, joinable = [], []
        for number, line, batchable in zip(range(batch.first_line, batch.first_line + len(lines)), lines, flat):
            if batchable:
                numbers.append(number)
                joinable.append(line)
            elif line:
                _parse_one(number, line, parsed)
    if joinable and not _parse_joined(numbers, joinable, parsed):
        for number, line in zip(numbers, joinable):
            _parse_one(number, line, parsed)
    if b"\\" in whole and b"\\u0000" in whole:
        _reject_nul(parsed, batch.first_line, lines)
    if parsed.rejected or len(numbers) != len(parsed.records):
        parsed.records.sort(key=lambda item: item[0])
    return parsed


def _nul_field(record: dict) -> str | None:
    """The first stored field holding a NUL character, if any."""
    for key, value in record.items():
        if key == "query_metadata" and isinstance(value, dict):
            if any(isinstance(v, str) and "\x00" in v for k, v in value.items() if k in METADATA_KEYS):
                return key
        elif isinstance(value, str) and "\x00" in value:
            return key
    return None


def _reject_nul(parsed: Parsed, first_line: int, lines: list[bytes]) -> None:
    """PostgreSQL cannot store a NUL character in text, so no backend takes one: the same
    file must import the same way into SQLite and PostgreSQL."""
    kept = []
    for number, record in parsed.records:
        field_name = _nul_field(record)
        if field_name is None:
            kept.append((number, record))
            continue
        problem = LineError(field_name, "contains a NUL character (\\u0000), which databases cannot store "
                                        "as text; remove it from the value")
        parsed.rejected.append(reject(number, problem, lines[number - first_line]))
    parsed.records[:] = kept


def _parse_joined(numbers: Sequence[int], joinable: list[bytes], parsed: Parsed) -> bool:
    try:
        values = LINES.validate_json(b"[" + b",".join(joinable) + b"]")
    except ValidationError:
        return False
    if len(values) != len(joinable):
        return False
    parsed.records.extend(zip(numbers, values))
    return True


def _parse_one(number: int, line: bytes, parsed: Parsed) -> None:
    try:
        parsed.records.append((number, LINE.validate_json(line)))
    except ValidationError as error:
        problem = explain(error)
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as bad:
            problem = LineError(None, f"not UTF-8 text (byte 0x{line[bad.start]:02x} at column {bad.start + 1}); "
                                      "save the file as UTF-8")
        parsed.rejected.append(Rejected(number, problem.field, str(problem), redact(line)))


def reject(number: int, line_error: LineError, raw: bytes) -> Rejected:
    return Rejected(number, line_error.field, str(line_error), redact(raw))


# String values shown in a rejected line: the record's own fields (query_metadata holds an
# object, so a string there may be anything) and the known metadata keys.
_SHOWN_VALUES = (set(FIELDS) - {"query_metadata"}) | set(METADATA_KEYS)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"?(\s*:)?')
_REDACTED = '"[redacted]"'


def redact(raw: bytes) -> str:
    """A rejected line as kept for inspection: truncated, and with every string blanked
    unless it is a key or the value of a record field or a known metadata key, so a raw
    query never reaches the database, wherever in the line it was (an unknown key, a list,
    a nested object, a line that is not even JSON)."""
    text = raw.decode("utf-8", errors="replace").replace("\x00", "\ufffd")  # PostgreSQL text holds no NUL
    out: list[str] = []
    shown_key = None  # the key just read, while its value may follow
    position = 0
    for match in _STRING.finditer(text):
        between = text[position:match.start()]
        out.append(between)
        if match[2] is not None:  # a key
            out.append(match[0])
            shown_key = match[1] if match[1] in _SHOWN_VALUES else None
        else:
            out.append(match[0] if shown_key is not None and not between.strip() else _REDACTED)
            shown_key = None
        position = match.end()
    out.append(text[position:])
    return "".join(out)[:RAW_KEEP_CHARS]
