"""Datasette's connections to a council-db database read its own keys as NULL.

local_keys holds the random key that keys each rejected line's line_hash
(store/local_keys.py). With the key, a line_hash confirms a guess of what the line said, and
anyone who may run SQL in Datasette could read it. An SQLite authorizer on each of
Datasette's connections to a council-db database answers every read of a local_keys column
with NULL (SQLITE_IGNORE, so counts, table pages and facets still work; the rule every read
outlet follows, secret_tables.py) and refuses every write to the table, and to its indexes
and triggers. It also reads sqlite_dbpage (raw pages of the file, in SQLite builds that have
it) as NULL. SQLite asks the authorizer once per action when it compiles a statement, never
per row.

Under --crossdb, Datasette's _memory connection attaches every database it serves under
that database's name: there, the local_keys of the attached council-db databases read as
NULL, and other databases' tables of that name as they are.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from urllib.parse import quote

from council_db.outlets.datasette_databases import COUNCIL_TABLES
from council_db.outlets.secret_tables import is_keys, read_as_null

# Actions whose first argument is the table written to: insert, update, delete, drop.
TABLE_WRITES = frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE,
                          sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_DROP_TEMP_TABLE})
# Actions whose second argument is the table: an index or trigger on it, made or dropped.
ON_TABLE = frozenset({sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_CREATE_TEMP_INDEX, sqlite3.SQLITE_DROP_INDEX,
                      sqlite3.SQLITE_DROP_TEMP_INDEX, sqlite3.SQLITE_CREATE_TRIGGER,
                      sqlite3.SQLITE_CREATE_TEMP_TRIGGER, sqlite3.SQLITE_DROP_TRIGGER,
                      sqlite3.SQLITE_DROP_TEMP_TRIGGER})

Authorizer = Callable[[int, str | None, str | None, str | None, str | None], int]


def guard_connection(conn: sqlite3.Connection, database: str, datasette) -> None:
    """Set the authorizer on ``conn`` (Datasette's connection to ``database``) when a
    council-db database is read through it; leave any other connection as it is."""
    schemas = council_schemas(conn, database, datasette)
    if schemas:
        conn.set_authorizer(authorizer(schemas))


def council_schemas(conn: sqlite3.Connection, database: str, datasette) -> frozenset[str]:
    """The names, on ``conn``, of the council-db databases it reads: "main" for a connection
    to one; the attached ones for Datasette's _memory connection under --crossdb."""
    if database == "_memory":
        if not datasette.crossdb:
            return frozenset()
        return frozenset(name.lower() for name, db in datasette.databases.items()
                         if not db.is_memory and db.path and _is_council_file(db.path))
    db = datasette.databases.get(database)
    if db is None or db.is_memory or not db.path:
        return frozenset()
    return frozenset({"main"}) if _has_council_tables(conn) else frozenset()


def authorizer(schemas: Iterable[str]) -> Authorizer:
    """SQLite's answer to each action of a statement: local_keys in the (lower-case) schemas
    reads as NULL and cannot be written; sqlite_dbpage reads as NULL; all else is allowed."""
    guarded = frozenset(schemas)

    def authorize(action: int, first: str | None, second: str | None, schema: str | None, _: str | None) -> int:
        if action == sqlite3.SQLITE_READ:
            return sqlite3.SQLITE_IGNORE if read_as_null(first, schema, guarded) else sqlite3.SQLITE_OK
        if action in TABLE_WRITES:
            written = first
        elif action in ON_TABLE:
            written = second
        elif action == sqlite3.SQLITE_ALTER_TABLE:
            written, schema = second, first
        else:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY if is_keys(written, schema, guarded) else sqlite3.SQLITE_OK

    return authorize


def _has_council_tables(conn: sqlite3.Connection) -> bool:
    """The test of datasette_databases.council_revision, asked synchronously of ``conn``."""
    names = ", ".join("?" * len(COUNCIL_TABLES))
    found = conn.execute(f"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ({names})",
                         sorted(COUNCIL_TABLES)).fetchone()[0]
    return found == len(COUNCIL_TABLES)


def _is_council_file(path: str) -> bool:
    conn = sqlite3.connect(f"file:{quote(os.fsencode(path))}?mode=ro", uri=True)
    try:
        return _has_council_tables(conn)
    finally:
        conn.close()
