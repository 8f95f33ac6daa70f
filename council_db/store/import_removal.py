"""Undoing one import (``delete --import``): the records it stored, the sessions left empty,
its row and its rejected lines, in one write transaction.

A session is not deleted whole: other imports may have stored records in it (FastChat's
runs of one bench share every session), and those stay. An import owns the records it
stored first (store/provenance.py); another import that had read some of them is marked
``records_lost``, so importing its file again restores them. A running import is refused:
its lock (store/import_locks.py) tells it from a killed one, whose row can go.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from council_db.errors import CouncilDbError
from council_db.store.id_runs import id_runs
from council_db.store.import_locks import abandoned

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.store.database import Database

# The import's own records, in SQL over ``scores AS sc``: those it stored, and those stored
# before revision 0013 (no import_id) in the sessions it stored first.
OWN = ("(sc.import_id = :gone OR (sc.import_id IS NULL AND sc.session_id IN "
       "(SELECT id FROM sessions WHERE import_id = :gone)))")
MEASURE = f"""
WITH own AS (SELECT sc.session_id, COUNT(*) AS records FROM scores AS sc WHERE {OWN} GROUP BY sc.session_id)
SELECT COUNT(*), SUM(own.records),
       SUM(CASE WHEN own.records = (SELECT COUNT(*) FROM scores AS o WHERE o.session_id = own.session_id)
           THEN 1 ELSE 0 END),
       MIN(s.ts_us), MAX(s.ts_us)
FROM own JOIN sessions AS s ON s.id = own.session_id
"""


@dataclass(frozen=True)
class ImportDeletion:
    """What deleting an import takes (or, after ``delete``, took)."""

    import_id: int
    source: str
    records: int
    sessions: int  # sessions left without a record, deleted whole
    touched: int  # sessions it stored records in, those included
    first_us: int | None  # the touched sessions' times
    last_us: int | None
    rejected: int  # its rejected lines
    killed: bool  # its row said running, and its process was gone
    readers: list[tuple[int, str]] = field(default_factory=list)  # (id, source): imports that read what went


class UnknownImport(CouncilDbError):
    """No import has that id."""


class RunningImport(CouncilDbError):
    """The import is still running: deleting it would leave what it writes next orphaned."""


def count(db: Database, import_id: int) -> ImportDeletion:
    """What ``delete`` would take, changing nothing (the dry run)."""
    with db.engine.connect() as connection:
        return _measured(db, connection, import_id)


def delete(db: Database, import_id: int) -> ImportDeletion:
    """Delete the import's own records, the sessions they leave empty, its row and rejected
    lines; mark the imports that had read some of those records. One transaction, which
    waits its turn behind imports."""
    from sqlalchemy import text

    from council_db.store.provenance import mark_lost, readers_of
    from council_db.store.upkeep import check_after_crash

    with db.writer() as connection, connection.begin():
        measured = _measured(db, connection, import_id)
        if measured.killed:  # as when an import finds a killed one: no writing on a damaged file
            check_after_crash(db, connection)
        _delete_own_records(connection, import_id)
        readers = readers_of(connection, import_id)
        mark_lost(connection, readers)
        connection.execute(text("DELETE FROM imports WHERE id = :gone"), {"gone": import_id})  # rejected lines too
        return replace(measured, readers=_sources(connection, readers))


def _delete_own_records(connection: Connection, import_id: int) -> None:
    """The import's records, then the sessions they leave empty; the sessions that keep
    other imports' records get their statistics, packed records and first import again, and the day totals
    of every one are counted again (on PostgreSQL by the triggers of revision 0010)."""
    from sqlalchemy import text

    from council_db.store.derived import recount_days
    from council_db.store.packed_writes import rebuild
    from council_db.store.session_stats import refresh

    params = {"gone": import_id}
    touched = [row[0] for row in connection.execute(
        text(f"SELECT DISTINCT sc.session_id FROM scores AS sc WHERE {OWN}"), params)]
    sqlite = connection.dialect.name == "sqlite"
    days = _days(connection, touched) if sqlite else set()
    connection.execute(text(f"DELETE FROM scores AS sc WHERE {OWN}"), params)
    emptied = text("DELETE FROM sessions WHERE id BETWEEN :first AND :last AND NOT EXISTS "
                   "(SELECT 1 FROM scores WHERE session_id = sessions.id)")
    for first, last in id_runs(touched):
        connection.execute(emptied, {"first": first, "last": last})
    refresh(connection, set(touched))
    rebuild(connection, set(touched))
    connection.execute(text("UPDATE sessions SET import_id = (SELECT MIN(import_id) FROM scores "
                            "WHERE session_id = sessions.id) WHERE import_id = :gone"), params)
    if sqlite:
        recount_days(connection, days)


def _measured(db: Database, connection: Connection, import_id: int) -> ImportDeletion:
    """The import's deletion as it stands, after checking that it may be deleted."""
    from sqlalchemy import text

    row = connection.execute(text("SELECT source, status FROM imports WHERE id = :gone"), {"gone": import_id}).first()
    if row is None:
        raise UnknownImport(f"no import {import_id}: {_existing(connection)}")
    killed = row.status == "running"
    if killed and not abandoned(db, connection, [import_id]):
        raise RunningImport(f"import {import_id} ({row.source}) is still running: deleting it now would leave what "
                            "it stores next without its import. Wait for it to finish (or stop it), then delete it")
    touched, records, emptied, first_us, last_us = connection.execute(text(MEASURE), {"gone": import_id}).one()
    rejected = connection.execute(text("SELECT COUNT(*) FROM rejected_lines WHERE import_id = :gone"),
                                  {"gone": import_id}).scalar_one()
    return ImportDeletion(import_id, row.source, int(records or 0), int(emptied or 0), int(touched), first_us, last_us,
                          int(rejected), killed)


def _existing(connection: Connection) -> str:
    """The import ids there are, as runs ("1-4, 7"), and where to see them."""
    from sqlalchemy import text

    ids = [row[0] for row in connection.execute(text("SELECT id FROM imports"))]
    if not ids:
        return "the database holds no import"
    runs = ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in id_runs(ids))
    return f"the imports are {runs} (council-db sql \"SELECT id, source, status FROM imports\")"


def _days(connection: Connection, session_ids: list[int]) -> set[int]:
    """The day-totals days of these sessions (store/day_totals.py)."""
    from sqlalchemy import text

    from council_db.store.derived import SESSION_DAY

    days: set[int] = set()
    for first, last in id_runs(session_ids):
        days.update(day for (day,) in connection.execute(
            text(f"SELECT DISTINCT {SESSION_DAY} FROM sessions AS s WHERE s.id BETWEEN :first AND :last"),
            {"first": first, "last": last}))
    return days


def _sources(connection: Connection, import_ids: list[int]) -> list[tuple[int, str]]:
    from sqlalchemy import bindparam, text

    if not import_ids:
        return []
    return [(int(number), source) for number, source in connection.execute(
        text("SELECT id, source FROM imports WHERE id IN :ids ORDER BY id").bindparams(
            bindparam("ids", expanding=True)), {"ids": import_ids})]
