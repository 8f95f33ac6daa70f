"""The writer's INSERT statements, made once per shape: a row whose key is stored already is
skipped (``ON CONFLICT DO NOTHING``), which makes importing idempotent (store/writer.py)."""

from __future__ import annotations

import sqlite3
from functools import cache
from typing import Any


@cache
def insert_statement(mark: str, table: str, columns: tuple[str, ...], conflict: str | None, rows: int,
                     literals: tuple[tuple[str, int], ...] = ()) -> str:
    """SQLite: ``rows`` rows of VALUES, one ``mark`` per value, then the ``literals``' integers,
    the same in every row; no conflict clause for rows known to be new (``conflict`` None)."""
    one = "(" + ", ".join([mark] * len(columns) + [str(int(value)) for _, value in literals]) + ")"
    skip = "" if conflict is None else f" ON CONFLICT ({conflict}) DO NOTHING"
    names = ", ".join([*columns, *(name for name, _ in literals)])
    return f"INSERT INTO {table} ({names}) VALUES {', '.join([one] * rows)}{skip}"


@cache
def unnest_statement(table: str, columns: tuple[str, ...], conflict: str) -> str:
    """PostgreSQL: rows from one array parameter per column, typed as the column is."""
    from sqlalchemy.dialects import postgresql

    from council_db.store.models import Base

    dialect = postgresql.dialect()
    types = [Base.metadata.tables[table].c[name].type.compile(dialect=dialect) for name in columns]
    arrays = ", ".join(f"%b::{kind}[]" for kind in types)  # binary: ~15% faster than text arrays
    return (f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM unnest({arrays}) "
            f"ON CONFLICT ({conflict}) DO NOTHING")


def inserted_returning(connection: Any, table: str, columns: tuple[str, ...], conflict: str, rows: list[tuple],
                       returning: str, per_statement: int) -> list[tuple] | None:
    """SQLite from 3.35 on: insert ``rows`` (a row whose key is stored is skipped),
    ``per_statement`` a statement, and the ``returning`` columns of those inserted, from the
    INSERT itself (the same statement, so the same ids, as without RETURNING); None where
    SQLite has no RETURNING."""
    if sqlite3.sqlite_version_info < (3, 35):
        return None
    found: list[tuple] = []
    for start in range(0, len(rows), per_statement):
        chunk = rows[start:start + per_statement]
        statement = insert_statement("?", table, columns, conflict, len(chunk))
        found += connection.exec_driver_sql(f"{statement} RETURNING {returning}",
                                            tuple(value for row in chunk for value in row)).fetchall()
    return found
