"""council-db sql answers reads in every format and cannot change the database by any route.

Each write route is tried on a real, filled SQLite file; afterwards the file's bytes (and its
WAL's) and every table's row count must be what they were.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from council_db.errors import CouncilDbError
from council_db.outlets import sql_guard
from council_db.outlets.readonly_sql import read_sqlite
from tests.conftest import both_backends, run_module, session, write_jsonl

WRITE_ROUTES = {
    "DELETE FROM scores": "DELETE",
    "delete from scores where 1": "DELETE",
    "UPDATE scores SET score_value = 0": "UPDATE",
    "INSERT INTO models (name) VALUES ('intruder')": "INSERT",
    "REPLACE INTO models (name) VALUES ('intruder')": "REPLACE",
    "DROP TABLE scores": "DROP",
    "ALTER TABLE models ADD COLUMN x": "ALTER",
    "CREATE TABLE x (y)": "CREATE",
    "CREATE TEMP TABLE x AS SELECT * FROM scores": "CREATE",
    "CREATE TEMP TRIGGER t AFTER INSERT ON models BEGIN SELECT 1; END": "several statements",
    "CREATE TEMP VIEW v AS SELECT 1": "CREATE",
    "SELECT 1; DELETE FROM scores": "several statements",
    "SELECT 1;DELETE FROM scores;": "several statements",
    "SELECT 'a;b'; DROP TABLE scores": "several statements",
    "ATTACH DATABASE 'other.db' AS other": "ATTACH",
    "DETACH DATABASE main": "DETACH",
    "VACUUM": "VACUUM",
    "VACUUM INTO 'copy.db'": "VACUUM",
    "PRAGMA user_version = 7": "PRAGMA user_version = 7",
    "PRAGMA journal_mode = DELETE": "PRAGMA journal_mode = DELETE",
    "PRAGMA query_only = OFF": "PRAGMA query_only = OFF",
    "PRAGMA writable_schema = ON": "PRAGMA writable_schema = ON",
    "pragma main.user_version=9": "PRAGMA user_version = 9",
    "SELECT load_extension('/tmp/evil.so')": "load_extension",
    "WITH doomed AS (SELECT 1) DELETE FROM scores": "DELETE on scores",
    "WITH x AS (SELECT 'y') INSERT INTO models (name) SELECT * FROM x": "INSERT on models",
    "/* ; */ DELETE FROM scores": "DELETE",
    "-- a comment\nUPDATE sessions SET category = 'x'": "UPDATE",
    "BEGIN IMMEDIATE": "BEGIN",
    "SAVEPOINT a": "SAVEPOINT",
    "ANALYZE": "ANALYZE",
    "REINDEX": "REINDEX",
    "EXPLAIN DELETE FROM scores": "DELETE on scores",
}

# The same routes with the statement check bypassed: the connection itself must refuse them.
AUTHORIZER_ROUTES = {
    "DELETE FROM scores": "DELETE on scores",
    "INSERT INTO models (name) VALUES ('intruder')": "INSERT on models",
    "ATTACH DATABASE 'other.db' AS other": "ATTACH",
    "VACUUM INTO 'copy.db'": "ATTACH (and VACUUM INTO",
    "VACUUM": "VACUUM",
    "PRAGMA user_version = 7": "PRAGMA user_version = 7",
    "PRAGMA query_only = 0": "PRAGMA query_only = 0",
    "CREATE TEMP TABLE x (y)": "CREATE TEMP (a temp table",
    "CREATE TEMP TRIGGER t AFTER INSERT ON models BEGIN SELECT 1; END": "CREATE TEMP",
    "SELECT load_extension('/tmp/evil.so')": "load_extension",
    "SELECT fts3_tokenizer('simple')": "fts3_tokenizer",
}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A filled database, written by a council-db process that has exited (its WAL checkpointed)."""
    folder = tmp_path_factory.mktemp("template")
    lines = [line for n in range(3) for line in session(f"session-{n}", timestamp=f"2025-12-1{n}T10:00:00Z")]
    path = folder / "council.db"
    result = run_module("--db", str(path), "import", str(write_jsonl(folder / "in.jsonl", lines)))
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture
def filled(template: Path, db_path: Path) -> Path:
    shutil.copyfile(template, db_path)
    return db_path


