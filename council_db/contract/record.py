"""One validated line as a struct: llm-council's fields, with the defaults of a missing field.

msgspec structs cost less to make and to free than dicts, and the import makes millions of
them. ingest/fast_decode.py decodes whole batches into them; pydantic (ingest/validation.py)
stays the authority on what a line must be, and the two are held to agree by the tests.

``position`` may be missing or null, as in llm-council's own reader (amiable-dev/llm-council,
src/llm_council/bias_persistence.py, ``BiasMetricRecord.from_jsonl_line``: ``position=data.get(
"position", 0)``); it is then None here, stored as fields.DEFAULT_POSITION and not as a display slot.
A display slot is at most fields.MAX_SLOT (checked with the schema version, in ingest/normalise.py).
``response_length_chars`` null means the answer's length is unknown (fields.UNKNOWN_LENGTH).
``reviewer_kind`` ("judge", "human" or "gold") is council-db's own field: None when the line
does not state it (fields.REVIEWER_KINDS). So are the answer's style fields (fields.STYLE_FIELDS):
a count >= 0, None when unknown; the judge's provenance (fields.PROVENANCE_FIELDS: prompt
template, temperature, seed; None when not said) and a rubric's named scores
(``score_dimensions``, None when the line has none).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping, Union

import msgspec

from council_db.contract.fields import (
    DEFAULT_CONSENT,
    DEFAULT_SCALE,
    LINE_FIELDS,
    MAX_DIMENSION_NAME,
    MAX_DIMENSIONS,
    MAX_NAME,
    MAX_POSITION,
    MAX_SCORE,
    REVIEWER_KINDS,
)

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)]
Count = Union[Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)], None]  # a style count; None: unknown
Text = Annotated[str, msgspec.Meta(max_length=500)]
# Python's "$" also matches before a final newline; pydantic's (Rust) regex does not.
QueryHash = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-fA-F]{16}\Z")]
# pydantic refuses objects nested deeper than its recursion limit and msgspec takes ~1,000
# levels, so the fast path takes metadata two levels deep (deeper goes to pydantic). No
# lists: a line holding a bracket is never in a joined batch (ingest/lines.py).
Scalar = Union[str, int, float, bool, None]
Metadata = dict[str, Union[Scalar, dict[str, Scalar]]]
DimensionName = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_DIMENSION_NAME)]
Dimensions = Annotated[dict[DimensionName, Annotated[float, msgspec.Meta(ge=-MAX_SCORE, le=MAX_SCORE)]],
                       msgspec.Meta(min_length=1, max_length=MAX_DIMENSIONS)]
ReviewerKind = Literal[REVIEWER_KINDS]  # type: ignore[valid-type]  # "judge", "human" or "gold"


class Record(msgspec.Struct, kw_only=True, gc=False):
    """One validated line: llm-council's fields, with the defaults of a missing field."""

    schema_version: Union[int, Text, None] = None
    session_id: Name
    timestamp: Union[Text, None] = None
    consent_level: Annotated[int, msgspec.Meta(ge=0, le=4)] = DEFAULT_CONSENT
    reviewer_id: Name
    model_id: Name
    position: Union[Annotated[int, msgspec.Meta(ge=0, le=MAX_POSITION)], None] = None  # None: not given
    response_length_chars: Union[Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)], None]  # None: unknown
    score_value: Annotated[float, msgspec.Meta(ge=-MAX_SCORE, le=MAX_SCORE)]
    score_scale: Text = DEFAULT_SCALE
    council_config_version: Union[Text, None] = None
    query_hash: Union[QueryHash, None] = None
    query_metadata: Union[Metadata, None] = None
    reviewer_kind: Union[ReviewerKind, None] = None  # None: not stated
    response_tokens: Count = None  # the style fields (fields.STYLE_FIELDS)
    markdown_headers: Count = None
    markdown_lists: Count = None
    markdown_bold: Count = None
    reviewer_prompt: Union[Name, None] = None  # the provenance fields (fields.PROVENANCE_FIELDS)
    reviewer_temperature: Union[Annotated[float, msgspec.Meta(ge=0, le=100)], None] = None
    reviewer_seed: Union[Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)], None] = None
    score_dimensions: Union[Dimensions, None] = None  # name -> score (fields.DIMENSIONS_FIELD)


class ReadRecord(Record, kw_only=True, gc=False):
    """A record a reader made from another format's line: its time may be UTC microseconds
    (an int), where the log gives a number (FastChat's tstamp), so no ISO text is written and
    parsed back for each grading (8-12 us a record). No JSON line decodes into it
    (ingest/fast_decode reads ``Record``): an llm-council line's time is text, as pydantic holds it."""

    timestamp: Union[int, Text, None] = None


def checked_record(values: Mapping[str, Any]) -> ReadRecord:
    """A record a reader made from another format's line, held to the limits a decoded line
    is held to (``Record(...)`` checks none of them); msgspec.ValidationError names the field."""
    return msgspec.convert(values, ReadRecord)


def as_record(values: Mapping[str, Any]) -> Record:
    """A record from an already validated mapping (pydantic's dict, or an exported record);
    keys it lacks take the defaults a missing field has."""
    return Record(**{key: values[key] for key in LINE_FIELDS if key in values})
