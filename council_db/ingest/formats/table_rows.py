"""What ``--from csv`` and ``--from jsonl`` share: a row's values, found by the mapping's
roles (formats/mapping.py), made into one record, and the scale of its scores.

A row is one record: its session, candidate, reviewer and score, and what the mapping adds
(a display slot, a length or the answer's text, a time, the reviewer's kind, a category). A
value that cannot be what its role needs rejects the row, naming the column and the fix; a
record field the contract refuses is told under the column it came from. Without a position
a record is in no display slot (position analyses leave it out, and the import says how
many); without a time its session is undated; without a length its length is unknown.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Callable, ClassVar, Iterable

import msgspec

from council_db.contract.fields import LineError
from council_db.contract.record import Record
from council_db.errors import CouncilDbError
from council_db.ingest.formats.judge_lines import LineReader, NotJson, Values
from council_db.ingest.formats.mapping import REQUIRED, missing_roles, suggested_map
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.row_values import ROLE_FIELDS, plain, score, whole_column
from council_db.ingest.head import SAMPLE_BYTES, head
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.sources import Source

DISPLAY_SLOTS = "1.2.0"  # the schema whose position is the slot an answer was shown in
SHOWN_COLUMNS = 40
# Scales a judge's scores are usually on, smallest first: an inferred scale is the first
# that holds every observed score (formats/table_rows.inferred_scale)
USUAL_TOPS = (5, 7, 10, 100)
Value = Callable[[Any], Any]  # a row's raw value for a role's key (formats say what a key is); None when absent


class TableReader(LineReader):
    """A reader of rows through a mapping; a format learns its columns from the file's head
    (``read_head``), says where a role's value is in a row (``key_of``) and gives sample rows."""

    line_type: ClassVar[type] = dict
    FORMAT: ClassVar[str]
    COLUMNS: ClassVar[str]  # what the file's names of values are, in an error: "the header's columns"

    def __init__(self, options: FormatOptions, source: Source):
        super().__init__()
        self.roles = dict(options.mapping)
        self.source_name = source.name
        sample = head(source)
        if sample is None:
            raise CouncilDbError(f"{source.name}: a pipe other than stdin cannot be read twice, and its first lines "
                                 f"are needed first: give it as stdin (... | council-db import - --from {self.FORMAT})")
        self.read_head(sample, options)
        self.warnings: list[str] = []
        scale = options.scale or self._inferred_scale(len(sample) == SAMPLE_BYTES)
        self.fields = [(ROLE_FIELDS[role][0], self.key_of(role), column, ROLE_FIELDS[role][1])
                       for role, column in self.roles.items()]
        self.constant = {"schema_version": DISPLAY_SLOTS if "position" in self.roles else None, "score_scale": scale}
        if "length" not in self.roles and "answer_text" not in self.roles:
            self.constant["response_length_chars"] = None  # unknown: the record has no default for it
        self.made_from = {field: column for field, _, column, _ in self.fields}

    @classmethod
    def check_source(cls, options: FormatOptions, source: Source) -> None:
        """The mapping against the file's columns, and a scale, before the database is opened."""
        cls(options, source)

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """None: any row may be read, through the mapping."""
        return ()

    def read_head(self, sample: bytes, options: FormatOptions) -> None:
        """Learn the file's columns from its first bytes and check the mapping against them."""
        raise NotImplementedError

    def key_of(self, role: str) -> Any:
        """What finds the role's value in a row (a column's number, a path)."""
        raise NotImplementedError

    def sample_rows(self, cut: bool) -> Iterable[Value]:
        """The rows of the head (``cut``: it ends inside a row, which is left out)."""
        raise NotImplementedError

    def refuse_missing(self, columns: list[str]) -> None:
        """CouncilDbError naming the required roles the mapping lacks, with the file's columns."""
        missing = missing_roles(self.roles)
        if missing:
            raise CouncilDbError(f"{self.source_name}: the mapping gives no {', '.join(missing)} (needed: "
                                 f"{', '.join(REQUIRED)}); {self.COLUMNS} {shown_columns(columns)}: add them, e.g. "
                                 f"--map {suggested_map(columns)}")

    def row_lines(self, batch: LineBatch) -> list[tuple[int, bytes, bytes]]:
        """The batch's lines that hold a row: number, the line as read, the row's text."""
        raise NotImplementedError

    def __call__(self, batch: LineBatch) -> Parsed:
        """A batch's records, read a column at a time; a batch with a bad row, or with bytes
        that may give text no database stores (a NUL, a lone surrogate from a JSON escape),
        is read a row at a time, which says what is wrong with each."""
        lines = self.row_lines(batch)
        whole = b"".join(raw for _, raw, _ in lines)
        if b"\x00" not in whole and b"\\u" not in whole:
            parsed = self._at_once(lines)
            if parsed is not None:
                return parsed
        parsed = Parsed()
        for number, raw, text in lines:
            self._read(number, raw, text, parsed)
        return parsed

    def _at_once(self, lines: list[tuple[int, bytes, bytes]]) -> Parsed | None:
        """The lines' records, each field converted for all rows at once and the records
        checked in one call (a row at a time cost 30 us a record; see benchmarks/bench_csv.py);
        None when any line is bad."""
        try:
            rows = self.rows_at_once(lines)
            columns = {field: whole_column(column, convert, self.column(rows, key))
                       for field, key, column, convert in self.fields}
            records = msgspec.convert(list(zip(*_in_record_order({**columns, **self.constant}, len(rows)))),
                                      list[RecordRow])
        except (LineError, NotJson, msgspec.ValidationError):
            return None
        return Parsed(records=list(zip([number for number, _, _ in lines], records)))

    def rows_at_once(self, lines: list[tuple[int, bytes, bytes]]) -> list:
        """The lines' rows, as ``column`` reads them; LineError or NotJson for a bad one."""
        return [self._decoded(text) for _, _, text in lines]

    def column(self, rows: list, key: Any) -> list:
        """One role's values in every row of ``rows_at_once``."""
        return [row(key) for row in rows]

    def records(self, line: Value) -> tuple[list[Values], int]:
        return [self.record(line)], 0

    def record(self, value: Value) -> Values:
        """The record of one row, whose values ``value`` finds by key."""
        values = dict(self.constant)
        for field, key, column, convert in self.fields:
            values[field] = convert(column, value(key))
        return values

    def _made_from(self, error: LineError) -> LineError:
        """A record field's problem told under the column (or path) it came from."""
        column = self.made_from.get(error.field or "")
        return error if column is None else LineError(column, error.problem)

    def _inferred_scale(self, cut: bool) -> str:
        """The scale of the head's scores, with a warning saying so and how to set it."""
        scores = []
        column, key = self.roles["score"], self.key_of("score")
        for value in self.sample_rows(cut):
            try:
                scores.append(score(column, value(key)))
            except LineError:
                continue
        if not scores:
            raise CouncilDbError(f"{self.source_name}: no score in the first rows to infer the scale from: give "
                                 "--scale LOW-HIGH (e.g. --scale 1-10)")
        scale = inferred_scale(min(scores), max(scores))
        self.warnings.append(f"no --scale: the scores of the first {len(scores):,} rows lie in "
                             f"{plain(min(scores))}..{plain(max(scores))}, so the scale is taken as {scale} (a score "
                             "outside it is kept but left out of analyses); give --scale LOW-HIGH to set it")
        return scale