def error(result) -> tuple[int, str]:
    """The exit code and message main() would print for a CouncilDbError raised in-process."""
    assert isinstance(result.exception, CouncilDbError), result.output
    return result.exception.exit_code, str(result.exception)


def snapshot(path: Path) -> tuple[str, str, dict[str, int], int]:
    """The database's bytes (file and WAL), each table's row count and the user_version.
    A read-only connection to a WAL database may leave an empty WAL file: it holds nothing."""
    wal = path.with_name(path.name + "-wal")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    wal_digest = hashlib.sha256(wal.read_bytes() if wal.exists() else b"").hexdigest()
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        counts = {t: connection.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
        version = connection.execute("PRAGMA user_version").fetchone()[0]
    finally:
        connection.close()
    return digest, wal_digest, counts, version


@pytest.mark.parametrize("query,named", WRITE_ROUTES.items(), ids=list(WRITE_ROUTES))
def test_every_write_route_is_refused_and_the_database_is_unchanged(cli, filled, tmp_path, monkeypatch, query,
                                                                   named):
    monkeypatch.chdir(tmp_path)
    before = snapshot(filled)

    code, message = error(cli("sql", "--", query))

    assert code == 2
    assert "refused" in message and named in message
    assert snapshot(filled) == before
    assert before[2]["scores"] == 48
    assert not (tmp_path / "other.db").exists() and not (tmp_path / "copy.db").exists()


@pytest.mark.parametrize("query,named", AUTHORIZER_ROUTES.items(), ids=list(AUTHORIZER_ROUTES))
def test_the_connection_refuses_writes_even_past_the_statement_check(filled, tmp_path, monkeypatch, query, named):
    monkeypatch.chdir(tmp_path)
    before = snapshot(filled)

    with pytest.raises(sql_guard.Refused, match="refused") as refused:
        with read_sqlite(filled, query) as answer:
            list(answer.rows)

    assert named in str(refused.value)
    assert snapshot(filled) == before
    assert not (tmp_path / "other.db").exists() and not (tmp_path / "copy.db").exists()


def test_a_semicolon_inside_a_string_a_quoted_name_or_a_comment_is_one_statement(cli, filled):
    result = cli("sql", "SELECT 'a;b' AS \"x;y\", COUNT(*) AS n FROM scores -- trailing; comment\n;",
                 "--format", "json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"x;y": "a;b", "n": 48}]


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "csv"])
def test_reads_answer_in_every_format(cli, filled, fmt):
    result = cli("sql", "SELECT reviewer, records FROM reviewer_profiles ORDER BY reviewer", "--format", fmt)

    assert result.exit_code == 0, result.output
    reviewers = [f"vendor/model-{i}" for i in range(4)]
    if fmt == "json":
        assert json.loads(result.stdout) == [{"reviewer": r, "records": 12} for r in reviewers]
    elif fmt == "jsonl":
        assert [json.loads(line) for line in result.stdout.splitlines()] == [
            {"reviewer": r, "records": 12} for r in reviewers]
    elif fmt == "csv":
        assert list(csv.DictReader(io.StringIO(result.stdout))) == [
            {"reviewer": r, "records": "12"} for r in reviewers]
    else:
        assert all(r in result.stdout for r in reviewers) and "records" in result.stdout


def test_with_values_recursive_ctes_and_pragma_reads_are_allowed(cli, filled):
    queries = {
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT SUM(i) AS s FROM n":
            [{"s": 6}],
        "VALUES (1, 'a')": [{"column1": 1, "column2": "a"}],
        "SELECT json_extract('{\"a\": 2}', '$.a') AS a, round(2.5) AS r, date('2025-12-17') AS d":
            [{"a": 2, "r": 3.0, "d": "2025-12-17"}],
        "PRAGMA user_version": [{"user_version": 0}],
        "SELECT 1 AS a, 2 AS a": [{"a": 1, "a_2": 2}],
    }
    for query, expected in queries.items():
        result = cli("sql", query, "--format", "json")
        assert result.exit_code == 0, (query, result.output)
        assert json.loads(result.stdout) == expected, query
    table_info = cli("sql", "PRAGMA table_info(scores)", "--format", "json")
    assert "score_value" in {row["name"] for row in json.loads(table_info.stdout)}


def test_sql_never_creates_a_database(cli, db_path):
    code, message = error(cli("sql", "SELECT 1"))

    assert code == 1
    assert "no database at" in message
    assert not db_path.exists()


