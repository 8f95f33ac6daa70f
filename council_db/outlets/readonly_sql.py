"""Ad-hoc read-only SQL (`council-db sql`): one function per dialect, each using the
database's own read-only machinery beneath the statement check in sql_guard.py.

SQLite, three locks: the file is opened read-only (URI mode=ro) with PRAGMA query_only=ON,
and an authorizer denies every action but reading tables, the read functions SQLite ships
and PRAGMAs that only read. PostgreSQL: the statement runs inside a READ ONLY transaction
that is rolled back.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from council_db.errors import CouncilDbError
from council_db.outlets import sql_guard

# Functions that compute from their arguments and never touch files or the connection's state
# (core, date, math, JSON, window and aggregate functions). load_extension and anything not
# listed (e.g. fts3_tokenizer, functions a build might add) is refused.
READ_FUNCTIONS = frozenset("""
abs changes char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid length like
likelihood likely lower ltrim max min nullif octet_length printf quote random randomblob replace round rtrim
sign soundex sqlite_compileoption_get sqlite_compileoption_used sqlite_source_id sqlite_version substr substring
total_changes trim typeof unhex unicode unlikely upper zeroblob
date time datetime julianday unixepoch strftime timediff
acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi pow
power radians sin sinh sqrt tan tanh trunc
avg count group_concat string_agg sum total median
row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
json json_array json_array_length json_error_position json_extract json_insert json_object json_patch
json_pretty json_quote json_remove json_replace json_set json_type json_valid json_group_array
json_group_object json_each json_tree jsonb jsonb_array jsonb_extract jsonb_insert jsonb_object jsonb_patch
jsonb_remove jsonb_replace jsonb_set jsonb_group_array jsonb_group_object
""".split())

# The authorizer's action codes, for naming what was refused.
_ACTIONS = """CREATE_INDEX CREATE_TABLE CREATE_TEMP_INDEX CREATE_TEMP_TABLE CREATE_TEMP_TRIGGER CREATE_TEMP_VIEW
CREATE_TRIGGER CREATE_VIEW DELETE DROP_INDEX DROP_TABLE DROP_TEMP_INDEX DROP_TEMP_TABLE DROP_TEMP_TRIGGER
DROP_TEMP_VIEW DROP_TRIGGER DROP_VIEW INSERT PRAGMA READ SELECT TRANSACTION UPDATE ATTACH DETACH ALTER_TABLE
REINDEX ANALYZE CREATE_VTABLE DROP_VTABLE FUNCTION SAVEPOINT RECURSIVE""".split()
_ACTION_NAMES = {getattr(sqlite3, f"SQLITE_{name}"): name.replace("_", " ") for name in _ACTIONS}


@dataclass
class Answer:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def as_dicts(self) -> list[dict[str, Any]]:
        """Rows as dicts; a repeated column name gets a suffix (_2, _3) so no value is lost."""
        names: list[str] = []
        for column in self.columns:
            name, n = column, 1
            while name in names:
                n += 1
                name = f"{column}_{n}"
            names.append(name)
        return [dict(zip(names, (_plain(v) for v in row))) for row in self.rows]


def _plain(value: Any) -> Any:
    return value.hex() if isinstance(value, (bytes, memoryview)) else value


def run(url: str, sql: str) -> Answer:
    """Run one read-only statement against the database at ``url``."""
    from sqlalchemy.engine import make_url

    from council_db.store.location import sqlite_path

    path = sqlite_path(url)
    dialect = make_url(url).get_backend_name()
    sql_guard.check(sql, dialect)
    if dialect == "sqlite" and path is not None:
        return run_sqlite(path, sql)
    if dialect == "postgresql":
        return run_postgresql(url, sql)
    raise CouncilDbError(f"council-db sql reads an SQLite file or a PostgreSQL database, not {url}")


class _Authorizer:
    """sqlite3's authorizer callback, remembering what it refused so the user is told."""

    def __init__(self) -> None:
        self.refusals: list[tuple[int, str | None, str | None]] = []

    def __call__(self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
        if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and arg2 is not None and arg2.lower() in READ_FUNCTIONS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA and arg1 is not None and sql_guard.pragma_allowed(arg1, arg2):
            return sqlite3.SQLITE_OK
        self.refusals.append((action, arg1, arg2))
        return sqlite3.SQLITE_DENY

    def refused(self) -> str | None:
        """The refusal to name: SQLite's own bookkeeping (writes to its schema tables) comes
        before the statement's action, which says more."""
        named = [r for r in self.refusals if not (r[1] or "").startswith("sqlite_")] or self.refusals
        return _describe(*named[0]) if named else None


def _describe(action: int, arg1: str | None, arg2: str | None) -> str:
    if action == sqlite3.SQLITE_FUNCTION:
        return f"the function {arg2}()"
    if action == sqlite3.SQLITE_PRAGMA:
        return f"PRAGMA {arg1}" + (f" = {arg2}" if arg2 is not None else "")
    if arg1 == "sqlite_temp_master":
        return "CREATE TEMP (a temp table, view, index or trigger)"
    if arg1 == "sqlite_master":
        return "changing the schema"
    if action == sqlite3.SQLITE_ATTACH:
        return "VACUUM" if arg1 == "" else "ATTACH (and VACUUM INTO, which attaches its target file)"
    target = f" on {arg1}" if arg1 else ""
    return f"{_ACTION_NAMES.get(action, f'action {action}')}{target}"


def run_sqlite(path: Path, sql: str) -> Answer:
    """Read-only by three independent routes: mode=ro, query_only, and the authorizer."""
    if not path.exists():
        raise CouncilDbError(f"no database at {path} yet: import something first")
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    connection = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        connection.execute("PRAGMA query_only = ON")
        authorizer = _Authorizer()
        connection.set_authorizer(authorizer)
        try:
            cursor = connection.execute(sql)
            rows = cursor.fetchall()
        except (sqlite3.DatabaseError, sqlite3.ProgrammingError, sqlite3.Warning) as error:
            refused = authorizer.refused()
            if refused:
                raise sql_guard.Refused(refused) from None
            raise CouncilDbError(f"SQLite: {error}") from None
        columns = [d[0] for d in cursor.description or ()]
        return Answer(columns, rows)
    finally:
        connection.close()


def run_postgresql(url: str, sql: str) -> Answer:
    """The statement inside a READ ONLY transaction, always rolled back: PostgreSQL itself
    refuses any write, a writable CTE included. sql_guard has already refused several
    statements, so no COMMIT can end the transaction early."""
    from sqlalchemy.exc import DBAPIError

    from council_db.store.database import create_engine_for

    engine = create_engine_for(url)  # psycopg for postgres:// and postgresql:// URLs too
    try:
        with engine.connect() as connection:
            transaction = connection.begin()
            try:
                connection.exec_driver_sql("SET TRANSACTION READ ONLY")
                result = connection.exec_driver_sql(sql)
                columns = list(result.keys()) if result.returns_rows else []
                rows = [tuple(row) for row in result] if result.returns_rows else []
            except DBAPIError as error:
                raise CouncilDbError(f"PostgreSQL: {str(error.orig).splitlines()[0]}") from None
            finally:
                transaction.rollback()
        return Answer(columns, rows)
    finally:
        engine.dispose()
