"""Which import stored what, and what deleting an import takes from the others.

A record belongs to the import that stored it first: ``scores.import_id`` (revision 0013),
or for a record stored before, its session's ``import_id``. An import that reads a record or
a bad line another import stored first stores nothing of it, so deleting that other import
would take something this one read. ``import_overlaps`` says so, and ``delete --import``
marks such an import ``records_lost``: the next import of its file reads it again
(ingest/resume.py), which restores what went.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from sqlalchemy import Connection

# An owner in SQL over ``scores``: the import that stored the record (its session's, before 0013)
RECORD_OWNER = "COALESCE(import_id, (SELECT s.import_id FROM sessions AS s WHERE s.id = session_id))"


def record_reads(connection: Connection, import_id: int | None, owners: Iterable[int | None]) -> None:
    """Note that import ``import_id`` read records or bad lines the ``owners`` stored first,
    in its transaction."""
    from council_db.store.named_sql import run

    others = sorted({owner for owner in owners if owner is not None} - {import_id})
    if import_id is None or not others:
        return
    run(connection, "INSERT INTO import_overlaps (import_id, first_id, last_id) VALUES (:me, :other, :other) "
                    "ON CONFLICT (import_id, first_id, last_id) DO NOTHING",
        [{"me": import_id, "other": other} for other in others])


def readers_of(connection: Connection, import_id: int) -> list[int]:
    """The other imports that read something import ``import_id`` had stored first."""
    from sqlalchemy import text

    return [int(reader) for (reader,) in connection.execute(text(
        "SELECT DISTINCT import_id FROM import_overlaps WHERE :gone BETWEEN first_id AND last_id "
        "AND import_id <> :gone ORDER BY import_id"), {"gone": import_id})]


def mark_lost(connection: Connection, import_ids: list[int]) -> None:
    """Their files are read again by the next import of each (see ingest/resume.py)."""
    from sqlalchemy import bindparam, text

    if import_ids:
        connection.execute(text("UPDATE imports SET records_lost = :lost WHERE id IN :ids")
                           .bindparams(bindparam("ids", expanding=True)), {"lost": True, "ids": import_ids})
