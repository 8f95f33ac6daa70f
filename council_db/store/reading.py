"""Read queries, the same on every backend: one transaction, named ``:parameters``, and a
list value expanded into an ``IN`` list of strings.

A SQLite file that ``open_reader`` found current is read with the standard library's sqlite3,
not SQLAlchemy: importing SQLAlchemy takes longer than a whole report on a small history, or
on a window of the latest thousand sessions of any store. Anything else (PostgreSQL, a file
that needs upgrading) goes through the SQLAlchemy engine as before."""

from __future__ import annotations

import re
import sqlite3
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from council_db.store import key_hash

if TYPE_CHECKING:
    import numpy as np
    from sqlalchemy import Connection


class Reader:
    """Queries inside one read transaction (one snapshot of the database)."""

    def _run(self, sql: str, params: dict[str, Any] | None) -> Any:
        """The executed query: an iterable of its rows."""
        raise NotImplementedError

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[Sequence[Any]]:
        raise NotImplementedError

    def mapping(self, sql: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The query's one row, by column name."""
        raise NotImplementedError

    def array(self, sql: str, dtype: np.dtype, params: dict[str, Any] | None = None) -> np.ndarray:
        """The query's rows as a structured array of ``dtype`` (one field per column), filled
        from the cursor row by row: never a list of Python rows."""
        import numpy as np

        return np.fromiter(map(tuple, self._run(sql, params)), dtype=dtype)

    def scalar(self, sql: str, params: dict[str, Any] | None = None) -> Any:
        """The first column of the query's one row."""
        (row,) = self.rows(sql, params)
        return row[0]

    def chunks(self, sql: str, params: dict[str, Any] | None, size: int) -> Iterator[Sequence[Sequence[Any]]]:
        """The query's rows, ``size`` at a time: for a result too large to hold at once."""
        cursor = self._stream(sql, params)
        while rows := cursor.fetchmany(size):
            yield rows

    def _stream(self, sql: str, params: dict[str, Any] | None) -> Any:
        return self._run(sql, params)


class EngineReader(Reader):
    def __init__(self, connection: Connection):
        self.connection = connection

    def _run(self, sql: str, params: dict[str, Any] | None):
        from sqlalchemy import String

        params = params or {}
        return self.connection.execute(engine_text(sql, params, String), params)

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[Sequence[Any]]:
        return self._run(sql, params).fetchall()

    def mapping(self, sql: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return dict(self._run(sql, params).one()._mapping)

    def array(self, sql: str, dtype: np.dtype, params: dict[str, Any] | None = None) -> np.ndarray:
        """On SQLite, from the driver's own cursor in this connection's transaction (bound as
        SqliteReader binds): SQLAlchemy's result hands rows over one ``fetchone`` at a time, which
        took most of a 16,000-record window's read through the Python API."""
        if self.connection.dialect.name != "sqlite":
            return super().array(sql, dtype, params)
        import numpy as np

        if not self.connection.in_transaction():
            self.connection.begin()  # the engine's "begin" event: this read's BEGIN
        sql, values = sqlite_params(sql, params or {})
        return np.fromiter(self.connection.connection.driver_connection.execute(sql, values), dtype=dtype)

    def _stream(self, sql: str, params: dict[str, Any] | None):
        """A server-side cursor on PostgreSQL: its driver would otherwise fetch every row at once."""
        self.connection.execution_options(stream_results=True)
        try:
            return self._run(sql, params)
        finally:
            self.connection.execution_options(stream_results=False)


class SqliteReader(Reader):
    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def _run(self, sql: str, params: dict[str, Any] | None) -> sqlite3.Cursor:
        sql, values = sqlite_params(sql, params or {})
        return self.connection.execute(sql, values)

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[Sequence[Any]]:
        return self._run(sql, params).fetchall()

    def mapping(self, sql: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        cursor = self._run(sql, params)
        (row,) = cursor.fetchall()
        return dict(zip((column[0] for column in cursor.description), row))


def engine_text(sql: str, params: dict[str, Any], list_type: Any = None) -> Any:
    """``sql`` as SQLAlchemy's text(), each list value among ``params`` an expanding ``IN``
    parameter (of ``list_type``, if given)."""
    from sqlalchemy import bindparam, text

    lists = [bindparam(name, expanding=True, type_=list_type) for name, value in params.items()
             if isinstance(value, (list, tuple)) and f":{name}" in sql]
    return text(sql).bindparams(*lists)


def sqlite_params(sql: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``sql`` and ``params`` as SQLAlchemy would bind them on SQLite: a list becomes
    ``(:name_0, :name_1, ...)`` (``()`` when empty, which SQLite reads as an empty set), a
    datetime the text SQLAlchemy stores (always with microseconds, so stored and given times
    compare as strings the same way)."""
    values: dict[str, Any] = {}
    for name, value in params.items():
        if isinstance(value, (list, tuple)):
            names = [f"{name}_{i}" for i in range(len(value))]
            marks = "(" + ", ".join(f":{n}" for n in names) + ")"
            sql = re.sub(rf"(?<![\w:]):{name}\b", lambda _: marks, sql)
            values.update(zip(names, value))
        elif isinstance(value, datetime):
            values[name] = value.strftime("%Y-%m-%d %H:%M:%S.%f")
        else:
            values[name] = value
    return sql, values


@contextmanager
def sqlite_reading(target: str, *, uri: bool, busy_timeout_ms: int) -> Iterator[Reader]:
    """A read transaction on its own connection (callers read from several threads at once)."""
    connection = sqlite3.connect(target, uri=uri, isolation_level=None, check_same_thread=False)
    key_hash.register(connection)
    try:
        connection.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        connection.execute("BEGIN")
        yield SqliteReader(connection)
    finally:
        connection.close()  # closing ends the transaction: nothing was written


@contextmanager
def engine_reading(connection: Connection) -> Iterator[Reader]:
    with connection:
        yield EngineReader(connection)
