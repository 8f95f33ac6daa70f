"""``council-db db check``: the reference checks and every derived table's, two at a time.

Each check is a few SQL statements that only read (without ``--repair``) on a connection of
its own, and SQLite and PostgreSQL run a statement without holding Python's GIL, so two
threads keep two cores busy: at 100,000 sessions the checks take 6.4 s (session_stats), 1.2
to 2.7 s (each day-totals table) and 2.1 s (the references of ``scores``) one after the other.

The five day-totals tables share one screen (store/day_screen.py): a range of days is
compared row by row only where one sort of its records for all five tables finds it
different, instead of one sort per table.

``--repair`` runs them one after the other, references first (a deleted orphan changes the
derived rows), each repair under the write lock, and compares every range row by row, as
before.

A ``scope`` (store/check_memory.py) narrows every check to the session and day ranges that
may have changed since the last clean check; without one, every range is read.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from council_db.store import derived, packed_check, references
from council_db.store.day_screen import DayScreen

if TYPE_CHECKING:
    from council_db.store.check_memory import Scope
    from council_db.store.database import Database
    from council_db.store.derived import Finding, Ranges

THREADS = 2  # the machines council-db is measured on have 2 cores; more only queue for them


def check(db: Database, *, repair: bool = False, scope: Scope | None = None) -> tuple[list[Finding], list[Finding]]:
    """(derived-table findings in DERIVED order then packed_records', reference findings), as
    derived.check, packed_check.check and references.orphans give them, over the ranges of
    ``scope`` (every range where it is None or full)."""
    ranges: Ranges | None = None
    sessions = None
    if scope is not None and not scope.full:
        ranges = {"session_id": scope.sessions, "day": scope.days}
        sessions = None if scope.references else scope.sessions
    if repair:
        orphans = references.orphans(db, repair=True, sessions=sessions)
        return (derived.check(db, repair=True, ranges=ranges)
                + packed_check.check(db, repair=True, ranges=None if ranges is None else ranges["session_id"]), orphans)
    with ThreadPoolExecutor(THREADS, thread_name_prefix="db-check") as pool:
        # the longest first (session_stats, then the day totals): the threads end close together
        screen = DayScreen().passes  # the day totals: one sort of the records for the five tables
        tables = [pool.submit(derived.check, db, tables=(table,), screen=screen, ranges=ranges)
                  for table in derived.DERIVED]
        orphans = pool.submit(references.orphans, db, sessions=sessions)
        packed = pool.submit(packed_check.check, db,  # packed_records, where kept: store/packed_check.py
                             ranges=None if ranges is None else ranges["session_id"])
        return [finding for table in tables for finding in table.result()] + packed.result(), orphans.result()
