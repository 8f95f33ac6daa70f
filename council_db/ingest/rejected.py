"""What is kept of a rejected line: enough to find and fix it in its file, never its text.

Redacting a line by pattern cannot win: a line cut short by a crash and run into the next,
shifted quotes, text outside any quotes and query text used as a key all slipped through
(issue 14). So a line that is not a JSON object keeps only its number, byte length, a hash
and where parsing stopped. A JSON object also keeps the values of its record fields that
passed their checks (names, ids, numbers: what an accepted line stores too), the JSON type
of the others and of query_metadata (which may hold anything), and how many unknown keys
it had, never their names (query text can be a key).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import ValidationError
from pydantic_core import from_json

from council_db.contract.fields import LINE_FIELDS, LineError
from council_db.contract.scales import score_scale
from council_db.contract.schema_versions import schema_version
from council_db.contract.timestamps import timestamp_us
from council_db.ingest.validation import explain, json_error, json_type

BOM = b"\xef\xbb\xbf"
# Values a field's own check may still refuse after pydantic took them (lines.py, normalise.py)
_CHECKS: dict[str, Callable[[Any], object]] = {
    "timestamp": timestamp_us, "schema_version": schema_version, "score_scale": score_scale,
}


@dataclass
class Rejected:
    line_number: int
    field: str | None
    reason: str
    byte_length: int  # of the line without its newline and surrounding blanks
    digest: bytes  # its SHA-256; stored only keyed by the database's own key (importer.py)
    error_column: int | None = None  # the byte where JSON parsing stopped (1 = first)
    known_values: str | None = None  # JSON: a record field's value, or {"type": ...} when withheld
    unknown_keys: int | None = None


def from_validation(number: int, line: bytes, error: ValidationError) -> Rejected:
    """A line pydantic refused: its first problem, and the values that passed."""
    line = _trimmed(line)
    problem, column = explain(error), json_error(error)[1]
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        column = bad.start + 1
        problem = LineError(None, f"not UTF-8 text (byte 0x{line[bad.start]:02x} at byte {column}); "
                                  "save the file as UTF-8")
    refused = {e["loc"][0] for e in error.errors(include_url=False) if e["loc"] and e["type"] != "missing"}
    return _rejected(number, line, problem, column, None if column else refused)


def from_line_error(number: int, line: bytes, problem: LineError) -> Rejected:
    """A line that passed pydantic but not a check of the contract (a time, a scale, a NUL)."""
    return _rejected(number, _trimmed(line), problem, None, {problem.field})


def _trimmed(line: bytes) -> bytes:
    return line.strip(b" \t\r").removeprefix(BOM).strip(b" \t\r")


def _rejected(number: int, line: bytes, problem: LineError, column: int | None,
              refused: set[str | None] | None) -> Rejected:
    """``refused`` None: the line is no JSON object to look into."""
    found = Rejected(number, problem.field, str(problem), len(line), hashlib.sha256(line).digest(), column)
    values = None
    if refused is not None:
        try:
            values = from_json(line)
        except ValueError:
            values = None
    if isinstance(values, dict):
        found.known_values = _known_values(values, refused or set())
        found.unknown_keys = sum(key not in LINE_FIELDS for key in values)
    return found


def _known_values(values: dict[str, Any], refused: set[str | None]) -> str:
    """The record fields' values that passed every check, else their JSON type. ASCII JSON:
    a lone surrogate from a \\ud800 escape must not break the database's text encoding."""
    known = {}
    for key in LINE_FIELDS:
        if key in values:
            value = values[key]
            kept = key not in refused and key != "query_metadata" and _passes(key, value)
            known[key] = value if kept else {"type": json_type(value)}
    return json.dumps(known)


def _passes(key: str, value: Any) -> bool:
    if isinstance(value, str) and "\x00" in value:
        return False
    check = _CHECKS.get(key)
    try:
        if check is not None:
            check(value)
    except (LineError, ValueError, OverflowError, TypeError):
        return False
    return True
