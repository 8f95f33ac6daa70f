"""The session envelope: what every record of a session shares (time, consent, schema version,
config version, query hash and metadata), normalised once per distinct value and cached,
because a 4x4 session repeats it 16 times."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from council_db.contract.fields import METADATA_KEYS, METADATA_MAX_CHARS, METADATA_VALUE_MAX_CHARS, LineError
from council_db.contract.schema_versions import schema_version
from council_db.contract.timestamps import time_text, timestamp_us

if TYPE_CHECKING:
    from council_db.contract.record import Record

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
        stored = (self.timestamp, self.consent_level, self.schema_version, self.schema_version_raw,
                  self.council_config_version, self.query_hash, self.query_metadata)
        object.__setattr__(self, "stored", stored)

    @cached_property
    def digest(self) -> str:
        """record_envelopes' key of ``stored``: made only for a record that needs that row (a
        grading's own time alone needs none: store.envelope_rows), so most envelopes never
        hash, and none carries the hash to the writer."""
        return hashlib.sha1(repr(self.stored).encode()).hexdigest()

    def with_time(self, ts_us: int) -> Envelope:
        """The envelope at another time, its text in this one's form (timestamps.time_text).
        Made field by field: dataclasses.replace took three times as long (a new session's
        envelope, in the writer)."""
        return self._timed(time_text(ts_us, self.timestamp), ts_us)

    def at(self, given: str | int | None) -> Envelope:
        """This envelope at a record's time ``given``, read as ``envelope`` reads it: what
        ``envelope`` makes of a record that differs from this envelope's only in its time,
        without its schema version and metadata made again (a new session's envelope a line
        or a session, in the reading processes)."""
        return self._timed(*_time(given))

    def _timed(self, text: str, ts_us: int | None) -> Envelope:
        """This envelope with another time's text and microseconds: its fields copied at once
        (the frozen dataclass's constructor sets each through object.__setattr__: 2.9 against
        1.2 us, once a new session in a pairwise log), the cached digest left out."""
        made = object.__new__(Envelope)
        fields = made.__dict__
        fields.update(self.__dict__)
        fields.pop("digest", None)
        fields["timestamp"], fields["ts_us"], fields["stored"] = text, ts_us, (text, *self.stored[1:])
        return made

    def own_time(self, text: str) -> int | None:
        """The time of ``text`` when ``with_time`` gives it back exactly (so a record with that
        text can share this envelope and store only a number); None otherwise, and for the
        epoch itself (0: the NULL marker of store.pg_copy). LineError as ``envelope`` raises it
        for text that is no time."""
        if not text.endswith("+00:00") or text[10:11] != self.timestamp[10:11]:  # "Z", another zone or form
            return None  # (looked at first: parsing such text cost a CSV of "Z" times 5 us a record)
        written = written_us(text)
        if written is not None:
            return written or None
        ts_us = timestamp_us(text)
        return ts_us if ts_us and time_text(ts_us, text) == text else None


def written_us(text: str) -> int | None:
    """The UTC microseconds of a time ending "+00:00" as time_text writes it, read from its
    minute (cached) and its seconds' digits; None for any other text (which may still be a
    time: ``timestamp_us`` says). A run log's reader reads each grading's time once so."""
    seconds = _seconds_us(text) if text.endswith("+00:00") else None
    minute = None if seconds is None else _minute_us(text[:16])
    return None if minute is None else minute + seconds


def _seconds_us(text: str) -> int | None:
    """The microseconds after its minute of a time ending ":SS+00:00" or ":SS.ffffff+00:00" as
    time_text writes them (no ".000000"); None for any other ending."""
    rest = text[16:-6]
    if len(rest) == 3:
        digits = rest[1:]
    elif len(rest) == 10 and rest[3] == "." and rest[4:] != "000000":
        digits = rest[1:3] + rest[4:]
    else:
        return None
    if rest[0] != ":" or not (digits.isascii() and digits.isdigit()) or rest[1] > "5":
        return None
    return int(digits.ljust(8, "0"))


@lru_cache(maxsize=4096)
def _minute_us(prefix: str) -> int | None:
    """The UTC microseconds of a minute ("YYYY-MM-DDTHH:MM") when time_text writes it so; None
    otherwise. A judge log's gradings fall a few seconds apart: parsing and writing back each
    one's time cost 3-4 us a record, and a minute's are read once (own_time)."""
    text = prefix + ":00+00:00"
    try:
        ts_us = timestamp_us(text)
    except LineError:
        return None
    return ts_us if ts_us is not None and time_text(ts_us, text) == text else None


def _metadata(value: dict[str, Any] | None) -> tuple[str | None, str | None, str | None, str | None]:
    """Known keys only: raw query text must never be stored, whatever a line carries."""
    if value is None:
        return None, None, None, None
    kept = tuple((k, v) for k, v in value.items() if k in METADATA_KEYS)
    for key, item in kept:
        if item is not None and not isinstance(item, str):
            raise LineError("query_metadata", f"{key} must be a string or null (got {type(item).__name__})")
        if item is not None and len(item) > METADATA_VALUE_MAX_CHARS:
            raise LineError("query_metadata", f"{key} has {len(item):,} characters; at most "
                                              f"{METADATA_VALUE_MAX_CHARS} characters are kept (a category, a "
                                              "length bucket, a language)")
    size = _json_chars(value)
    if size > METADATA_MAX_CHARS:
        raise LineError("query_metadata", f"is {size:,} characters as JSON; at most {METADATA_MAX_CHARS:,} "
                                          "characters are taken (only category, token_bucket and language are kept)")
    return _stored_metadata(kept)


def _json_chars(value: dict[str, Any]) -> int:
    """query_metadata's length as compact JSON, or a bound below the cap when the object is
    clearly small: the bound costs ~1 us a session, json.dumps ~10 (measured on llm-council's
    three keys). A character takes at most 6 in JSON (\\u001f); a pair adds 6 (quotes, colon, comma)."""
    bound = 2
    for key, item in value.items():
        if not isinstance(item, str):
            bound = METADATA_MAX_CHARS + 1
            break
        bound += 6 * (len(key) + len(item)) + 6
    if bound <= METADATA_MAX_CHARS:
        return bound
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


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
    """The record's envelope; a time given as UTC microseconds (record.ReadRecord) is written
    as FastChat's isoformat() writes it (timestamps.time_text), its number kept as it is."""
    version = schema_version(record.schema_version)
    metadata, category, language, bucket = _metadata(record.query_metadata)
    text, ts_us = _time(record.timestamp)
    return Envelope(
        timestamp=text,
        ts_us=ts_us,
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


def _time(given: str | int | None) -> tuple[str, int | None]:
    """A record's time as its envelope keeps it: its text (a time given as UTC microseconds,
    record.ReadRecord, written as FastChat's isoformat() writes it) and its microseconds."""
    if isinstance(given, int):
        return time_text(given, "T"), given
    text = given or ""
    return text, timestamp_us(text)
