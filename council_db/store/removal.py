"""Deleting sessions: one, or every session before a time (retention); an import is undone
by store/import_removal.py. One write transaction each, so a deletion happens whole or not at
all, and the derived tables stay true: a session's records, statistics and queued push
events go with it (foreign keys on SQLite, statement triggers on PostgreSQL: migration 0008),
and the day totals of its day are counted again (by triggers on PostgreSQL: migration 0010).

A selection is a condition on ``sessions AS s``; ``count`` says what it holds without
changing anything (the dry run), ``delete`` removes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from council_db.store.database import Database


@dataclass(frozen=True)
class Selection:
    """Sessions to delete: ``where`` over ``sessions AS s`` with its parameters."""

    description: str
    where: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Deletion:
    """What a selection held (or, after ``delete``, what went)."""

    sessions: int
    records: int
    first_us: int | None
    last_us: int | None


def of_session(key: str) -> Selection:
    return Selection(f"session {key}", "s.session_key = :key", {"key": key})


def before(ts_us: int, shown: str) -> Selection:
    """Sessions dated before the instant; undated ones are kept (they have no age)."""
    return Selection(f"the sessions before {shown}", "s.ts_us < :before_us", {"before_us": ts_us})


def count(db: Database, selection: Selection) -> Deletion:
    with db.reading() as reader:
        return _measured(reader.rows, selection)


def delete(db: Database, selection: Selection) -> Deletion:
    """Delete the selection in one write transaction (which waits its turn behind imports)."""
    from sqlalchemy import text

    from council_db.store.derived import SESSION_DAY, recount_days

    with db.writer() as connection, connection.begin():
        counted = _measured(lambda sql, params: connection.execute(text(sql), params).fetchall(), selection)
        if counted.sessions == 0:
            return counted
        days = {int(day) for (day,) in connection.execute(
            text(f"SELECT DISTINCT {SESSION_DAY} FROM sessions AS s WHERE {selection.where}"), selection.params)}
        connection.execute(text(f"DELETE FROM sessions AS s WHERE {selection.where}"), selection.params)
        if connection.dialect.name == "sqlite":  # PostgreSQL's triggers recount the days themselves
            recount_days(connection, days)
    return counted


def _measured(rows: Callable[[str, dict[str, Any]], Sequence], selection: Selection) -> Deletion:
    sessions, first_us, last_us = rows(
        f"SELECT COUNT(*), MIN(s.ts_us), MAX(s.ts_us) FROM sessions AS s WHERE {selection.where}", selection.params)[0]
    records = rows(f"SELECT COUNT(*) FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id "
                   f"WHERE {selection.where}", selection.params)[0][0]
    return Deletion(int(sessions), int(records), first_us, last_us)
