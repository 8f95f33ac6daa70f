"""The writer's INSERT statements, made once per shape: a row whose key is stored already is
skipped (``ON CONFLICT DO NOTHING``), which makes importing idempotent (store/writer.py)."""

from __future__ import annotations

from functools import cache


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