# A record as a tuple of Record's fields, in its order, held to the same checks: msgspec makes
# a batch of them from tuples at half the cost of a dict a record converted to Record (1.2
# against 2.5 us); the normaliser reads a record's fields by name, as Record's.
RecordRow = msgspec.defstruct("RecordRow", [(field.name, field.type) for field in msgspec.structs.fields(Record)],
                              array_like=True, gc=False)
_DEFAULTS = {field.name: field.default for field in msgspec.structs.fields(Record) if not field.required}


def _in_record_order(values: dict[str, Any], rows: int) -> list[Iterable]:
    """Per Record field, in its order: its column (a list), or its one value (or its
    default) repeated for every row."""
    return [found if isinstance(found := values.get(name, _DEFAULTS.get(name)), list) else repeat(found, rows)
            for name in RecordRow.__struct_fields__]


def shown_columns(columns: list[str]) -> str:
    """The file's columns (or fields) as an error lists them."""
    shown = ", ".join(columns[:SHOWN_COLUMNS])
    more = f" and {len(columns) - SHOWN_COLUMNS:,} more" if len(columns) > SHOWN_COLUMNS else ""
    return f"are: {shown}{more}" if columns else "are none"


def inferred_scale(low: float, high: float) -> str:
    """The usual scale holding scores from ``low`` to ``high``: 0-1, then 0- or 1- 5, 7, 10
    or 100; else the observed range itself."""
    if 0 <= low and high <= 1:
        return "0-1"
    bottom = 0 if low < 1 else 1
    if low >= 0:
        for top in USUAL_TOPS:
            if high <= top:
                return f"{bottom}-{top}"
    return f"{plain(low)}-{plain(high)}" if low < high else f"{plain(low)}-{plain(low + 1)}"
