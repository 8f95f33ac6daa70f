"""council-db sql on PostgreSQL cannot change the database, read server files or run server
functions with side effects, by any route a review found or a reader of PostgreSQL's lexer
would try; and it stops a runaway query.

Every attack runs on its own copy of a filled database on the real server from
tests/postgres.py; afterwards every table's contents, the large objects and the roles'
settings must be what they were.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Iterator

import pytest

from council_db.errors import CouncilDbError
from tests.conftest import Cli, run_module, session, write_jsonl

# The review's attack first: E'\'' is one quote to PostgreSQL, so the text is four statements.
ATTACK = "SELECT E'\\''; COMMIT; DELETE FROM scores; SELECT ''"

# Text -> a word the refusal must name.
ATTACKS = {
    ATTACK: "several statements",
    "SELECT E'\\''; ROLLBACK; DROP TABLE scores CASCADE; SELECT ''": "several statements",
    "select e'\\\\\\''; commit; update sessions set consent_level = 4; select ''": "several statements",
    "SELECT E'\\\\'; DELETE FROM scores; SELECT ''": "several statements",
    "SELECT $$ ' $$; COMMIT; DELETE FROM scores; SELECT ' '": "several statements",
    "SELECT $t$ $$ ' $t$; COMMIT; DELETE FROM scores; SELECT ' '": "several statements",
    "SELECT 1 /* /* */ ' */; DELETE FROM scores; SELECT '' --'": "several statements",
    "SELECT U&'\\'; DELETE FROM scores; SELECT '\\'": "several statements",
    "SELECT 1 `; DELETE FROM scores; SELECT 1 ` 2": "several statements",
    "SELECT 1 [; DELETE FROM scores; SELECT ]": "several statements",
    "SELECT \"a\"\"\"; DELETE FROM scores; SELECT 1": "several statements",
    "SELECT 1; COMMIT; DELETE FROM scores": "several statements",
    "SET TRANSACTION READ WRITE": "SET",
    "SET default_transaction_read_only = off": "SET",
    "BEGIN": "BEGIN", "END": "END", "ABORT": "ABORT", "COMMIT": "COMMIT", "ROLLBACK": "ROLLBACK",
    "SAVEPOINT a": "SAVEPOINT", "RELEASE a": "RELEASE",
    "COPY scores TO PROGRAM 'touch /tmp/council-db-sql-owned'": "COPY",
    "COPY (SELECT 1) TO '/tmp/council-db-sql-owned'": "COPY",
    "DO $$ BEGIN DELETE FROM scores; END $$": "DO",
    "CALL do_something()": "CALL",
    "LOAD 'plpgsql'": "LOAD",
    "SELECT * INTO stolen FROM scores": "INTO",
    "WITH d AS (DELETE FROM scores RETURNING 1) SELECT count(*) FROM d": "DELETE",
    "WITH u AS (UPDATE sessions SET consent_level = 4 RETURNING 1) SELECT count(*) FROM u": "UPDATE",
    "WITH i AS (INSERT INTO models (name) VALUES ('x') RETURNING 1) SELECT 1": "INSERT",
    "SELECT * FROM scores FOR UPDATE": "UPDATE",
    "SELECT set_config('transaction_read_only', 'off', false)": "set_config",
    "SELECT set_config('default_transaction_read_only', 'off', false)": "set_config",
    "SELECT pg_read_file('/etc/passwd')": "pg_read_file",
    "SELECT pg_catalog.pg_read_file('/etc/passwd')": "pg_read_file",
    "SELECT \"pg_read_file\"('/etc/passwd')": "pg_read_file",
    "SELECT PG_READ_BINARY_FILE('/etc/passwd')": "pg_read_binary_file",
    "SELECT pg_ls_dir('.')": "pg_ls_dir",
    "SELECT lo_import('/etc/passwd')": "lo_import",
    "SELECT lo_export(1, '/tmp/council-db-sql-owned')": "lo_export",
    "SELECT pg_reload_conf()": "pg_reload_conf",
    "SELECT pg_terminate_backend(-1)": "pg_terminate_backend",
    "SELECT pg_cancel_backend(-1)": "pg_cancel_backend",
    "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)": "dblink",
    "SELECT dblink_exec('dbname=postgres', 'DELETE FROM scores')": "dblink_exec",
    "SELECT query_to_xml('SELECT pg_read_file(''/etc/passwd'')', true, false, '')": "query_to_xml",
    "SELECT pg_advisory_lock(1)": "pg_advisory_lock",
    "SELECT nextval('scores_id_seq')": "nextval",
    "SELECT U&\"\\0070g_read_file\"('/etc/passwd')": "U&",
}

# Past the statement check the server itself must refuse: one statement (the extended
# protocol), a SELECT (DECLARE CURSOR), in a READ ONLY transaction.
SERVER_WALLS = [
    ATTACK,
    "SELECT 1; COMMIT; DELETE FROM scores",
    "COMMIT",
    "DELETE FROM scores",
    "COPY (SELECT 1) TO PROGRAM 'touch /tmp/council-db-sql-owned'",
    "WITH d AS (DELETE FROM scores RETURNING 1) SELECT count(*) FROM d",
    "SELECT * INTO stolen FROM scores",
    "SELECT set_config('transaction_read_only', 'off', false)",
]
# lo_import('/etc/passwd') is not among them: a superuser may run it in a READ ONLY
# transaction. The statement check refuses it, and the read-only role cannot run it.

OWNED = Path("/tmp/council-db-sql-owned")


@pytest.fixture(scope="module")
def filled_pg(pg_cluster, tmp_path_factory) -> Iterator[str]:
    """A database with two sessions (32 scores), written by a council-db process that has exited."""
    url = pg_cluster.database()
    folder = tmp_path_factory.mktemp("pg")
    lines = session("pg-a") + session("pg-b")
    result = run_module("--db", url, "import", str(write_jsonl(folder / "in.jsonl", lines)))
    assert result.returncode == 0, result.stderr
    yield url
    pg_cluster.drop(url)


@pytest.fixture(scope="module")
def original(filled_pg) -> dict[str, object]:
    """The filled database as written, which no attack may change."""
    return snapshot(filled_pg)


@pytest.fixture
def copy_url(pg_cluster, filled_pg) -> Iterator[str]:
    """A fresh copy of the filled database for one test."""
    url = pg_cluster.database(template=filled_pg)
    yield url
    pg_cluster.drop(url)


def _connect(url: str, user: str | None = None):
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    return psycopg.connect(host=parsed.host, port=parsed.port, dbname=parsed.database,
                           user=user or parsed.username, autocommit=True)


def snapshot(url: str) -> dict[str, object]:
    """Every table's rows (as one digest each), the large objects, the tables and the role settings."""
    with _connect(url) as connection:
        tables = [r[0] for r in connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")]
        found: dict[str, object] = {"tables": tables}
        for table in tables:
            found[table] = connection.execute(
                f'SELECT count(*), md5(coalesce(string_agg(t::text, \',\' ORDER BY t::text), \'\')) FROM "{table}" t'
            ).fetchone()
        found["large_objects"] = connection.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()
        found["settings"] = connection.execute("SELECT setconfig FROM pg_db_role_setting ORDER BY 1").fetchall()
    return found


def test_the_reviewed_attack_in_a_real_process_is_refused_and_scores_keep_every_row(copy_url):
    before = snapshot(copy_url)

    result = run_module("--db", copy_url, "sql", ATTACK)

    assert result.returncode == 2, result.stderr
    assert result.stdout == b""
    assert result.stderr.decode().startswith("error: running several statements (4 found")
    assert snapshot(copy_url) == before
    assert before["scores"][0] == 32


@pytest.mark.parametrize("query,named", ATTACKS.items(), ids=list(ATTACKS))
def test_every_attack_is_refused_with_what_was_refused_and_nothing_changes(filled_pg, original, query, named):
    OWNED.unlink(missing_ok=True)

    result = Cli(filled_pg)("sql", "--", query)

    assert isinstance(result.exception, CouncilDbError), result.output
    assert result.exception.exit_code == 2
    message = str(result.exception)
    assert "refused" in message and named.lower() in message.lower(), message
    assert "\n" not in message
    assert snapshot(filled_pg) == original
    assert not OWNED.exists()


@pytest.mark.parametrize("query", SERVER_WALLS)
def test_past_the_statement_check_the_server_refuses_every_write(filled_pg, original, query):
    from council_db.outlets.pg_readonly import read

    OWNED.unlink(missing_ok=True)

    with pytest.raises(CouncilDbError, match="PostgreSQL: "):
        with read(filled_pg, query) as answer:
            list(answer.rows)

    assert snapshot(filled_pg) == original
    assert not OWNED.exists()


def test_reads_still_answer_with_strings_of_every_kind(filled_pg):
    query = ("SELECT E'it\\'s;' AS e, $q$;$q$ AS d, U&'\\0041;' AS u, 'a''b' AS s, \"count\" "
             "FROM (SELECT count(*) FROM scores /* a /* nested */ ; comment */) AS t(\"count\")")

    result = Cli(filled_pg)("sql", query, "--format", "jsonl")

    assert result.exit_code == 0, result.output
    assert result.stdout == '{"e": "it\'s;", "d": ";", "u": "A;", "s": "a\'b", "count": 32}\n'


def test_a_runaway_query_stops_at_the_timeout_with_one_line(filled_pg):
    started = time.monotonic()
    result = run_module("--db", filled_pg, "sql", "--timeout", "1",
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")

    assert time.monotonic() - started < 5
    assert result.returncode == 1
    assert result.stderr.decode() == ("error: the query ran longer than 1 s and was stopped; "
                                      "give --timeout SECONDS to allow longer (0 for no limit)\n")


def test_a_huge_value_is_refused_without_printing_it(filled_pg):
    started = time.monotonic()
    result = run_module("--db", filled_pg, "sql", "SELECT repeat('x', 20000000) AS big")

    assert time.monotonic() - started < 10
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.decode() == (
        "error: the query made a value larger than 10,000,000 bytes and was stopped before printing it; "
        "give --max-value-bytes N to allow more (0 for no limit)\n")


def test_rows_past_the_cap_are_not_printed_and_the_output_stays_well_formed(filled_pg):
    result = Cli(filled_pg)("sql", "SELECT generate_series(1, 1000000000) AS i", "--max-rows", "3",
                           "--format", "json")

    assert json.loads(result.stdout) == [{"i": 1}, {"i": 2}, {"i": 3}], result.exception
    assert isinstance(result.exception, CouncilDbError) and result.exception.exit_code == 1
    assert "more than 3 rows" in str(result.exception) and "--max-rows" in str(result.exception)
    assert Cli(filled_pg)("sql", "SELECT 1 AS one", "--format", "json").stdout == '[\n  {\n    "one": 1\n  }\n]\n'


@pytest.fixture
def reader(pg_cluster, copy_url) -> Iterator[str]:
    """A role made by `council-db db readonly-role`'s SQL; its URL for the copy."""
    role = f"reader_{copy_url.rsplit('_', 1)[1]}"
    printed = Cli(copy_url)("db", "readonly-role", role)
    assert printed.exit_code == 0, printed.output
    with _connect(copy_url) as connection:
        connection.execute(printed.stdout)
    yield copy_url.replace("postgres@", f"{role}@")
    with _connect(copy_url) as connection:
        connection.execute(f"DROP OWNED BY {role}")
        connection.execute(f"DROP ROLE {role}")


READER_WRITES = [
    "DELETE FROM scores",
    "SET default_transaction_read_only = off; DELETE FROM scores",
    "BEGIN READ WRITE; UPDATE sessions SET consent_level = 4; COMMIT",
    "CREATE TABLE stolen AS SELECT * FROM scores",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT pg_reload_conf()",
    "COPY scores TO PROGRAM 'touch /tmp/council-db-sql-owned'",
]


def test_the_read_only_role_reads_through_sql_and_can_write_nothing_even_unguarded(copy_url, reader):
    import psycopg
    from sqlalchemy.engine import make_url

    OWNED.unlink(missing_ok=True)
    before = snapshot(copy_url)
    result = Cli(copy_url)("sql", "--db-readonly", reader, "SELECT count(*) AS n, current_user AS who FROM scores",
                           "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"n": 32, "who": make_url(reader).username}]

    for statement in READER_WRITES:  # straight to the server, no check and no READ ONLY transaction
        with _connect(reader) as connection, pytest.raises(psycopg.Error, match="permission denied|must be|read-only"):
            connection.execute(statement)
    assert snapshot(copy_url) == before
    assert not OWNED.exists()


def test_the_read_only_role_sql_is_only_for_postgresql(cli, tmp_path):
    result = Cli(tmp_path / "council.db")("db", "readonly-role")

    assert isinstance(result.exception, CouncilDbError) and "opens the file read-only" in str(result.exception)
