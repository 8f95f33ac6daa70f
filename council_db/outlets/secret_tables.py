"""What no read outlet shows: this database's own keys (local_keys, store/local_keys.py), and
SQLite's raw pages of the file, which hold them too.

With the key, a rejected line's line_hash confirms a guess of what the line said. So every
outlet that reads the database for someone follows one rule, local_keys is never readable:
`council-db sql` refuses a statement that names it (sql_guard) and, beneath that check, reads
it as NULL on SQLite (readonly_sql); the read-only PostgreSQL role has no privilege on it
(sql/readonly_role.sql); Datasette reads it as NULL (datasette_local_keys).
"""

from __future__ import annotations

from collections.abc import Iterable

KEYS = "local_keys"
RAW_PAGES = "sqlite_dbpage"  # an SQLite virtual table of the file's pages, in builds that have it


def is_keys(table: str | None, schema: str | None, schemas: Iterable[str]) -> bool:
    """Whether ``table`` in ``schema`` (None: any) is local_keys in one of the lower-case ``schemas``."""
    return table is not None and table.lower() == KEYS and (schema is None or schema.lower() in schemas)


def read_as_null(table: str | None, schema: str | None, schemas: Iterable[str]) -> bool:
    """Whether an SQLite authorizer must answer a read of a column of ``table`` with NULL
    (SQLITE_IGNORE, so counts still work): local_keys in ``schemas``, raw pages anywhere."""
    return is_keys(table, schema, schemas) or (table or "").lower() == RAW_PAGES
