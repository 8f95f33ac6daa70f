"""Whether an import whose row says ``running`` is still alive.

A row alone cannot tell: several importers may run at once (they take turns with the write
lock), and a killed one leaves its row ``running``. So every import holds a lock that the
operating system or the server drops the moment its process dies, and another process
that can take that lock knows the import is gone:

- SQLite: ``flock`` on ``.NAME.import-ID.lock`` beside the database file. The kernel
  releases it when the process ends however it ends, and it needs no schema change (the
  ``imports`` table has no pid column, and a pid alone would not survive pid reuse).
- PostgreSQL: a session-level advisory lock keyed by the import's id, on a connection of
  its own; the server releases it when that connection's process is gone.

Callers look only at committed ``running`` rows, and an import takes its lock before its
first commit, so a live import's lock is always held when its row can be seen.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from council_db.store.import_lock_files import holding, lock_file, lock_file_ids
from council_db.store.location import sqlite_path

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from council_db.store.database import Database

LIVE_IMPORT_KEY = 0x696D7074  # "impt": the first half of every import's advisory lock key


@contextmanager
def import_lock(db: Database, import_id: int) -> Iterator[None]:
    """Hold import ``import_id``'s lock while the block runs (and the process lives)."""
    if db.dialect == "postgresql":
        with _advisory_lock(db, import_id):
            yield
        return
    db_file = sqlite_path(db.url)
    if db_file is None:  # in-memory: no other process can see the row
        yield
        return
    with holding(lock_file(db_file, import_id)):
        yield


@contextmanager
def _advisory_lock(db: Database, import_id: int) -> Iterator[None]:
    """On a connection of its own, which takes no write lock, so holding it blocks nobody."""
    from sqlalchemy import text

    key = {"kind": LIVE_IMPORT_KEY, "id": import_id}
    with db.engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:kind, :id)"), key)
        connection.commit()
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:kind, :id)"), key)
            connection.commit()


def abandoned(db: Database, connection: Connection, running: list[int]) -> list[int]:
    """The ``running`` import ids whose process is gone. ``connection`` is in the caller's
    write transaction, so no import can commit meanwhile. On SQLite, lock files that no
    import holds any more (a process killed before its first commit) are removed too."""
    if db.dialect == "postgresql":  # a transaction-level try: released when the caller commits
        from sqlalchemy import text

        probe = text("SELECT pg_try_advisory_xact_lock(:kind, :id)")
        return [i for i in running if connection.execute(probe, {"kind": LIVE_IMPORT_KEY, "id": i}).scalar()]
    db_file = sqlite_path(db.url)
    if db_file is None:  # in-memory: every import of this process has returned
        return list(running)
    gone = [i for i in sorted(set(running) | set(lock_file_ids(db_file))) if _take_and_remove(lock_file(db_file, i))]
    return [i for i in gone if i in running]


def _take_and_remove(path: Path) -> bool:
    """True (and the file removed) when no process holds the lock: its import has ended."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # e.g. a read-only directory: the file cannot be a live import's
        return True
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return False
    path.unlink(missing_ok=True)
    os.close(descriptor)
    return True
