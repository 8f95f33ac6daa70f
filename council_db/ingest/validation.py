"""Validating JSONL lines with pydantic (strict): the record's types and ranges, and
messages that name the field and what was expected."""

from __future__ import annotations

import json
from typing import Annotated, Any, Union

from pydantic import ConfigDict, Field, StringConstraints, TypeAdapter
from typing_extensions import Required, TypedDict

from council_db.contract.fields import LineError

Name = Annotated[str, StringConstraints(min_length=1, max_length=500)]
Text = Annotated[str, StringConstraints(max_length=500)]


class RecordLine(TypedDict, total=False):
    """One JSONL line as llm-council writes it. Unknown keys (e.g. a raw query) are dropped."""

    __pydantic_config__ = ConfigDict(strict=True)  # type: ignore[misc]

    schema_version: Union[int, Text, None]
    session_id: Required[Name]
    timestamp: Union[Text, None]
    consent_level: Annotated[int, Field(ge=0, le=4)]
    reviewer_id: Required[Name]
    model_id: Required[Name]
    position: Required[Annotated[int, Field(ge=0, le=1_000)]]
    response_length_chars: Required[Annotated[int, Field(ge=0, le=2**31 - 1)]]
    score_value: Required[Annotated[float, Field(allow_inf_nan=False, ge=-1e12, le=1e12)]]
    score_scale: Text
    council_config_version: Union[Text, None]
    query_hash: Union[Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{16}$")], None]
    query_metadata: Union[dict[str, Any], None]


LINE = TypeAdapter(RecordLine)
LINES = TypeAdapter(list[RecordLine])

_EXPECTED = {
    "schema_version": 'a version such as "1.2.0" (or the integer 1)',
    "session_id": "a non-empty string",
    "timestamp": 'an ISO-8601 time such as "2025-12-17T10:30:00Z", or ""',
    "consent_level": "an integer 0-4",
    "reviewer_id": "a non-empty model id string",
    "model_id": "a non-empty model id string",
    "position": "an integer >= 0 (the display slot)",
    "response_length_chars": "an integer >= 0",
    "score_value": "a finite number",
    "score_scale": 'a range such as "1-10"',
    "council_config_version": "a string or null",
    "query_hash": "16 hex characters or null",
    "query_metadata": "an object or null",
}


_TYPE_PROBLEMS = {"finite_number", "int_from_float", "string_pattern_mismatch", "string_too_short", "union_tag_invalid"}


def _shown(value: Any) -> str:
    if isinstance(value, (str, int, float, bool, type(None))):
        return json.dumps(value)[:60]
    return "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else type(value).__name__


def _kind(value: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def explain(error: Any) -> LineError:
    """The first problem of a pydantic ValidationError, as a LineError a person can act on."""
    first = error.errors(include_url=False)[0]
    kind = first["type"]
    loc = [part for part in first["loc"] if isinstance(part, str)]
    if kind == "json_invalid":
        return LineError(None, f"not valid JSON ({first['msg'].removeprefix('Invalid JSON: ')}); "
                               "each line must be one JSON object")
    if kind in ("model_type", "dict_type") and not loc:
        return LineError(None, f"not a JSON object (got {_shown(first.get('input'))}); "
                               "each line must be one object with the record's fields")
    field = loc[0] if loc else None
    expected = _EXPECTED.get(field or "", "")
    if kind == "missing":
        return LineError(field, f"missing; expected {expected}")
    value = first.get("input")
    # query_metadata holds an object; whatever else is there may be the query itself: not shown
    got = f"got {_shown(value) if field != 'query_metadata' else _kind(value)}"
    if expected and (kind.endswith("_type") or kind in _TYPE_PROBLEMS):
        return LineError(field, f"{got}; expected {expected}")
    return LineError(field, f"{got}: {first['msg'][0].lower()}{first['msg'][1:]}")
