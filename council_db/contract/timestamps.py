"""Record times: ISO-8601 text in, UTC microseconds stored (compare instants, never strings)."""

from __future__ import annotations

from datetime import datetime, timezone

from council_db.contract.fields import LineError


def timestamp_us(text: str | None) -> int | None:
    """UTC microseconds for an ISO-8601 time; naive times are taken as UTC; "" means unknown."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise LineError("timestamp", f"a string of {len(text):,} characters that is not an ISO-8601 time such as "
                                     '"2025-12-17T10:30:00Z"') from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def format_us(ts_us: int | None) -> str | None:
    """ISO-8601 UTC text for stored microseconds."""
    if ts_us is None:
        return None
    return datetime.fromtimestamp(ts_us / 1e6, tz=timezone.utc).isoformat().replace("+00:00", "Z")
