"""Record times: ISO-8601 text in, UTC microseconds stored (compare instants, never strings).

A stored time must be one Python can hold as a datetime, years 0001-9999 in UTC: a valid
ISO-8601 time such as "9999-12-31T23:59:59-14:00" is in year 10000 once converted, and
every report that printed it failed. Times are read and printed with integer arithmetic,
so the first and last microsecond of that range survive the round trip.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from council_db.contract.fields import LineError

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_NAIVE_EPOCH = datetime(1970, 1, 1)
MIN_US = -62_135_596_800_000_000  # 0001-01-01T00:00:00Z
MAX_US = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999Z
OUT_OF_RANGE = "is outside years 0001-9999 in UTC; write the time in UTC within years 0001-9999"


def timestamp_us(text: str | None) -> int | None:
    """UTC microseconds for an ISO-8601 time; naive times are taken as UTC; "" means unknown.
    Raises LineError (field "timestamp") for text that is not a time or not in years 0001-9999 UTC."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise LineError("timestamp", f"a string of {len(text):,} characters that is not an ISO-8601 time such as "
                                     '"2025-12-17T10:30:00Z"') from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - EPOCH  # a timedelta holds any difference of two datetimes: this cannot overflow
    us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if not MIN_US <= us <= MAX_US:
        raise LineError("timestamp", f"{json.dumps(text)[:60]} {OUT_OF_RANGE}")
    return us


def format_us(ts_us: int | None) -> str | None:
    """ISO-8601 UTC text for stored microseconds (in MIN_US..MAX_US: readers select only those)."""
    if ts_us is None:
        return None
    return (EPOCH + timedelta(microseconds=int(ts_us))).isoformat().replace("+00:00", "Z")


def time_text(ts_us: int, like: str) -> str:
    """UTC microseconds as ISO-8601 text with "+00:00", separated like ``like`` (" " as OpenAI
    evals' str(datetime), "T" otherwise, as FastChat's isoformat()): the text of a record whose
    own time is stored as a number beside its session's text (store.envelope_rows). From a
    naive time plus "+00:00": the same text, and an aware one's isoformat took 40% longer
    (every grading of a judge log is checked with it)."""
    return (_NAIVE_EPOCH + timedelta(microseconds=ts_us)).isoformat(" " if like[10:11] == " " else "T") + "+00:00"
