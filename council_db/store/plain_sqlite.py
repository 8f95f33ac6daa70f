"""An import's write connection to a current SQLite file through the standard library's
sqlite3, standing in for the SQLAlchemy ``Connection`` the write path uses.

Importing SQLAlchemy's engine, its ORM and the schema's models cost an import 0.55-0.7 s of
CPU before its first record; a SQLite file at this code's schema needs none of them (the
write path's SQL is plain, as ``bias-report`` reads through sqlite3: store/reading.py).
This offers what the write path calls on a connection: ``exec_driver_sql`` (its rows, count
and last row id), the transaction (begun with the write lock on first use, as the engine's
``write_lock`` connections do: store/database.py), ``info`` and the driver connection.
PostgreSQL, and a file that must be created or upgraded first, keep the engine.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterator, Sequence

from council_db.store import key_hash
from council_db.store.import_lock_files import live_imports

CONNECTION_PRAGMAS = ("foreign_keys=ON", "synchronous=NORMAL")  # as the engine's connections get (database.py)
DIALECT = SimpleNamespace(name="sqlite", paramstyle="qmark")


class Result:
    """A statement's outcome, read as SQLAlchemy's result is read on the write path."""

    def __init__(self, cursor: sqlite3.Cursor):
        self.cursor = cursor
        self.rowcount = cursor.rowcount
        self.lastrowid = cursor.lastrowid

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.cursor)

    def fetchall(self) -> list[tuple]:
        return self.cursor.fetchall()

    def first(self) -> tuple | None:
        return self.cursor.fetchone()

    def scalar(self) -> Any:
        row = self.cursor.fetchone()
        return None if row is None else row[0]

    def scalar_one(self) -> Any:
        (row,) = self.cursor.fetchall()
        return row[0]

    def partitions(self, size: int) -> Iterator[list[tuple]]:
        while rows := self.cursor.fetchmany(size):
            yield rows


class SqliteConnection:
    """One sqlite3 connection whose transactions take the write lock up front (BEGIN
    IMMEDIATE, waiting for a running import: ``begin_writing``)."""

    dialect = DIALECT

    def __init__(self, path: Path, *, busy_timeout_ms: int, notify: Callable[[str], None]):
        self.path, self.notify = path, notify
        self.raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for pragma in (*CONNECTION_PRAGMAS, f"busy_timeout={busy_timeout_ms}"):
            self.raw.execute(f"PRAGMA {pragma}")
        key_hash.register(self.raw)
        self.connection = SimpleNamespace(driver_connection=self.raw)  # as SQLAlchemy's .connection offers it
        self.info: dict[str, Any] = {}
        self.commit_listeners: list[Callable[[SqliteConnection], None]] = []
        self._transaction: object | None = None

    def exec_driver_sql(self, sql: str, parameters: Sequence | dict | list = ()) -> Result:
        """The statement in this connection's transaction (begun first if none is); a list of
        parameter sets runs it once for each."""
        if self._transaction is None:
            self.begin()
        if isinstance(parameters, list):
            return Result(self.raw.executemany(sql, parameters))
        return Result(self.raw.execute(sql, parameters))

    def begin(self) -> object:
        begin_writing(lambda: self.raw.execute("BEGIN IMMEDIATE"), lambda: self.path, self.notify)
        self._transaction = object()
        return self._transaction

    def in_transaction(self) -> bool:
        return self._transaction is not None

    def get_transaction(self) -> object | None:
        return self._transaction

    def commit(self) -> None:
        if self._transaction is None:
            return
        self.raw.execute("COMMIT")
        for listener in self.commit_listeners:
            listener(self)
        self._transaction = None

    def rollback(self) -> None:
        self._transaction = None
        if self.raw.in_transaction:  # SQLite may have rolled back already (a full disk)
            self.raw.execute("ROLLBACK")

    def close(self) -> None:
        """Closing ends a transaction left open without committing it."""
        try:
            self.rollback()
        finally:
            self.raw.close()


def on_commit(connection: Any, listener: Callable[[Any], None]) -> None:
    """Call ``listener(connection)`` after each commit of ``connection`` (either kind)."""
    if isinstance(connection, SqliteConnection):
        connection.commit_listeners.append(listener)
        return
    from sqlalchemy import event

    event.listen(connection, "commit", listener)


def driver_errors(kind: str = "DatabaseError") -> tuple[type[BaseException], ...]:
    """sqlite3's exception class ``kind``, and SQLAlchemy's of that name where SQLAlchemy is
    loaded (no SQLAlchemy connection can exist where it is not)."""
    found: list[type[BaseException]] = [getattr(sqlite3, kind)]
    if "sqlalchemy" in sys.modules:
        from sqlalchemy import exc

        found.append(getattr(exc, kind))
    return tuple(found)


def begin_writing(begin: Callable[[], object], path: Callable[[], Path | None], notify: Callable[[str], None]) -> None:
    """``begin`` (BEGIN IMMEDIATE), which waits up to the busy timeout for the writer ahead;
    longer while that may be a running import (a --strict import holds the lock for its whole
    file, and a commit of 500,000 lines can take more than 30 s on a busy machine), saying so
    once. A writer that is no import still stops this one after the busy timeout. ``path``
    gives the file only when the lock is taken: rendering an engine's URL fails for a file
    name that is not UTF-8, which a database may have."""
    told = False
    while True:
        try:
            begin()
            return
        except driver_errors("OperationalError") as error:
            file = path() if "database is locked" in str(error) else None
            running = live_imports(file) if file is not None else []
            if not running:
                raise
            if not told:
                notify(f"waiting for the running import{'s' * (len(running) > 1)} {', '.join(map(str, running))} to "
                       "finish writing (the database is locked meanwhile; a --strict import holds it for its whole "
                       "file)")
                told = True