def test_a_refusal_and_a_bad_query_are_messages_on_stderr_not_tracebacks(filled):
    refused = run_module("--db", str(filled), "sql", "SELECT 1; DROP TABLE scores")
    bad = run_module("--db", str(filled), "sql", "SELECT * FROM no_such_table")
    empty = run_module("--db", str(filled), "sql", "  -- nothing\n")

    assert refused.returncode == 2 and refused.stdout == b""
    assert refused.stderr.decode().startswith("error: running several statements (2 found")
    assert bad.returncode == 1 and bad.stderr.decode() == "error: SQLite: no such table: no_such_table\n"
    assert empty.returncode == 1 and b"no SQL statement given" in empty.stderr


@pytest.mark.parametrize("query,count", [
    ("SELECT 1", 1), ("SELECT 1;", 1), ("SELECT ';'", 1), ("SELECT \";\"", 1), ("SELECT [;]", 1),
    ("SELECT 1 /* ; */", 1), ("SELECT 1 -- ;", 1), ("SELECT 1; SELECT 2", 2), ("SELECT 'it''s'; x", 2),
    (";;", 0), ("SELECT 'unterminated ; x", 1),
])
def test_statements_split_only_on_semicolons_outside_strings_names_and_comments(query, count):
    assert len(sql_guard.statements(query)) == count


def test_postgresql_dollar_quotes_hide_semicolons_and_a_second_statement_is_refused():
    sql_guard.check("SELECT $body$ ; COMMIT; $body$", "postgresql")
    sql_guard.check("SELECT $$;$$", "postgresql")
    with pytest.raises(sql_guard.Refused, match="several statements"):
        sql_guard.check("SELECT 1; COMMIT; DELETE FROM scores", "postgresql")
    with pytest.raises(sql_guard.Refused, match="PRAGMA"):
        sql_guard.check("PRAGMA user_version", "postgresql")
    with pytest.raises(CouncilDbError, match="several statements"):
        sql_guard.check("SELECT $a$; DELETE FROM scores; --$a$", "sqlite")


def test_an_in_memory_database_is_refused_by_name():
    from council_db.outlets.readonly_sql import read

    with pytest.raises(CouncilDbError, match="reads an SQLite file or a PostgreSQL database"):
        with read("sqlite://", "SELECT 1"):
            pass


def test_json_each_and_json_tree_answer_and_other_table_valued_functions_are_refused_by_what_they_are(cli, filled):
    each = cli("sql", "SELECT value FROM json_each('[1, 2]') ORDER BY value", "--format", "json")
    tree = cli("sql", "SELECT count(*) AS n FROM models, json_tree('{\"a\": [1]}')", "--format", "json")
    code, message = error(cli("sql", "SELECT name FROM pragma_table_info('scores')"))

    assert each.exit_code == 0 and json.loads(each.stdout) == [{"value": 1}, {"value": 2}], each.output
    assert tree.exit_code == 0 and json.loads(tree.stdout)[0]["n"] > 0, tree.output
    assert code == 2 and "a table-valued function other than json_each and json_tree" in message
    assert "changing the schema" not in message


RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_a_runaway_query_stops_at_the_timeout_with_one_line(filled):
    started = time.monotonic()
    result = run_module("--db", str(filled), "sql", "--timeout", "1", RUNAWAY)

    assert time.monotonic() - started < 4
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.decode() == ("error: the query ran longer than 1 s and was stopped; "
                                      "give --timeout SECONDS to allow longer (0 for no limit)\n")


def test_a_200_mb_value_is_refused_as_it_is_made(filled):
    started = time.monotonic()
    result = run_module("--db", str(filled), "sql", "SELECT zeroblob(200000000) AS big")

    assert time.monotonic() - started < 4
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.decode() == (
        "error: the query made a value larger than 10,000,000 bytes and was stopped before printing it; "
        "give --max-value-bytes N to allow more (0 for no limit)\n")
    allowed = run_module("--db", str(filled), "sql", "--max-value-bytes", "0", "SELECT length(zeroblob(20000000))")
    assert allowed.returncode == 0 and b"20000000" in allowed.stdout


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "table"])
def test_rows_past_the_cap_are_not_printed_and_the_output_stays_well_formed(cli, filled, fmt):
    query = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"

    result = cli("sql", query, "--max-rows", "3", "--format", fmt)

    code, message = error(result)
    assert code == 1 and message.startswith("the answer has more than 3 rows: only the first 3 were printed")
    if fmt == "json":
        assert json.loads(result.stdout) == [{"x": 1}, {"x": 2}, {"x": 3}]
    elif fmt == "jsonl":
        assert [json.loads(line) for line in result.stdout.splitlines()] == [{"x": 1}, {"x": 2}, {"x": 3}]
    elif fmt == "csv":
        assert result.stdout == "x\n1\n2\n3\n"
    else:
        assert result.stdout.split().count("3") == 1 and "4" not in result.stdout
    exactly = cli("sql", "SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3", "--max-rows", "3", "--format", "csv")
    assert exactly.exit_code == 0 and exactly.stdout == "x\n1\n2\n3\n"


