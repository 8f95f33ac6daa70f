"""Named-parameter SQL on the write path's connection, whichever it is: an engine's (SQLite or
PostgreSQL) or a plain sqlite3 one (store/plain_sqlite.py), so that the imports table's
statements need neither SQLAlchemy's expression language nor the schema's models.

A list value becomes an ``IN`` list and a datetime the text SQLAlchemy stores on SQLite
(store/reading.sqlite_params), so rows are written as the ORM wrote them."""

from __future__ import annotations

from typing import Any

from council_db.store.reading import engine_text, sqlite_params


def run(connection: Any, sql: str, parameters: dict[str, Any] | list[dict[str, Any]] | None = None) -> Any:
    """``sql`` with ``:name`` parameters (a list of parameter sets: run once for each); its result."""
    if connection.dialect.name == "sqlite":  # sqlite3 binds :name itself, under the engine too
        if isinstance(parameters, list):
            return connection.exec_driver_sql(sql, [sqlite_params(sql, one)[1] for one in parameters])
        return connection.exec_driver_sql(*sqlite_params(sql, parameters or {}))
    return connection.execute(engine_text(sql, parameters if isinstance(parameters, dict) else {}), parameters)


def inserted_id(connection: Any, sql: str, parameters: dict[str, Any]) -> int:
    """The id of the row one ``INSERT`` statement ``sql`` adds."""
    if connection.dialect.name == "sqlite":
        return run(connection, sql, parameters).lastrowid
    return run(connection, f"{sql} RETURNING id", parameters).scalar_one()


def same_as(connection: Any, same: bool = True) -> str:
    """The operator that compares two values, NULL equal to NULL (SQLite says IS); with
    ``same`` False its negation."""
    if connection.dialect.name == "sqlite":
        return "IS" if same else "IS NOT"
    return "IS NOT DISTINCT FROM" if same else "IS DISTINCT FROM"
