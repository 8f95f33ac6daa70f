"""Ad-hoc read-only SQL (`council-db sql`): one reader per dialect, each using the
database's own read-only machinery beneath the statement check in sql_guard.py.

SQLite, three locks: the file is opened read-only (URI mode=ro) with PRAGMA query_only=ON,
and an authorizer denies every action but reading tables, the read functions SQLite ships
and PRAGMAs that only read; it reads local_keys as NULL (secret_tables.py), as Datasette does.
PostgreSQL: see pg_readonly.py.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

from council_db.errors import CouncilDbError
from council_db.outlets import pg_readonly, sql_guard
from council_db.outlets.secret_tables import read_as_null
from council_db.outlets.sql_answer import Answer, Limits, timed_out, value_too_big
from council_db.store.database import no_database, read_only_uri

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
MAIN = frozenset({"main"})  # the one schema: ATTACH and temp tables are refused


@contextmanager
def read(url: str, sql: str, limits: Limits = Limits(), params: dict[str, str] | None = None,
         given: str | None = None) -> Iterator[Answer]:
    """One read-only statement against the database at ``url``, its rows read as they are used;
    ``params`` are bound to its ``:name`` placeholders (as values, never as SQL text); ``given``:
    the database as the user typed it, for the message when there is none."""
    from council_db.store.location import checked_url, sqlite_path

    path = sqlite_path(url)
    dialect = checked_url(url).get_backend_name()  # an unsupported URL is refused here, its password hidden
    sql_guard.check(sql, dialect)
    if dialect == "sqlite" and path is not None:
        with read_sqlite(path, sql, limits, params, given) as answer:
            yield answer
    elif dialect == "postgresql":
        with pg_readonly.read(url, sql, limits, params) as answer:
            yield answer
    else:
        raise CouncilDbError(f"council-db sql reads an SQLite file or a PostgreSQL database, not {url}")


class _Authorizer:
    """sqlite3's authorizer callback, remembering what it refused so the user is told."""

    def __init__(self) -> None:
        self.refusals: list[tuple[int, str | None, str | None]] = []

    def __call__(self, action: int, arg1: str | None, arg2: str | None, db: str | None, _trigger: str | None) -> int:
        if action == sqlite3.SQLITE_READ and read_as_null(arg1, db, MAIN):
            return sqlite3.SQLITE_IGNORE
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
    if arg1 == "sqlite_master" and action == sqlite3.SQLITE_UPDATE and arg2 == "type":
        # How SQLite declares a table-valued function's table on its first use (see
        # _load_table_valued_functions): the statement itself changes nothing.
        return ("a table-valued function other than json_each and json_tree (for pragma_table_info(...) "
                "and the like, use the PRAGMA statement)")
    if arg1 == "sqlite_master":
        return "changing the schema"
    if action == sqlite3.SQLITE_ATTACH:
        return "VACUUM" if arg1 == "" else "ATTACH (and VACUUM INTO, which attaches its target file)"
    target = f" on {arg1}" if arg1 else ""
    return f"{_ACTION_NAMES.get(action, f'action {action}')}{target}"


class _Deadline:
    """SQLite's progress handler: interrupts the statement once the time limit has passed."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.passed = False

    def __call__(self) -> int:
        self.passed = time.monotonic() > self.at
        return int(self.passed)


def _load_table_valued_functions(connection: sqlite3.Connection) -> None:
    """Declare json_each and json_tree before the authorizer is set: SQLite declares a
    table-valued function's table on its first use in a connection, which the authorizer
    sees as a change to the schema and would refuse."""
    try:
        connection.execute("SELECT * FROM json_each('[]'), json_tree('[]')").fetchall()
    except sqlite3.OperationalError:  # an SQLite built without JSON
        pass


@contextmanager
def read_sqlite(path: Path, sql: str, limits: Limits = Limits(),
                params: dict[str, str] | None = None, given: str | None = None) -> Iterator[Answer]:
    """Read-only by three independent routes: mode=ro, query_only, and the authorizer.
    The time limit is a progress handler; the value limit is SQLite's own length limit, so
    a huge string or blob is refused as it is being made, not after. ``given``: the file as
    the user typed it, for the message when it is not there."""
    if not path.exists():
        raise no_database(path, given)
    uri = read_only_uri(path) or f"file:{quote(os.fsencode(path.resolve()))}?mode=ro"
    connection = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        connection.execute("PRAGMA query_only = ON")
        _load_table_valued_functions(connection)
        if limits.max_value_bytes:
            connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limits.max_value_bytes)
        authorizer = _Authorizer()
        connection.set_authorizer(authorizer)
        deadline = _Deadline(limits.timeout)
        if limits.timeout:
            connection.set_progress_handler(deadline, 1000)

        def explain(error: Exception) -> CouncilDbError | None:
            if not isinstance(error, (sqlite3.Error, sqlite3.Warning)):
                return None
            refused = authorizer.refused()
            if refused:
                return sql_guard.Refused(refused)
            if deadline.passed:
                return timed_out(limits)
            if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_TOOBIG:
                return value_too_big(limits)
            return CouncilDbError(f"SQLite: {error}")

        try:
            cursor = connection.execute(sql, params or {})
        except (sqlite3.Error, sqlite3.Warning) as error:
            raise explain(error) from None  # type: ignore[misc]
        yield Answer([d[0] for d in cursor.description or ()], cursor, limits, explain)
    finally:
        connection.close()
