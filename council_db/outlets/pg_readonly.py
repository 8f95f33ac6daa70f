"""council-db sql on PostgreSQL: walls the server holds beneath the statement check.

The text is sent only through the extended protocol, inside a transaction begun READ ONLY,
first as the query of ``DECLARE ... CURSOR FOR`` (then closed), then on its own:

- the extended protocol takes one statement (a ``; COMMIT; DELETE ...`` is an error, not a
  second and third statement), so the text cannot end the transaction;
- DECLARE takes only a SELECT or VALUES (no COMMIT, SET, COPY ... TO PROGRAM, DO, CALL,
  LOAD, and no data-modifying WITH), so the same text run next is one of those;
- READ ONLY refuses every write, SELECT INTO and set_config('transaction_read_only', ...);
- the transaction is rolled back and the connection given back, whatever happens.

``SET LOCAL`` puts standard_conforming_strings on (so the server reads backslashes in '...'
as sql_guard does) and statement_timeout to the time limit. Rows come one at a time
(single-row mode), so a large answer is never held whole (FETCH from the cursor would
gather its rows on the server first). What a superuser could still
reach with one SELECT (server files, other sessions) is refused by sql_guard's list of
functions, and cannot be reached at all through the role role_sql() writes.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

from council_db.errors import CouncilDbError
from council_db.outlets.sql_answer import Answer, Limits, timed_out
from council_db.resources import read_sql

CURSOR = "council_db_sql"


@contextmanager
def read(url: str, sql: str, limits: Limits = Limits(), params: dict[str, str] | None = None) -> Iterator[Answer]:
    """The statement's rows, read from a cursor in a READ ONLY transaction that is rolled back;
    ``params`` bound to its ``:name`` placeholders (sent apart from the text, as $1, $2, ...)."""
    import psycopg

    from council_db.store.database import create_engine_for

    engine = create_engine_for(url)  # psycopg for postgres:// and postgresql:// URLs too
    try:
        raw = engine.raw_connection()
        connection: psycopg.Connection = raw.driver_connection  # type: ignore[assignment]
        answer: Answer | None = None
        try:
            connection.rollback()
            connection.read_only = True  # psycopg begins each transaction READ ONLY
            answer = _declare(connection, sql, limits, params)
            yield answer
        except psycopg.Error as error:
            raise _explain(error, limits) from None
        finally:
            if answer is not None:
                answer.close()  # an answer stopped early: cancel the rest
            _end(raw)
    finally:
        engine.dispose()


def _declare(connection: Any, sql: str, limits: Limits, params: dict[str, str] | None) -> Answer:
    """DECLARE a cursor for the text (one statement, extended protocol), which proves it is one
    SELECT; then stream the same text row by row."""
    import psycopg

    from council_db.outlets.sql_guard import pg_placeholders

    if params:
        sql = pg_placeholders(sql, set(params))
    connection.execute("SET LOCAL standard_conforming_strings = on")
    milliseconds = max(1, round(limits.timeout * 1000)) if limits.timeout else 0  # 0: no limit
    connection.execute(f"SET LOCAL statement_timeout = {milliseconds}")
    cursor = connection.cursor(name=CURSOR)
    cursor.execute(sql, params or None)  # psycopg sends DECLARE ... FOR <sql> through the extended protocol
    columns = [column.name for column in cursor.description or ()]
    cursor.close()
    rows = connection.cursor().stream(sql, params or None)  # the same text, now known to be one SELECT

    def explain(error: Exception) -> CouncilDbError | None:
        return _explain(error, limits) if isinstance(error, psycopg.Error) else None

    return Answer(columns, rows, limits, explain)


def _explain(error: Exception, limits: Limits) -> CouncilDbError:
    """A one-line message: the time limit, or the server's first line."""
    import psycopg

    if isinstance(error, psycopg.errors.QueryCanceled):
        return timed_out(limits)
    return CouncilDbError(f"PostgreSQL: {str(error).splitlines()[0] if str(error) else type(error).__name__}")


def _end(raw: Any) -> None:
    """Roll back and give the connection back; one broken mid-answer is thrown away."""
    try:
        raw.driver_connection.rollback()
    except Exception:  # noqa: BLE001 - the connection is discarded instead
        raw.invalidate()
        return
    raw.close()


ROLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def role_sql(url: str, role: str) -> str:
    """The SQL that creates ``role``, able only to read council-db's tables and views in
    the database at ``url`` (those a later migration adds too) but local_keys, for
    `sql --db-readonly`."""
    from council_db.outlets.secret_tables import KEYS
    from council_db.store.location import checked_url

    if not ROLE_NAME.fullmatch(role):
        raise CouncilDbError(f"role name {role!r}: use lower-case letters, digits and _, e.g. council_reader")
    parsed = checked_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise CouncilDbError("a read-only role is for PostgreSQL; on SQLite council-db sql opens the file read-only")
    owner = parsed.username or "CURRENT_USER"
    return read_sql("readonly_role").format(role=role, keys=KEYS, database=_quoted(parsed.database or "postgres"),
                                            owner=owner if owner == "CURRENT_USER" else _quoted(owner))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
