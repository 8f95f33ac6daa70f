"""Validating JSONL lines with pydantic (strict): the record's types and ranges, and
messages that name the field and what was expected."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Annotated, Any, Literal, Mapping, Union

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError
from typing_extensions import Required, TypedDict

from council_db.contract.fields import (
    MAX_DIMENSION_NAME,
    MAX_DIMENSIONS,
    MAX_NAME,
    MAX_POSITION,
    MAX_SCORE,
    REVIEWER_KINDS,
    LineError,
)

Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME)]
Text = Annotated[str, StringConstraints(max_length=500)]
Count = Union[Annotated[int, Field(ge=0, le=2**31 - 1)], None]
Score = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_SCORE, le=MAX_SCORE)]
DimensionName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_DIMENSION_NAME)]
Dimensions = Annotated[dict[DimensionName, Score], Field(min_length=1, max_length=MAX_DIMENSIONS)]


class RecordLine(TypedDict, total=False):
    """One JSONL line as llm-council writes it. Unknown keys (e.g. a raw query) are dropped."""

    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]

    schema_version: Union[int, Text, None]
    session_id: Required[Name]
    timestamp: Union[Text, None]
    consent_level: Annotated[int, Field(ge=0, le=4)]
    reviewer_id: Required[Name]
    model_id: Required[Name]
    position: Union[Annotated[int, Field(ge=0, le=MAX_POSITION)], None]  # missing or null: fields.DEFAULT_POSITION
    response_length_chars: Required[Union[Annotated[int, Field(ge=0, le=2**31 - 1)], None]]  # null: unknown
    score_value: Required[Score]
    score_scale: Text
    council_config_version: Union[Text, None]
    query_hash: Union[Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{16}$")], None]
    query_metadata: Union[dict[str, Any], None]
    reviewer_kind: Union[Literal[REVIEWER_KINDS], None]  # type: ignore[valid-type]  # null: not stated
    response_tokens: Count  # the answer's style (fields.STYLE_FIELDS); null: unknown
    markdown_headers: Count
    markdown_lists: Count
    markdown_bold: Count
    reviewer_prompt: Union[Name, None]  # the judge's provenance (fields.PROVENANCE_FIELDS); null: not said
    reviewer_temperature: Union[Annotated[float, Field(allow_inf_nan=False, ge=0, le=100)], None]
    reviewer_seed: Union[Annotated[int, Field(ge=-(2**63), le=2**63 - 1)], None]
    score_dimensions: Union[Dimensions, None]  # a rubric's named scores (fields.DIMENSIONS_FIELD)




@cache
def line_adapter() -> TypeAdapter:
    """The line's validator, built on first use: a judge log whose every line msgspec
    takes never needs it (building the three took ~0.05 s of every import's start)."""
    return TypeAdapter(RecordLine)


@cache
def lines_adapter() -> TypeAdapter:
    """A JSON list of lines at once (ingest/lines.py: a batch joined)."""
    return TypeAdapter(list[RecordLine])


@cache
def _json_text() -> TypeAdapter:
    """Any JSON value: what a line of any format must be first."""
    return TypeAdapter(Any)

_EXPECTED = {
    "schema_version": 'a version such as "1.2.0" (or the integer 1)',
    "session_id": "a non-empty string",
    "timestamp": 'an ISO-8601 time such as "2025-12-17T10:30:00Z", or ""',
    "consent_level": "an integer 0-4",
    "reviewer_id": "a non-empty model id string",
    "model_id": "a non-empty model id string",
    "position": "an integer >= 0 (the display slot), or no position at all",
    "response_length_chars": "an integer >= 0 (null when the answer's length is unknown)",
    "score_value": "a finite number",
    "score_scale": 'a range such as "1-10"',
    "council_config_version": "a string or null",
    "query_hash": "16 hex characters or null",
    "query_metadata": "an object or null",
    "reviewer_kind": '"judge", "human" or "gold" (whose verdict the record is), or null',
    "response_tokens": "an integer >= 0 (the answer's length in tokens), or null when unknown",
    "markdown_headers": "an integer >= 0 (the answer's markdown headers), or null when unknown",
    "markdown_lists": "an integer >= 0 (the answer's markdown list items), or null when unknown",
    "markdown_bold": "an integer >= 0 (the answer's bold spans), or null when unknown",
    "reviewer_prompt": "the name of the judge's prompt template (1-500 characters), or null",
    "reviewer_temperature": "the judge's sampling temperature, a number 0-100, or null",
    "reviewer_seed": "the judge's sampling seed, an integer, or null",
    "score_dimensions": (f"an object of 1-{MAX_DIMENSIONS} named scores (names of 1-{MAX_DIMENSION_NAME} characters, "
                         "finite numbers on the record's scale), or null"),
}


_TYPE_PROBLEMS = {"finite_number", "int_from_float", "literal_error", "string_pattern_mismatch", "string_too_short",
                  "union_tag_invalid"}
# pydantic's messages for these are built from the limit alone, never from the input
_LIMIT_PROBLEMS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "string_too_long",
                   "string_too_short", "too_long", "too_short"}
