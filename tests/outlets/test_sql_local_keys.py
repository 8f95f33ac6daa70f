"""No read outlet shows local_keys (the key of rejected lines' line_hash): `council-db sql`
refuses a statement that names it, on SQLite and on PostgreSQL (and the PostgreSQL functions
that read a table named by a string: table_to_xml and the like); beneath that check SQLite reads
it as NULL, as Datasette does (test_datasette_local_keys.py), and the read-only PostgreSQL role
has no privilege on it, so it cannot read it even straight to the server. Datasette's own
rule is tested beside its plugin."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from council_db.errors import CouncilDbError
from council_db.outlets.readonly_sql import read_sqlite
from tests.conftest import Cli, run_module
from tests.outlets.test_datasette_local_keys import READS, key_material
from tests.outlets.test_sql import template  # noqa: F401 - a fixture
from tests.outlets.test_sql_postgres import _connect, copy_url, filled_pg, reader  # noqa: F401 - fixtures

# Each names local_keys some way the server reads as that table, and reads the key with plain
# sqlite3 or psql.
NAMED = [
    "select * from local_keys",
    'select * from "local_keys"',
    "SELECT * FROM LOCAL_KEYS",
    "select (select value from local_keys order by name limit 1) as value",
    "with k as (select * from local_keys) select upper(value), substr(value, 1, 16) from k",
    "select value from local_keys where name = 'line_hash'",
]
SQLITE_READS = [query for query in READS if "rejected_lines" not in query]  # the file has no rejected line
SQLITE_NAMED = list(dict.fromkeys([*NAMED, *SQLITE_READS, "select * from [local_keys]", "select * from `local_keys`",
                                   "select * from main.local_keys"]))
PG_NAMED = NAMED + [
    "select * from public.local_keys",
    "select row_to_json(k) from local_keys k",
    "select table_to_xml('local_keys', true, false, '')",
    "select table_to_xml(('local' || '_keys')::regclass, true, false, '')",
    "select table_to_xml_and_xmlschema('public.local_keys', true, false, '')",
    "select schema_to_xml('public', true, false, '')",
    "select database_to_xml(true, false, '')",
    "select query_to_xml('select * from ' || 'local' || '_keys', true, false, '')",
    "select histogram_bounds::text from pg_stats where tablename = 'local' || '_keys'",
]
PG_NAMED_IDS = [f"{n}:{q[:40]}" for n, q in enumerate(PG_NAMED)]


def refusal(result) -> str:
    assert isinstance(result.exception, CouncilDbError), result.output
    assert result.exception.exit_code == 2
    return str(result.exception)


@pytest.fixture(scope="module")
def sqlite_key(template) -> str:  # noqa: F811 - the imported fixture
    with sqlite3.connect(f"file:{template}?mode=ro", uri=True) as connection:
        return connection.execute("SELECT value FROM local_keys").fetchone()[0]


@pytest.fixture
def keyed(template, tmp_path) -> Path:  # noqa: F811
    copy = tmp_path / "council.db"
    shutil.copyfile(template, copy)
    return copy


@pytest.mark.parametrize("query", SQLITE_NAMED)
def test_sql_on_sqlite_refuses_a_statement_naming_local_keys_in_one_line(keyed, sqlite_key, query):
    result = Cli(keyed)("sql", query, "--format", "json")

    message = refusal(result)
    assert message.startswith("reading local_keys is refused: ") and "\n" not in message
    assert not key_material(sqlite_key, result.output)


@pytest.mark.parametrize("query", SQLITE_NAMED)
def test_past_the_statement_check_sqlite_reads_local_keys_as_null(keyed, sqlite_key, query):
    with sqlite3.connect(f"file:{keyed}?mode=ro", uri=True) as plain:
        assert key_material(sqlite_key, repr(plain.execute(query).fetchall())), "plain sqlite3 reads the key"

    with read_sqlite(keyed, query) as answer:
        rows = list(answer.rows)

    assert not key_material(sqlite_key, repr(rows))


def test_counting_local_keys_rows_past_the_check_still_answers(keyed):
    with read_sqlite(keyed, "SELECT count(*), count(value) FROM local_keys") as answer:
        assert list(answer.rows) == [(1, 0)]


@pytest.fixture(scope="module")
def pg_key(filled_pg) -> str:  # noqa: F811
    """The key of the filled database, and a second key beside it, analysed, so that pg_stats
    would show sample values of the column (one row has none)."""
    return second_key(filled_pg)


def second_key(url: str) -> str:
    """Add a second key and ANALYZE, so that pg_stats has sample values of the column (one
    row has none); the database's own key."""
    with _connect(url) as connection:
        connection.execute("INSERT INTO local_keys (name, value) VALUES ('second', md5('x') || md5('y')) "
                           "ON CONFLICT (name) DO NOTHING")
        connection.execute("ANALYZE local_keys")
        return connection.execute("SELECT value FROM local_keys WHERE name = 'line_hash'").fetchone()[0]


@pytest.mark.parametrize("query", PG_NAMED, ids=PG_NAMED_IDS)
def test_sql_on_postgresql_refuses_every_read_of_local_keys_in_one_line(filled_pg, pg_key, query):  # noqa: F811
    with _connect(filled_pg) as connection:
        unguarded = repr(connection.execute(query).fetchall())
    assert key_material(pg_key, unguarded), "the owner reads the key with this query, unguarded"

    result = Cli(filled_pg)("sql", query, "--format", "json", "--max-value-bytes", "0")

    message = refusal(result)
    assert "refused" in message and "\n" not in message
    assert not key_material(pg_key, result.output)


@pytest.mark.parametrize("query", PG_NAMED, ids=PG_NAMED_IDS)
def test_the_read_only_role_cannot_read_local_keys_even_straight_to_the_server(copy_url, reader, query):  # noqa: F811
    import psycopg

    key = second_key(copy_url)
    with _connect(reader) as connection:
        try:
            answer = repr(connection.execute(query).fetchall())
        except psycopg.errors.InsufficientPrivilege:
            return
    assert not key_material(key, answer)


def test_the_read_only_role_still_reads_every_other_table(copy_url, reader):  # noqa: F811
    with _connect(copy_url) as connection:
        tables = [row[0] for row in connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'local_keys'")]
    with _connect(reader) as connection:
        for table in tables:
            connection.execute(f'SELECT * FROM "{table}" LIMIT 1').fetchall()
    assert "scores" in tables and "rejected_lines" in tables


def test_the_role_is_made_on_a_database_at_council_dbs_schema(pg_cluster):
    """An empty database gets the schema first, so the role's SQL can take local_keys away."""
    url = pg_cluster.database()
    try:
        printed = run_module("--db", url, "db", "readonly-role", "fresh_reader")
        assert printed.returncode == 0, printed.stderr
        with _connect(url) as connection:
            connection.execute(printed.stdout.decode())
            assert connection.execute(
                "SELECT has_table_privilege('fresh_reader', 'local_keys', 'SELECT')").fetchone() == (False,)
            connection.execute("DROP OWNED BY fresh_reader")
            connection.execute("DROP ROLE fresh_reader")
    finally:
        pg_cluster.drop(url)
