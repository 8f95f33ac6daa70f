"""Rows as a table for people shows them: session ids shortened as git shortens hashes,
times to the minute. JSON, JSONL and CSV keep every value whole; so does --wide."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from council_db.store.database import Database


def for_people(db: Database, rows: list[dict[str, Any]], ids: str = "session_id",
               times: tuple[str, ...] = ("timestamp",)) -> list[dict[str, Any]]:
    """``rows`` with the ``ids`` column shortened (each id's unique prefix among the stored
    sessions) and the ``times`` columns cut to the minute ("2026-11-01 14:05")."""
    from council_db.store.session_ids import abbreviations

    short = abbreviations(db, [row[ids] for row in rows if row.get(ids) is not None])
    return [{**row, ids: short.get(row.get(ids), row.get(ids)), **{t: minute(row.get(t)) for t in times if t in row}}
            for row in rows]


def minute(value: Any) -> Any:
    """An ISO-8601 time as its date and minute, as written; anything else as it is."""
    if isinstance(value, str) and len(value) >= 16 and value[10:11] in ("T", " ") and value[13:14] == ":":
        return value[:10] + " " + value[11:16]
    return value
