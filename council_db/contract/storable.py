"""Text no database stores: a NUL character (PostgreSQL refuses one in text, so no backend
takes one: a file must import the same way into SQLite and PostgreSQL) and a lone surrogate
(half of a UTF-16 pair, which is no character and cannot be written as UTF-8). The JSON
parsers refuse lone surrogates; values that come from elsewhere (an answer file read with
Python's json, a command-line option) are checked here."""

from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Sequence

from council_db.contract.fields import METADATA_KEYS

if TYPE_CHECKING:
    from council_db.contract.record import Record

# The record's fields that may hold text, in its order (the first one holding bad text is named).
_TEXT_FIELDS = ("schema_version", "session_id", "timestamp", "reviewer_id", "model_id", "score_scale",
                "council_config_version", "query_hash", "reviewer_kind", "reviewer_prompt")
_TEXTS = attrgetter(*_TEXT_FIELDS)
NUL = "contains a NUL character (\\u0000), which databases cannot store as text; remove it from the value"
SURROGATE = ("contains a lone surrogate (a \\ud800-\\udfff escape without its pair), which is not text; "
             "remove it from the value")


def unstorable(text: str) -> str | None:
    """Why no database stores this text, or None when it can."""
    if "\x00" in text:
        return NUL
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return SURROGATE
    return None


def unstorable_field(record: Record) -> tuple[str, str] | None:
    """The first stored field of the record holding such text, and why (query_metadata: the
    values of the keys that are kept). Every text of the record is looked at once, joined:
    ASCII without a NUL, the usual record, costs a microsecond. Only the fields that may hold
    text are read (_TEXTS): the whole struct as a tuple, type-tested field by field, cost
    twice as long, every record of a judge log going through here."""
    values = _TEXTS(record)
    metadata = record.query_metadata
    kept = [] if not metadata else [value for key, value in metadata.items()
                                    if key in METADATA_KEYS and isinstance(value, str)]
    joined = "".join([value for value in values if value.__class__ is str] + kept)
    if joined.isascii() and "\x00" not in joined:
        return None
    for key, value in [*zip(_TEXT_FIELDS, values), *(("query_metadata", value) for value in kept)]:
        problem = unstorable(value) if isinstance(value, str) else None
        if problem is not None:
            return key, problem
    return None


_METADATA = attrgetter("query_metadata")


def all_storable(records: Sequence[Record]) -> bool:
    """True when ``unstorable_field`` finds nothing in any of the records, told from their
    texts joined at once (a look per record cost a judge log 1-2 us a record); False may be a
    false alarm (a value no record stores, as text), which the record-by-record look settles."""
    metadata = [value for found in map(_METADATA, records) if found for value in found.values()]
    joined = "".join(map(str, chain(chain.from_iterable(map(_TEXTS, records)), metadata)))
    return joined.isascii() and "\x00" not in joined
