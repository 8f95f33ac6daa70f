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

import math
from typing import Any, Callable, ClassVar, Iterable

from council_db.contract.fields import METADATA_VALUE_MAX_CHARS, REVIEWER_KINDS, LineError
from council_db.contract.timestamps import timestamp_us
from council_db.errors import CouncilDbError
from council_db.ingest.formats.judge_lines import LineReader, Values, iso_time
from council_db.ingest.formats.mapping import REQUIRED, missing_roles, suggested_map
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.head import SAMPLE_BYTES, head
from council_db.ingest.sources import Source

DISPLAY_SLOTS = "1.2.0"  # the schema whose position is the slot an answer was shown in
SHOWN_COLUMNS = 40
# Scales a judge's scores are usually on, smallest first: an inferred scale is the first
# that holds every observed score (formats/table_rows.inferred_scale)
USUAL_TOPS = (5, 7, 10, 100)
Value = Callable[[str], Any]  # a row's raw value for a role; None when it gives none


class TableReader(LineReader):
    """A reader of rows through a mapping; a format says how to find a role's value in a row
    (``value_of``), what its head shows as columns (``columns``) and its sample rows."""

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
        self.scale = options.scale or self._inferred_scale(len(sample) == SAMPLE_BYTES)
        self.schema = DISPLAY_SLOTS if "position" in self.roles else None
        self.made_from = {field: self.roles[role] for field, role in MADE_FROM.items() if role in self.roles}

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

    def records(self, line: Value) -> tuple[list[Values], int]:
        return [self.record(line)], 0

    def record(self, value: Value) -> Values:
        """The record of one row, whose values ``value`` finds by role."""
        roles = self.roles
        optional = {role: value(role) for role in ("position", "length", "answer_text", "time", "reviewer_kind",
                                                   "category") if role in roles}
        category = text(roles.get("category"), optional.get("category"), METADATA_VALUE_MAX_CHARS)
        return dict(
            schema_version=self.schema, session_id=name(roles["session"], value("session")),
            timestamp=time_of(roles.get("time"), optional.get("time")),
            reviewer_id=name(roles["reviewer"], value("reviewer")), model_id=name(roles["candidate"], value("candidate")),
            position=count(roles.get("position"), optional.get("position")),
            response_length_chars=self.length(optional),
            score_value=score(roles["score"], value("score")), score_scale=self.scale,
            query_metadata=None if category is None else {"category": category},
            reviewer_kind=kind(roles.get("reviewer_kind"), optional.get("reviewer_kind")),
        )

    def length(self, optional: dict[str, Any]) -> int | None:
        """The answer's characters: the length column, or the answer's text counted."""
        if "answer_text" in self.roles:
            answer = text(self.roles["answer_text"], optional["answer_text"], None)
            return None if answer is None else len(answer)
        return count(self.roles.get("length"), optional.get("length"))

    def _made_from(self, error: LineError) -> LineError:
        """A record field's problem told under the column (or path) it came from."""
        column = self.made_from.get(error.field or "")
        return error if column is None else LineError(column, error.problem)

    def _inferred_scale(self, cut: bool) -> str:
        """The scale of the head's scores, with a warning saying so and how to set it."""
        scores = []
        for value in self.sample_rows(cut):
            try:
                scores.append(score(self.roles["score"], value("score")))
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


MADE_FROM = {"session_id": "session", "model_id": "candidate", "reviewer_id": "reviewer", "score_value": "score",
             "position": "position", "response_length_chars": "length", "timestamp": "time",
             "reviewer_kind": "reviewer_kind", "query_metadata": "category"}


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


def plain(number: float) -> str:
    """A number as a scale writes it: no exponent, no trailing zeros."""
    return format(number, "f").rstrip("0").rstrip(".") or "0"


def name(column: str, value: Any) -> str:
    """A session, candidate or reviewer: text, or a number written as text."""
    if isinstance(value, bool) or value is None or value == "":
        raise LineError(column, f"{'empty' if value in (None, '') else 'true or false'}; every row needs one "
                                "(a name or an id)")
    if isinstance(value, (int, float)):
        return str(value)
    if not isinstance(value, str):
        raise LineError(column, f"got {_kind_of(value)}; expected a name or an id")
    return value


def score(column: str, value: Any) -> float:
    """A score: a finite number (text of one in a CSV)."""
    number = _number(column, value, "the score as a number, e.g. 7 or 0.5")
    if number is None:
        raise LineError(column, "empty; every row needs its score (a number, e.g. 7 or 0.5)")
    return number


def count(column: str | None, value: Any) -> int | None:
    """A display slot or a length: a whole number from 0; None when not given."""
    if column is None:
        return None
    number = _number(column, value, "a whole number from 0")
    if number is None:
        return None
    if number < 0 or number != int(number) or number > 2**31 - 1:
        raise LineError(column, f"{plain(number)} is not a whole number from 0 to {2**31 - 1:,}")
    return int(number)


def time_of(column: str | None, value: Any) -> str | None:
    """An ISO-8601 time, or the seconds since 1970 (as an ISO-8601 time); None when not given."""
    if column is None or value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            seconds: float | None = float(value)
        except ValueError:
            seconds = None
        if seconds is None:
            try:
                timestamp_us(value)
            except LineError as error:
                raise LineError(column, f"{error.problem}, or the seconds since 1970") from None
            return value
        value = seconds
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LineError(column, f"got {_kind_of(value)}; expected an ISO-8601 time or the seconds since 1970")
    try:
        return iso_time(column, value)
    except LineError:
        raise LineError(column, f"{value:g} seconds since 1970 is outside years 1970-9999; expected an ISO-8601 "
                                "time or the seconds since 1970") from None


def kind(column: str | None, value: Any) -> str | None:
    """The reviewer's kind as the row states it; None when it does not."""
    if column is None or value is None or value == "":
        return None
    if value not in REVIEWER_KINDS:
        raise LineError(column, f"not a reviewer kind; expected one of {', '.join(REVIEWER_KINDS)}")
    return value


def text(column: str | None, value: Any, limit: int | None) -> str | None:
    """A text value (a category, an answer); None when not given."""
    if column is None or value is None or value == "":
        return None
    if not isinstance(value, str):
        raise LineError(column, f"got {_kind_of(value)}; expected text")
    if limit is not None and len(value) > limit:
        raise LineError(column, f"has {len(value):,} characters; at most {limit} are kept (a category is a word "
                                "or two)")
    return value


def _number(column: str, value: Any, expected: str) -> float | None:
    """A finite number from a JSON number or its text; None when empty."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise LineError(column, f"a text of {len(value):,} characters that is no number; expected "
                                    f"{expected}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LineError(column, f"got {_kind_of(value)}; expected {expected}")
    if not math.isfinite(value):
        raise LineError(column, f"not a finite number; expected {expected}")
    return float(value)


def _kind_of(value: Any) -> str:
    """A JSON value's type in words, never the value (it may be anything)."""
    return {bool: "true or false", dict: "an object", list: "a list", str: "text", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)
