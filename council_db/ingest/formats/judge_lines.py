"""What every judge-log format shares: reading a batch of lines one JSON object at a time
into a format's msgspec struct, turning each into records, and explaining a line that does not
fit (its field, what it held by type only, what was expected), never quoting its text.

A format subclasses ``LineReader``: ``line_type`` is the struct of one line, ``EXPECTED``
says in words what each field must be, and ``records`` makes the records of one line.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, Union

import msgspec

from council_db.contract.fields import LineError
from council_db.contract.record import Record
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.rejected import from_line_error

BOM = b"\xef\xbb\xbf"
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=500)]  # as a record's reviewer and model
QuestionId = int | Name
Turn = Annotated[int, msgspec.Meta(ge=1, le=1_000)]
Judge = Union[Name, Annotated[list[Name], msgspec.Meta(min_length=1)]]  # llm_judge's [judge model, prompt name]

_FIELD = re.compile(r"`\$\.(\w+)|field `(\w+)`")
_GOT = re.compile(r"got `(\w+)`")
_LIMIT = re.compile(r"^Expected (.+?) - at ")  # msgspec's constraint, e.g. `array` of length >= 1


class LineReader:
    """Called with a batch of lines: each line decoded on its own (a bad one is rejected with
    its reason, the good ones kept), then made into records."""

    line_type: ClassVar[type]
    EXPECTED: ClassVar[dict[str, str]]
    FORMAT: ClassVar[str]

    def __init__(self) -> None:
        self._decoder = msgspec.json.Decoder(self.line_type)

    def __getstate__(self) -> dict[str, Any]:
        """Sent to a spawned worker without the decoder, which is made again there."""
        return {key: value for key, value in vars(self).items() if key != "_decoder"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._decoder = msgspec.json.Decoder(self.line_type)

    def records(self, line: Any) -> tuple[list[Record], int]:
        """The line's records, and how many of its judgments gave no verdict (no record)."""
        raise NotImplementedError

    def __call__(self, batch: LineBatch) -> Parsed:
        parsed = Parsed()
        for number, raw in enumerate(batch.lines, start=batch.first_line):
            text = raw.strip(b" \t\r").removeprefix(BOM)
            if not text:
                continue
            try:
                made, silent = self.records(self._decoder.decode(text))
            except (msgspec.ValidationError, msgspec.DecodeError, LineError) as error:
                parsed.rejected.append(from_line_error(number, raw, self._explain(error)))
                continue
            parsed.records.extend((number, record) for record in made)
            parsed.no_verdict += silent
        return parsed

    def _explain(self, error: Exception) -> LineError:
        """A line's first problem as a LineError naming the field and the fix. msgspec's
        messages give types and limits, never the input's text."""
        if isinstance(error, LineError):
            return error
        message = str(error)
        if not isinstance(error, msgspec.ValidationError):  # a ValidationError is a DecodeError too
            return LineError(None, f"not valid JSON ({message.removeprefix('JSON is malformed: ')}); each line must "
                                   f"be one JSON object as {self.FORMAT} writes it")
        found = _FIELD.search(message)
        field = next((name for name in found.groups() if name), None) if found else None
        if field is None:
            return LineError(None, f"not a JSON object with {self.FORMAT}'s fields ({message}): is this file "
                                   "another format? see council-db import --help")
        got, limit = _GOT.search(message), _LIMIT.search(message)
        problem = ("missing" if "missing required field" in message else f"got a {got[1]}" if got
                   else f"not {limit[1]}" if limit else "not valid")
        expected = self.EXPECTED.get(field, f"a value as {self.FORMAT} writes it")
        return LineError(field, f"{problem}; expected {expected}")


def iso_time(field: str, unix_seconds: float) -> str:
    """A Unix time as ISO-8601 UTC (the records' timestamp); LineError when no date can hold it."""
    try:
        return datetime.fromtimestamp(unix_seconds, tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        raise LineError(field, f"{unix_seconds!r} is not a Unix time in years 1970-9999; expected the seconds "
                               "since 1970 as FastChat writes them") from None


def judge_model(judge: str | list[str]) -> str:
    """The judge model of llm_judge's [judge model, prompt name] (or of a plain name)."""
    return judge if isinstance(judge, str) else judge[0]


def named(field: str, value: str) -> str:
    """A name a record stores, refused if it holds a NUL character (no database keeps one in text)."""
    if "\x00" in value:
        raise LineError(field, "contains a NUL character (\\u0000), which databases cannot store as text; remove it")
    return value