@pytest.mark.parametrize("query", [
    "WITH gone AS (DELETE FROM scores RETURNING 1) SELECT count(*) FROM gone",
    "WITH moved AS (UPDATE sessions SET consent_level = 4 RETURNING 1) SELECT count(*) FROM moved",
    "SELECT 1; COMMIT",
    "CREATE TABLE stolen AS SELECT * FROM scores",
])
def test_on_postgresql_a_writable_cte_or_any_write_is_refused_and_nothing_changes(pg_url, tmp_path, query):
    from tests.conftest import Cli

    cli = Cli(pg_url)
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", session("pg-a") + session("pg-b")))).exit_code == 0
    counts = "SELECT (SELECT count(*) FROM scores), (SELECT sum(consent_level) FROM sessions)"
    before = cli("sql", counts, "--format", "json").stdout
    result = cli("sql", query)
    assert result.exit_code != 0  # refused by the statement check (usage error) or by PostgreSQL itself
    assert result.exception is None or isinstance(result.exception, (CouncilDbError, SystemExit)), result.exception
    assert cli("sql", counts, "--format", "json").stdout == before
    assert "stolen" not in cli("sql", "SELECT tablename FROM pg_tables", "--format", "json").stdout


def test_on_postgresql_a_select_answers(pg_url, tmp_path):
    from tests.conftest import Cli

    cli = Cli(pg_url)
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", session("pg-a"))))
    result = cli("sql", "SELECT count(*) AS n FROM score_records", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"n": 16}]


def test_a_database_whose_file_name_is_not_utf8_is_read(tmp_path):
    name = tmp_path / os.fsdecode(b"caf\xe9.db")
    imported = run_module("--db", str(name), "import", str(write_jsonl(tmp_path / "in.jsonl", session())))
    assert imported.returncode == 0, imported.stderr.decode()

    done = run_module("--db", str(name), "sql", "SELECT count(*) AS n FROM scores", "--format", "json")

    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == [{"n": 16}]


@both_backends
def test_parameters_are_bound_as_values_on_both_backends(cli, tmp_path):
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", session("pg-a") + session("pg-b")))).exit_code == 0
    query = ("SELECT session_id, records FROM session_summaries WHERE session_id = :id "
             "AND session_id LIKE '%-%' AND records > CAST(:least AS INTEGER) -- :id in a comment stays")

    result = cli("sql", query, "-p", "id", "pg-b", "-p", "least", "3", "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"session_id": "pg-b", "records": 16}]
    text = cli("sql", "SELECT :x AS x, ':x' AS quoted", "-p", "x", "'); DROP TABLE scores; --", "--json")
    assert json.loads(text.stdout) == [{"x": "'); DROP TABLE scores; --", "quoted": ":x"}]


@both_backends
def test_a_unique_prefix_names_one_session_on_both_backends(cli, tmp_path):
    keys = ["abcdef12-0000-tail", "abcdef12-0001-tail", "0123abcd-9999-tail"]
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", [line for k in keys for line in session(k)]))
               ).exit_code == 0

    found = cli("audit", "0123", "--json")
    table = cli("sessions")

    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["session_id"] == "0123abcd-9999-tail"
    shown = [line.split("│")[0].strip() for line in table.stdout.splitlines() if "│" in line]
    assert sorted(shown) == ["0123abcd-9999", "abcdef12-0000", "abcdef12-0001"]  # twins share 12 characters
    ambiguous = cli("audit", "abcdef12")
    assert isinstance(ambiguous.exception, CouncilDbError) and "abcdef12-0001-tail" in str(ambiguous.exception)
