"""The writer's INSERT statements, made once per shape: a row whose key is stored already is
skipped (``ON CONFLICT DO NOTHING``), which makes importing idempotent (store/writer.py)."""

from __future__ import annotations

import sqlite3
from functools import cache
from typing import Any, Sequence

import numpy as np


@cache
def insert_statement(mark: str, table: str, columns: tuple[str, ...], conflict: str | None, rows: int,
                     shared: tuple[str, ...] = ()) -> str:
    """SQLite: ``rows`` rows of VALUES, one ``mark`` per value of ``columns``; no conflict clause
    for rows known to be new (``conflict`` None). The ``shared`` columns, one value in every
    row, come first, bound once: parameters ?1..?k in every row, then the row's own, which
    SQLite numbers on from the largest so far (numbering every parameter made SQLite's compile
    of a 500-row statement take five times as long)."""
    names = ", ".join([*shared, *columns])
    one = "(" + ", ".join([f"?{number}" for number in range(1, len(shared) + 1)] + [mark] * len(columns)) + ")"
    skip = "" if conflict is None else f" ON CONFLICT ({conflict}) DO NOTHING"
    return f"INSERT INTO {table} ({names}) VALUES {', '.join([one] * rows)}{skip}"


def split_shared(columns: tuple[str, ...], data: Sequence[list | np.ndarray]) -> tuple[tuple[str, ...], list[list],
                                                                                  dict[str, Any]]:
    """SQLite: ``columns`` (values ``data``: a list or a numpy array a column, each of one type)
    parted into those bound in each row, as lists, and those holding one value in every row,
    bound once (``insert_statement``'s ``shared``), a column NULL in every row among them.
    sqlite3 binds None through a failed look-up of an adapter (0.6 us a value, Python 3.11), an
    int or a float directly (0.05); a value bound once costs nothing a row. A None left in a
    list bound a row at a time goes as NaN, which SQLite stores as NULL, as it stores None (an
    array's NaN goes so too). The first column is always bound in each row: it counts them."""
    kept: list[list] = []
    names: list[str] = []
    shared: dict[str, Any] = {}
    for number, (name, column) in enumerate(zip(columns, data)):
        if isinstance(column, np.ndarray):
            if number and column.min() == column.max():  # NaN in none: NaN == NaN is false
                shared[name] = column[0].item()
            else:
                names.append(name)
                kept.append(column.tolist())
        elif number and column.count(column[0]) == len(column):
            shared[name] = column[0]
        else:
            names.append(name)
            kept.append([NULL if value is None else value for value in column] if None in column else column)
    return tuple(names), kept, shared


NULL = float("nan")  # bound, SQLite stores it as NULL (it keeps no NaN)


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