# jiter's JSON errors read "<kind> at line L column C". Only a kind on this list is repeated,
# so no text of the line can come through a message (issue 14: redaction by pattern cannot win).
_JSON_KINDS = frozenset({
    "EOF while parsing a list", "EOF while parsing an object", "EOF while parsing a string",
    "EOF while parsing a value", "expected `,` or `}`", "expected `,` or `]`", "expected `:`", "expected value",
    "expected ident", "invalid escape", "invalid number", "number out of range", "invalid unicode code point",
    "invalid utf-8", "key must be a string", "lone leading surrogate in hex escape", "trailing comma",
    "trailing characters", "unexpected end of hex escape", "recursion limit exceeded",
    "control character (\\u0000-\\u001F) found while parsing a string",
})
_JSON_ERROR = re.compile(r"Invalid JSON: (.+) at line 1 column (\d+)")


def json_error(error: Any) -> tuple[str, int | None]:
    """What stopped the JSON parser, and at which byte of the line (1 = first), if it was that."""
    first = error.errors(include_url=False)[0]
    if first["type"] != "json_invalid":
        return "", None
    found = _JSON_ERROR.fullmatch(first["msg"])
    if found is None:
        return "invalid JSON", None
    return (found[1] if found[1] in _JSON_KINDS else "invalid JSON"), int(found[2])


def json_refusal(line: bytes) -> ValidationError | None:
    """pydantic's refusal of a line that is no JSON text (bytes that are not UTF-8, nesting
    deeper than 200, a number of more than 4,300 digits, broken syntax), or None: the same
    judgement for a line of any format as for llm-council's."""
    try:
        _json_text().validate_json(line)
    except ValidationError as error:
        return error
    return None


def record_problem(values: Mapping[str, Any], refused: Exception) -> LineError:
    """Why a record a reader made breaks the record's limits, worded as for a bad
    llm-council line; ``refused`` is msgspec's refusal, said as it is if pydantic differs."""
    try:
        line_adapter().validate_python(values)
    except ValidationError as error:
        return explain(error)
    return LineError(None, str(refused))


def json_type(value: Any) -> str:
    """A JSON value's type, which says nothing of its text."""
    if isinstance(value, bool):
        return "boolean"
    return {str: "string", int: "number", float: "number", list: "list", dict: "object",
            type(None): "null"}.get(type(value), type(value).__name__)


def shown(value: Any) -> str:
    """A value as a message may show it: a number, boolean or null as it is; a string only by
    its length and a list or object only by type, as any of them may hold query text."""
    if isinstance(value, (int, float, bool, type(None))):
        return json.dumps(value)[:60]
    if isinstance(value, str):
        return f"a string of {len(value):,} characters"
    return "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else "a value"


def explain(error: Any) -> LineError:
    """The first problem of a pydantic ValidationError, as a LineError a person can act on,
    holding no text of the line."""
    first = error.errors(include_url=False)[0]
    kind = first["type"]
    loc = [part for part in first["loc"] if isinstance(part, str)]
    if kind == "json_invalid":
        problem, column = json_error(error)
        where = f" at byte {column}" if column else ""
        return LineError(None, f"not valid JSON ({problem}{where}); each line must be one JSON object")
    if kind in ("model_type", "dict_type") and not loc:
        return LineError(None, f"not a JSON object (got {shown(first.get('input'))}); "
                               "each line must be one object with the record's fields")
    field = loc[0] if loc else None
    expected = _EXPECTED.get(field or "", "")
    if kind == "missing":
        return LineError(field, f"missing; expected {expected}")
    got = f"got {shown(first.get('input'))}"
    if expected and (kind.endswith("_type") or kind in _TYPE_PROBLEMS):
        return LineError(field, f"{got}; expected {expected}")
    message = f"{got}: {template_message(first)}"
    if kind in _LIMIT_PROBLEMS or not expected:
        return LineError(field, message)
    return LineError(field, f"{message}; expected {expected}")


def template_message(error: dict) -> str:
    """pydantic's message for one error when it is made from the limit or type alone, else a
    plain one: a message of another kind could quote the input (a discriminator tag, say)."""
    kind, text = error["type"], error["msg"]
    if kind in _LIMIT_PROBLEMS or kind.endswith("_type"):
        return text[0].lower() + text[1:]
    return "not valid"
