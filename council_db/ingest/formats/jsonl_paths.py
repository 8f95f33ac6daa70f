"""``--from jsonl``: JSON Lines of any shape, one line a record, each role found by a field's
name or a dotted path into nested objects and lists (``score=result.score``,
``reviewer=judges.0.model``), mapped with ``--map`` as a CSV's columns are.

A line is read as any JSON object (msgspec), judged as every format's lines are (not UTF-8,
too deep, a number too long: the line is rejected with its reason), then made into a record
by formats/table_rows.py. A path whose whole text is a key of the line (``"judge.model"``)
names that key.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Iterable

import msgspec

from council_db.contract.fields import LineError
from council_db.errors import CouncilDbError
from council_db.ingest.formats.judge_lines import BOM
from council_db.ingest.formats.mapping import REQUIRED
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.table_rows import TableReader, Value, shown_columns
from council_db.ingest.lines import LineBatch
from council_db.ingest.sources import Source

MISSING = object()
SHOWN_PATH_DEPTH = 3  # paths listed for a first line, down to this depth


class Reader(TableReader):
    FORMAT = "jsonl"
    COLUMNS = "the first line's fields"

    def __init__(self, options: FormatOptions, source: Source):
        self.paths = {role: path.split(".") for role, path in options.mapping}
        super().__init__(options, source)

    def read_head(self, sample: bytes, options: FormatOptions) -> None:
        """Check the required roles' paths against the head's first JSON object."""
        self.head_lines = sample.split(b"\n")
        first = next((line for line in map(_object, self.head_lines) if line is not None), None)
        paths = [] if first is None else sorted(_paths(first))
        self.refuse_missing(paths)
        for role in REQUIRED if first is not None else ():  # no object in the head: lines are judged one by one
            if self._found(first, role) is MISSING:
                raise CouncilDbError(f"{self.source_name}: the first line has no {self.roles[role]!r} for {role}; "
                                     f"{self.COLUMNS} {shown_columns(paths)}")

    def sample_rows(self, cut: bool) -> Iterable[Value]:
        for line in self.head_lines[:-1] if cut else self.head_lines:
            found = _object(line)
            if found is not None:
                yield self._value_of(found)

    def key_of(self, role: str) -> str:
        return role

    def row_lines(self, batch: LineBatch) -> list[tuple[int, bytes, bytes]]:
        """Every line but blank ones, its text without surrounding blanks and byte order mark."""
        found = []
        for number, raw in enumerate(batch.lines, start=batch.first_line):
            text = raw.strip(b" \t\r").removeprefix(BOM)
            if text:
                found.append((number, raw, text))
        return found

    def _decoded(self, text: bytes) -> Value:
        """The line's values by role: NotJson or a LineError when it is no JSON object."""
        return self._value_of(super()._decoded(text))

    def rows_at_once(self, lines: list[tuple[int, bytes, bytes]]) -> list[dict]:
        """The lines as JSON objects (``column`` finds a role's values in all of them)."""
        return [super(Reader, self)._decoded(text) for _, _, text in lines]

    def column(self, rows: list, key: str) -> list:
        """A role's values in every line: a top-level field's in one pass (most mappings name
        only those), a deeper one's path by path."""
        path = self.roles[key]
        if "." not in path:
            values = list(map(dict.get, rows, repeat(path), repeat(MISSING)))
        elif (values := _through_objects(rows, path, self.paths[key])) is None:
            values = [self._found(row, key) for row in rows]
        if MISSING in values:  # no JSON value equals it: identity decides
            if key in REQUIRED:
                raise _missing(key, path)
            values = [None if value is MISSING else value for value in values]
        return values

    def _value_of(self, line: dict) -> Value:
        def value(role: str) -> Any:
            found = self._found(line, role)
            if found is MISSING and role in REQUIRED:
                raise _missing(role, self.roles[role])
            return None if found is MISSING else found
        return value

    def _found(self, line: dict, role: str) -> Any:
        """The value at the role's path, or MISSING."""
        whole = self.roles[role]
        if whole in line:
            return line[whole]
        found: Any = line
        for part in self.paths[role]:
            if isinstance(found, dict) and part in found:
                found = found[part]
            elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
                found = found[int(part)]
            else:
                return MISSING
        return found

    def _explain(self, error: Exception) -> LineError:
        if isinstance(error, msgspec.ValidationError):  # no object: a list, a number, a string
            return LineError(None, f"not a JSON object ({error}); each line must be one JSON object")
        return super()._explain(error)


def _through_objects(rows: list[dict], path: str, parts: list[str]) -> list | None:
    """The values at a dotted path in every row, a step at a time for all rows at once (C-speed
    passes, where a walk per row cost about 0.7 us a row and role); None when a row holds the
    whole path as one key (which names it) or a step meets anything but an object (a list, a
    value missing): those rows are walked one by one (``Reader._found``)."""
    try:
        if any(map(dict.__contains__, rows, repeat(path))):
            return None
        found: list = rows
        for part in parts:
            found = list(map(dict.get, found, repeat(part), repeat(MISSING)))
    except TypeError:  # dict.get of something not an object
        return None
    return found


def _missing(role: str, path: str) -> LineError:
    return LineError(path, f"missing; every line needs its {role} here (or map {role} to another field)")


def _object(line: bytes) -> dict | None:
    """A head line as a JSON object, or None."""
    try:
        found = msgspec.json.decode(line.strip().removeprefix(b"\xef\xbb\xbf"))
    except msgspec.DecodeError:
        return None
    return found if isinstance(found, dict) else None


def _paths(value: Any, prefix: str = "", depth: int = 1) -> Iterable[str]:
    """The dotted paths of an object's leaves (and of deeper objects as a whole)."""
    for key, item in value.items():
        path = f"{prefix}{key}"
        if isinstance(item, dict) and item and depth < SHOWN_PATH_DEPTH:
            yield from _paths(item, f"{path}.", depth + 1)
        else:
            yield path
