"""What a judge-log reader needs to make a batch's records as columns (contract/record_columns):
each distinct value once, numbers a column at a time, and the record's limits held to a
column at once, so that a batch with any value outside them goes the record path, which
names the line and field."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from council_db.contract.fields import MAX_NAME, MAX_SCORE, UNKNOWN_LENGTH
from council_db.contract.record_columns import RecordColumns
from council_db.contract.score_batch import coded
from council_db.contract.storable import unstorable

LAST_FAST_SECOND = 253_402_300_000.0  # 9999-12-31T23:46:40Z: later times go the long way (year 10000)


def unix_us_column(unix_seconds: np.ndarray) -> np.ndarray | None:
    """judge_lines.unix_us of each time at once (numpy rounds half to even too); None when any
    time is outside 1970-9999 (the record path then says which line)."""
    if not ((unix_seconds >= 0.0) & (unix_seconds < LAST_FAST_SECOND)).all():
        return None
    fraction, whole = np.modf(unix_seconds)
    return whole.astype(np.int64) * 1_000_000 + np.rint(fraction * 1e6).astype(np.int64)


def recoded(made: list, codes: np.ndarray) -> tuple[list, np.ndarray]:
    """Values made one from each distinct value may repeat (question 81 and "81" make one
    session key): made distinct again, the codes following."""
    distinct, remap = coded(made)
    return (made, codes) if len(distinct) == len(made) else (distinct, remap[codes])


def length_column(lengths: Iterable[int | None] | None, count: int) -> np.ndarray:
    """The records' answer lengths as a column, None (or no lengths at all: a log read
    without --answers) as fields.UNKNOWN_LENGTH."""
    if lengths is None:
        return np.full(count, UNKNOWN_LENGTH, dtype=np.int32)
    return np.array([UNKNOWN_LENGTH if found is None else found for found in lengths], dtype=np.int32)


def storable_names(texts: list[str]) -> bool:
    """Whether every text can be a record's name (1-500 characters) that a database stores."""
    return all([0 < len(text) <= MAX_NAME and unstorable(text) is None for text in texts])


def within_score_bounds(scores: np.ndarray) -> bool:
    """Whether every score is within a record's bounds (±1e12; NaN and infinity are not)."""
    return bool((np.abs(scores) <= MAX_SCORE).all())


def record_columns(numbers: np.ndarray, sessions: list[str], judges: list[tuple[str, str | None]], models: list[str],
                   position: np.ndarray, length: np.ndarray, score: np.ndarray, schema_version: str, score_scale: str,
                   times: np.ndarray | None = None, categories: list[str | None] | None = None) -> RecordColumns | None:
    """Columns of records given one value each (``numbers``: each record's line; names and
    categories once per distinct value); None when a name or score is outside a record's
    limits. Only the values of records made count, so no name or session is written that
    no row refers to."""
    keys, session = coded(sessions)
    found, judge = coded(judges)
    names, model = coded(models)
    if not within_score_bounds(score) or not storable_names(
            keys + names + [name for pair in found for name in pair if name is not None]):
        return None
    distinct, category = (None, None) if categories is None or categories.count(None) == len(categories) else coded(
        categories)
    if distinct is not None and any(found is not None and unstorable(found) is not None for found in distinct):
        return None
    return RecordColumns(numbers, keys, session, found, judge, names, model, position, length, score, schema_version,
                         score_scale, times, distinct, category)
