"""What every judge-log format shares: reading a batch of lines one JSON object at a time
into a format's msgspec struct, turning each into records, and explaining a line that does not
fit (its field, what it held by type only, what was expected), never quoting its text.

A line goes through what an llm-council line goes through: pydantic judges whether it is
JSON text at all (where msgspec could judge otherwise: bytes that are not UTF-8, nesting or
numbers too deep or long in a field the format does not read), and each record it makes is
held to the record's own limits and to text a database can store (contract/), so a line of
any format is taken, or rejected with a reason, and never stops the import.

A format subclasses ``LineReader``: ``line_type`` is the struct of one line, ``EXPECTED`` says
in words what each field must be, ``MADE_FROM`` which of the line's fields each record field
is made from, and ``records`` makes the record values of one line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import repeat
from typing import Annotated, Any, ClassVar, Union

import msgspec
from pydantic import ValidationError

from council_db.contract.fields import MAX_NAME, LineError
from council_db.contract.record import ReadRecord, checked_record
from council_db.contract.record_columns import RecordColumns
from council_db.contract.storable import all_storable, unstorable_field
from council_db.contract.timestamps import EPOCH, time_text
from council_db.ingest.fast_decode import any_hides_from_msgspec, hides_from_msgspec, is_utf8
from council_db.ingest.formats.judge_columns import LAST_FAST_SECOND
from council_db.ingest.lines import LineBatch, Parsed
from council_db.ingest.rejected import from_line_error, from_validation
from council_db.ingest.validation import json_refusal, record_problem

BOM = b"\xef\xbb\xbf"
_MICROSECOND = timedelta(microseconds=1)
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)]  # as a record's reviewer and model
QuestionId = int | Name
Turn = Annotated[int, msgspec.Meta(ge=1, le=1_000)]
# llm_judge's [judge model, prompt name], as a tuple: hashable, so a batch's judges are told apart at C speed
Judge = Union[Name, Annotated[tuple[Name, ...], msgspec.Meta(min_length=1)]]
Values = dict[str, Any]  # one record's fields, checked by contract.record.checked_record

_FIELD = re.compile(r"`\$\.(\w+)|field `(\w+)`")
_GOT = re.compile(r"got `(\w+)`")
_LIMIT = re.compile(r"^Expected (.+?) - at ")  # msgspec's constraint, e.g. `array` of length >= 1


class NotJson(Exception):
    """A line pydantic does not read as JSON text; ``refusal`` says why."""

    def __init__(self, refusal: ValidationError):
        super().__init__(str(refusal))
        self.refusal = refusal


@dataclass
class ParsedColumns(Parsed):
    """A batch read as columns (no record struct each: contract/record_columns)."""

    columns: RecordColumns | None = None


class LineReader:
    """Called with a batch of lines: each line decoded on its own (a bad one is rejected with
    its reason, the good ones kept), then made into records."""

    line_type: ClassVar[type]
    EXPECTED: ClassVar[dict[str, str]]
    MADE_FROM: ClassVar[dict[str, str]]  # record field -> the line's field, or how it is made
    FORMAT: ClassVar[str]

    def __init__(self) -> None:
        self._decoder = msgspec.json.Decoder(self.line_type)

    def __getstate__(self) -> dict[str, Any]:
        """Sent to a spawned worker without the decoder, which is made again there."""
        return {key: value for key, value in vars(self).items() if key != "_decoder"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._decoder = msgspec.json.Decoder(self.line_type)

    @classmethod
    def check_source(cls, options: Any, source: Any) -> None:
        """CouncilDbError when the file cannot be of this format whatever its lines say (a
        document format's layout), before the database is opened; lines are judged later."""

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """The fields every line of the format has."""
        return required(cls.line_type)

    def records(self, line: Any) -> tuple[list[Values], int]:
        """The line's records, and how many of its judgments gave no verdict (no record)."""
        raise NotImplementedError

    def columns(self, numbers: list[int], lines: list) -> ParsedColumns | None:
        """The records of a batch of decoded lines as columns, held to the record's limits;
        None when any line needs a look of its own (it may be refused), or where the format
        makes no columns: its records are then made one by one (``records``)."""
        return None

    def end(self) -> Parsed:
        """What is left when the input ends: a document reader's entry the file cut short. A
        line holds a whole record, so a line reader has nothing left."""
        return Parsed()

    def __call__(self, batch: LineBatch) -> Parsed:
        """The batch decoded in one call and its records checked in one (a line at a time cost
        the judge formats 4-10 us a line in calls alone); a batch with a line msgspec refuses,
        or a record the checks refuse, is read a line (or a record) at a time, which says why."""
        numbers, raws, texts, decoded = decoded_batch(self._decoder, batch)
        parsed = Parsed()
        columns = None if decoded is None else self.columns(list(numbers), decoded)
        if columns is not None:
            return columns
        if decoded is None:
            for number, raw, text in zip(numbers, raws, texts):
                self._read(number, raw, text, parsed)
            return parsed
        made = []
        for number, raw, line in zip(numbers, raws, decoded):
            try:
                made.append((number, raw, *self.line_records(number, line)))
            except LineError as error:
                parsed.rejected.append(from_line_error(number, raw, error))
        self._check_at_once(made, parsed)
        return parsed

    def _check_at_once(self, made: list[tuple[int, bytes, list[Values], int]], parsed: Parsed) -> None:
        """The lines' records held to the contract in one call, and to storable text in one
        look (contract.storable.all_storable); a line at a time (``_checked``) when either refuses."""
        try:
            records = msgspec.convert([values for _, _, line, _ in made for values in line], list[ReadRecord])
        except msgspec.ValidationError:
            records = None
        if records is None or not all_storable(records):
            for number, raw, line, silent in made:
                self._take(number, raw, line, silent, parsed)
            return
        taken = iter(records)
        for number, _, line, silent in made:
            parsed.records.extend((number, next(taken)) for _ in line)
            parsed.no_verdict += silent

    def _read(self, number: int, raw: bytes, text: bytes, parsed: Parsed) -> None:
        """One line: its records, or its rejection."""
        try:
            made, silent = self.line_records(number, self._decoded(text))
        except NotJson as error:
            parsed.rejected.append(from_validation(number, raw, error.refusal))
        except LineError as error:
            parsed.rejected.append(from_line_error(number, raw, error))
        else:
            self._take(number, raw, made, silent, parsed)

    def _take(self, number: int, raw: bytes, made: list[Values], silent: int, parsed: Parsed) -> None:
        """One line's records, each checked, or the line's rejection."""
        try:
            records = [self._checked(values) for values in made]
        except LineError as error:
            parsed.rejected.append(from_line_error(number, raw, error))
        else:
            parsed.records.extend((number, record) for record in records)
            parsed.no_verdict += silent

    def line_records(self, number: int, line: Any) -> tuple[list[Values], int]:
        """``records`` of the line numbered ``number`` (a reader that needs the number overrides this)."""
        return self.records(line)

    def _decoded(self, text: bytes) -> Any:
        """The line as the format's struct: NotJson when it is no JSON text, LineError when a
        field does not fit."""
        if not is_utf8(text) or hides_from_msgspec(text):
            _json_text(text)
        try:
            return self._decoder.decode(text)
        except msgspec.ValidationError as error:  # a ValidationError is a DecodeError too
            raise self._explain(error) from None
        except msgspec.DecodeError as error:
            _json_text(text)
            raise self._explain(error) from None

    def _checked(self, values: Values) -> ReadRecord:
        """The record, held to the limits of the contract, or a LineError naming the line's field."""
        try:
            record = checked_record(values)
        except msgspec.ValidationError as error:
            raise self._made_from(record_problem(values, error)) from None
        found = unstorable_field(record)
        if found is not None:
            raise self._made_from(LineError(*found))
        return record

    def _made_from(self, error: LineError) -> LineError:
        """A record field's problem told as the line's: under the line's field when the record
        field is one, else saying what it is made from."""
        source = self.MADE_FROM.get(error.field or "")
        if source is None:
            return error
        if source.isidentifier():
            return LineError(source, error.problem)
        return LineError(error.field, f"{error.problem} (the record's {error.field} is {source})")

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


def decoded_batch(decoder: msgspec.json.Decoder, batch: LineBatch
                  ) -> tuple[range | list[int], list[bytes], list[bytes], list | None]:
    """The batch's line numbers, lines as read and texts (``stripped``'s), and the texts as
    ``decoder``'s structs decoded in one call (None when msgspec refuses a line: a line at a
    time then says which). A batch whose every line starts with "{" and ends with "}" holds
    nothing to strip (no blank, carriage return, byte order mark or empty line), so its lines
    are decoded as read, with no stripped copy of each made (a look a line cost a judge
    log's reader about a microsecond a line); any other batch's texts are stripped first."""
    lines = batch.lines
    found = decoded_at_once(decoder, lines)
    if found is not None:
        return range(batch.first_line, batch.first_line + len(lines)), lines, lines, found
    kept = stripped(batch)
    numbers, raws, texts = [number for number, _, _ in kept], [raw for _, raw, _ in kept], [text for *_, text in kept]
    if len(texts) == len(lines) and sum(map(len, texts)) == sum(map(len, lines)):
        return numbers, raws, texts, None  # nothing was stripped: msgspec refused a line, not its blanks
    return numbers, raws, texts, decoded_at_once(decoder, texts)


def stripped(batch: LineBatch) -> list[tuple[int, bytes, bytes]]:
    """The batch's lines that hold anything: (number, the line as read, its text without
    surrounding blanks or a byte order mark)."""
    return [(number, raw, text) for number, raw in enumerate(batch.lines, start=batch.first_line)
            if (text := raw.strip(b" \t\r").removeprefix(BOM))]


def decoded_at_once(decoder: msgspec.json.Decoder, texts: list[bytes]) -> list | None:
    """The lines as ``decoder``'s structs, decoded in one call; None when any line is not
    plainly one JSON object msgspec reads as pydantic would. Joined by line breaks, lines
    that each start with "{" and end with "}" cannot run into each other ("}" then "{" is
    JSON only between top-level values), so as many values as lines means one a line."""
    if not texts or not (all(map(bytes.startswith, texts, repeat(b"{")))
                         and all(map(bytes.endswith, texts, repeat(b"}")))):
        return None
    data = b"\n".join(texts)
    if not is_utf8(data) or any_hides_from_msgspec(data, max(map(len, texts))) and any(
            [json_refusal(text) is not None for text in texts if hides_from_msgspec(text)]):
        return None
    try:
        decoded = decoder.decode_lines(data)
    except msgspec.DecodeError:  # a ValidationError is a DecodeError too
        return None
    return decoded if len(decoded) == len(texts) else None


def required(line_type: type) -> tuple[str, ...]:
    """The fields of a line struct that a line must give, in order."""
    return tuple(field.encode_name for field in msgspec.structs.fields(line_type) if field.required)


def unix_us(field: str, unix_seconds: float) -> int:
    """A Unix time as UTC microseconds, rounded as ``datetime.fromtimestamp`` rounds it (half
    to even), so its text (timestamps.time_text) is what fromtimestamp's isoformat() writes;
    LineError when no date can hold it. A record takes the number (record.ReadRecord): writing
    each grading's time as text and parsing it back cost fastchat-single 8-12 us a record."""
    if isinstance(unix_seconds, float) and 0.0 <= unix_seconds < LAST_FAST_SECOND:
        fraction, whole = math.modf(unix_seconds)
        return int(whole) * 1_000_000 + round(fraction * 1e6)
    try:
        moment = datetime.fromtimestamp(unix_seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise LineError(field, f"{unix_seconds!r} is not a Unix time in years 1970-9999; expected the seconds "
                               "since 1970 as FastChat writes them") from None
    return (moment - EPOCH) // _MICROSECOND


def iso_time(field: str, unix_seconds: float) -> str:
    """A Unix time as ISO-8601 UTC text, as ``datetime.fromtimestamp(unix_seconds,
    timezone.utc).isoformat()`` writes it; LineError when no date can hold it."""
    return time_text(unix_us(field, unix_seconds), "T")


def judge_model(judge: str | tuple[str, ...]) -> str:
    """The judge model of llm_judge's [judge model, prompt name] (or of a plain name)."""
    return judge if isinstance(judge, str) else judge[0]


def judge_prompt(judge: str | tuple[str, ...]) -> str | None:
    """The prompt name of llm_judge's [judge model, prompt name] ("single-v1", "pair-v2"): with
    the model, who the judge was (contract/reviewer_identity); None for a plain name."""
    return judge[1] if not isinstance(judge, str) and len(judge) > 1 else None


def _json_text(text: bytes) -> None:
    """NotJson when pydantic does not read the line as JSON text."""
    refusal = json_refusal(text)
    if refusal is not None:
        raise NotJson(refusal)


def lettered_verdict(field: str, text: str, scores: dict[str, float], expected: str) -> float:
    """The score of the answer shown as A, from a verdict in Arena-Hard's letters ("A>B", ...):
    ``scores`` says what each verdict gives it (JudgeBench drops the strength, arena-hard keeps it)."""
    if text not in scores:
        raise LineError(field, f"a string of {len(text):,} characters that is no verdict; expected {expected}")
    return scores[text]
