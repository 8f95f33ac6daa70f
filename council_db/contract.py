"""The llm-council bias record: its fields and the normalisations the real files need
(schema versions, timestamps, scales, query metadata). Validation of whole lines with
pydantic is in validation.py; this module stays light so analyses can import it fast.

Validated lines become Records (batch_decoder.py); everything shared by a session (the
"envelope") is normalised once per distinct value and cached, because a 4x4 session repeats
it 16 times.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from council_db.batch_decoder import Record

FIELDS = (
    "schema_version",
    "session_id",
    "timestamp",
    "consent_level",
    "reviewer_id",
    "model_id",
    "position",
    "response_length_chars",
    "score_value",
    "score_scale",
    "council_config_version",
    "query_hash",
    "query_metadata",
)
METADATA_KEYS = ("category", "token_bucket", "token_count_bucket", "language")
DEFAULT_SCALE = "1-10"
DEFAULT_CONSENT = 1  # llm-council's LOCAL_ONLY default
EXCLUSION_REASONS: dict[str, tuple[int, str]] = {
    "unscored": (1, "0 on a scale starting above 0: llm-council's marker for ranked but never scored"),
    "out_of_scale": (2, "score outside the range of its scale"),
}

class LineError(ValueError):
    """A bad line: which field, what was wrong, what was expected."""

    def __init__(self, field: str | None, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)


# --- schema versions --------------------------------------------------------------------

@dataclass(frozen=True)
class SchemaVersion:
    normalised: str  # "1.2.0"
    raw_literal: str | None  # the JSON literal when it differs from `normalised`
    display_order: bool  # position means display slot only from 1.2.0 on


def schema_version(value: int | str | None) -> SchemaVersion:
    """Integer 1, "1", "1.2", "1.2.0" and missing all name a 1.x version; 2.x is refused."""
    return _schema_version(type(value), value)


@lru_cache(maxsize=256)
def _schema_version(_kind: type, value: int | str | None) -> SchemaVersion:
    """Cached per value and type (1 and "1" are kept apart: their raw literals differ)."""
    if value is None:
        parts = [1, 0, 0]
    else:
        text = str(value).strip()
        if not re.fullmatch(r"\d+(\.\d+){0,2}", text):
            raise LineError("schema_version", f"{json.dumps(value)} is not a version")
        parts = [int(p) for p in text.split(".")] + [0, 0]
        parts = parts[:3]
    if parts[0] != 1:
        raise LineError("schema_version", f"{'.'.join(map(str, parts))} is newer than this council-db "
                                          "understands (1.x); upgrade council-db")
    normalised = ".".join(map(str, parts))
    raw = None if value is None or value == normalised else json.dumps(value)
    return SchemaVersion(normalised, raw, tuple(parts) >= (1, 2, 0))


# --- timestamps -------------------------------------------------------------------------

def timestamp_us(text: str | None) -> int | None:
    """UTC microseconds for an ISO-8601 time; naive times are taken as UTC; "" means unknown."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise LineError("timestamp", f"{json.dumps(text)[:60]} is not an ISO-8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def format_us(ts_us: int | None) -> str | None:
    """ISO-8601 UTC text for stored microseconds."""
    if ts_us is None:
        return None
    return datetime.fromtimestamp(ts_us / 1e6, tz=timezone.utc).isoformat().replace("+00:00", "Z")


# --- scales -----------------------------------------------------------------------------

@dataclass(frozen=True)
class ScoreScale:
    name: str
    low: float
    high: float

    def exclusion(self, score: float) -> int | None:
        """Why a score is left out of analyses (a reason id), or None when it is usable."""
        if self.low <= score <= self.high:
            return None
        if score == 0 and self.low > 0:
            return EXCLUSION_REASONS["unscored"][0]
        return EXCLUSION_REASONS["out_of_scale"][0]


_SCALE = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*")


def score_scale(name: str) -> ScoreScale:
    match = _SCALE.fullmatch(name)
    if not match or float(match[1]) >= float(match[2]):
        raise LineError("score_scale", f"{json.dumps(name)[:60]} is not a range LOW-HIGH")
    return ScoreScale(name, float(match[1]), float(match[2]))


# --- the session envelope -----------------------------------------------------------------

@dataclass(frozen=True)
class Envelope:
    """What a record shares with its session, in stored form (the columns of ``sessions``)."""

    timestamp: str
    ts_us: int | None
    consent_level: int
    schema_version: str
    schema_version_raw: str | None
    council_config_version: str | None
    query_hash: str | None
    query_metadata: str | None  # JSON, known keys only
    category: str | None
    language: str | None
    length_bucket: str | None
    display_order: bool
    stored: tuple = ()  # the columns that must match for two records to share an envelope

    def __post_init__(self) -> None:
        object.__setattr__(self, "stored", (
            self.timestamp, self.consent_level, self.schema_version, self.schema_version_raw,
            self.council_config_version, self.query_hash, self.query_metadata))


def _metadata(value: dict[str, Any] | None) -> tuple[str | None, str | None, str | None, str | None]:
    """Known keys only: raw query text must never be stored, whatever a line carries."""
    if value is None:
        return None, None, None, None
    kept = tuple((k, v) for k, v in value.items() if k in METADATA_KEYS)
    for key, item in kept:
        if item is not None and not isinstance(item, str):
            raise LineError("query_metadata", f"{key} must be a string or null (got {type(item).__name__})")
    return _stored_metadata(kept)


@lru_cache(maxsize=4096)
def _stored_metadata(kept: tuple[tuple[str, str | None], ...]) -> tuple[str, str | None, str | None, str | None]:
    """Cached: every session has its own envelope, but there are few distinct metadata (a
    category, a length bucket, a language), and making the JSON for each session showed in
    the import's profile."""
    found = dict(kept)
    bucket = found.get("token_bucket", found.get("token_count_bucket"))
    return (json.dumps(found, ensure_ascii=False, separators=(",", ":")), found.get("category"),
            found.get("language"), bucket)


# The envelope fields of a validated line, as they came: a tuple of them is comparable,
# not hashable (envelope_key makes a key of it).
ENVELOPE_KEYS = ("timestamp", "consent_level", "schema_version", "council_config_version", "query_hash",
                 "query_metadata")


def envelope_key(fields: tuple) -> tuple:
    """A hashable key for envelope fields; the type keeps integer 1 apart from "1"."""
    metadata = fields[5]
    frozen = None if metadata is None else tuple((k, repr(v)) for k, v in metadata.items())
    return (*fields[:5], type(fields[2]), frozen)


def envelope(record: Record) -> Envelope:
    version = schema_version(record.schema_version)
    text = record.timestamp or ""
    metadata, category, language, bucket = _metadata(record.query_metadata)
    return Envelope(
        timestamp=text,
        ts_us=timestamp_us(text),
        consent_level=record.consent_level,
        schema_version=version.normalised,
        schema_version_raw=version.raw_literal,
        council_config_version=record.council_config_version,
        query_hash=record.query_hash,
        query_metadata=metadata,
        category=category,
        language=language,
        length_bucket=bucket,
        display_order=version.display_order,
    )


def export_schema_version(normalised: str, raw_literal: str | None) -> Any:
    """The schema_version value as it was imported (an absent one comes back as "1.0.0")."""
    return json.loads(raw_literal) if raw_literal is not None else normalised
