"""SQL conditions shared by the commands that select sessions (export, bias-report)."""

from __future__ import annotations

from typing import Any

from council_db.contract.fields import LineError
from council_db.contract.timestamps import timestamp_us


def time_range(since: str | None, until: str | None) -> tuple[list[str], dict[str, Any]]:
    """Conditions on sessions (alias ``s``) for [since, until): instants, not strings, are
    compared, so "12:00+02:00" comes before "11:00Z". Raises LineError for a bad time, and
    for a range that cannot hold anything (it is a mistake, not a question)."""
    clauses, params = [], {}
    if since:
        clauses.append("s.ts_us >= :since")
        params["since"] = timestamp_us(since)
    if until:
        clauses.append("s.ts_us < :until")
        params["until"] = timestamp_us(until)
    if since and until and None not in (params["since"], params["until"]) and params["since"] >= params["until"]:
        raise LineError(None, f"--since {since} is not before --until {until}, so nothing could match")
    return clauses, params
