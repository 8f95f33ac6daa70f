"""A real Datasette on 127.0.0.1 with council-db's plugin never serves a council-db database's
own key (local_keys, which keys the line_hash of rejected lines): not to SQL, not on the
table's pages, not through --crossdb, not to a writable canned query; the file still holds
it, the rest of the database reads as before, and a database that is not council-db's reads
its own local_keys table as it is."""

from __future__ import annotations

import json
import sqlite3

import httpx
import pytest

from tests.conftest import run_module
from tests.outlets.test_datasette import datasette
from tests.outlets.test_datasette_plugin import council, plugin_options, sql

OTHER_VALUE = "a value of another application's table"
READS = [
    "select * from local_keys",
    "select (select value from local_keys) as value",
    "select name, value from main.local_keys where value like '%' order by value",
    "select r.line_hash, k.value, hex(k.value) from rejected_lines r join local_keys k",
    "with k as (select * from local_keys) select upper(value), substr(value, 1, 16) from k",
    "select group_concat(value) from local_keys union all select value from local_keys",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Datasette with the plugin, --crossdb, and a metadata file giving writable canned queries,
    serving a council-db database scores.db (with one rejected line) and a SQLite file that is
    not council-db's with a local_keys table of its own; and the key as plain sqlite3 reads it."""
    folder = tmp_path_factory.mktemp("local_keys")
    scores, other = folder / "scores.db", folder / "other.db"
    council("simulate", "-o", str(folder / "sim.jsonl"), "--sessions", "20", "--days", "5")
    with (folder / "sim.jsonl").open("a", encoding="utf-8") as lines:
        lines.write('{"not": "a council record"}\n')
    imported = run_module("--db", str(scores), "import", str(folder / "sim.jsonl"))
    assert b"1 rejected" in imported.stderr, imported.stderr.decode()
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE local_keys (name TEXT PRIMARY KEY, value TEXT)")
        connection.execute("INSERT INTO local_keys VALUES ('mine', ?)", (OTHER_VALUE,))
    rewrite = {"sql": "update local_keys set value = value", "write": True}
    metadata = folder / "metadata.json"
    metadata.write_text(json.dumps({"databases": {"scores": {"queries": {"rewrite": rewrite}},
                                                  "other": {"queries": {"rewrite": rewrite}}}}))
    key = sql(scores, "SELECT value FROM local_keys WHERE name = 'line_hash'")
    with datasette(folder, str(scores), str(other), "--crossdb", "-m", str(metadata),
                   *plugin_options(folder)) as client:
        yield client, scores, key


def key_material(key: str, text: str) -> list[str]:
    """The parts of the key (hex, as stored or upper-case; either half) that ``text`` contains."""
    parts = [key, key[:32], key[32:]]
    return [part for part in parts + [p.upper() for p in parts] if part in text]


def test_the_file_holds_a_key_for_line_hashes(served):
    _, path, key = served

    assert len(key) == 64 and int(key, 16)
    assert sql(path, "SELECT COUNT(*) FROM rejected_lines WHERE line_hash IS NOT NULL") == 1


@pytest.mark.parametrize("query", READS)
def test_sql_reading_local_keys_reads_nulls_where_the_key_is(served, query):
    client, path, key = served
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        in_the_file = connection.execute(query).fetchall()
    finally:
        connection.close()

    response = client.get("/scores.json", params={"sql": query, "_shape": "arrays"})

    assert response.status_code == 200, response.text
    assert key_material(key, json.dumps(in_the_file)), "plain sqlite3 reads the key with this query"
    assert key_material(key, response.text) == []
    for row in response.json()["rows"]:
        assert all(cell is None or cell == "" or len(cell) == 16 for cell in row), row  # 16: a line_hash


@pytest.mark.parametrize("path", ["/scores/local_keys.json", "/scores/local_keys", "/scores/local_keys.csv",
                                  "/scores/local_keys.json?_sort=value", "/scores/local_keys/line_hash.json",
                                  "/scores/local_keys.json?_facet=value", "/scores/local_keys.json?value__gt=0"])
def test_the_pages_of_the_local_keys_table_show_no_key(served, path):
    client, _, key = served

    response = client.get(path)

    assert response.status_code in (200, 404), response.text
    assert key_material(key, response.text) == []


def test_the_table_page_keeps_the_row_count_with_every_cell_null(served):
    client, path, _ = served

    rows = client.get("/scores/local_keys.json", params={"_shape": "array"}).json()
    count = client.get("/scores.json", params={"sql": "select count(*) from local_keys", "_shape": "arrays"})

    assert rows == [{"name": None, "value": None}] * sql(path, "SELECT COUNT(*) FROM local_keys")
    assert count.json()["rows"] == [[1]]


def test_crossdb_reads_nulls_for_a_council_db_key_and_the_other_databases_table_as_it_is(served):
    client, _, key = served

    council_rows = client.get("/_memory.json", params={"sql": "select * from scores.local_keys", "_shape": "arrays"})
    other_rows = client.get("/_memory.json", params={"sql": "select * from other.local_keys", "_shape": "arrays"})

    assert council_rows.status_code == 200, council_rows.text
    assert council_rows.json()["rows"] == [[None, None]] and key_material(key, council_rows.text) == []
    assert other_rows.json()["rows"] == [["mine", OTHER_VALUE]]


def test_a_database_that_is_not_council_dbs_reads_its_own_local_keys(served):
    client, _, _ = served

    response = client.get("/other.json", params={"sql": "select * from local_keys", "_shape": "arrays"})

    assert response.json()["rows"] == [["mine", OTHER_VALUE]]
    assert client.get("/other/local_keys.json", params={"_shape": "array"}).json() == [
        {"name": "mine", "value": OTHER_VALUE}]


def test_a_writable_canned_query_cannot_write_local_keys_of_a_council_db_database(served):
    client, path, key = served

    def rewrite(database: str) -> dict:
        # a request of its own: without the client's csrftoken cookie Datasette asks for no token
        return httpx.post(f"{client.base_url}/{database}/rewrite", headers={"Accept": "application/json"},
                          json={}, timeout=60).json()

    refused, done = rewrite("scores"), rewrite("other")

    assert refused["ok"] is False and "not authorized" in refused["message"]
    assert done == {"ok": True, "message": "Query executed, 1 row affected", "redirect": None}
    assert sql(path, "SELECT value FROM local_keys WHERE name = 'line_hash'") == key


def test_the_rest_of_a_council_db_database_reads_as_before(served):
    client, path, _ = served

    count = client.get("/scores.json", params={"sql": "select count(*) from scores", "_shape": "arrays"})
    hashes = client.get("/scores.json", params={"sql": "select line_hash from rejected_lines", "_shape": "arrays"})
    facet = client.get("/scores/score_records.json", params={"_facet": "reviewer", "_size": "0"}).json()
    expected = {reviewer: sql(path, "SELECT COUNT(*) FROM score_records WHERE reviewer = ?", reviewer)
                for reviewer in ("openai/gpt-4o", "google/gemini-1.5-pro")}

    assert count.json()["rows"] == [[sql(path, "SELECT COUNT(*) FROM scores")]]
    assert hashes.json()["rows"] == [[sql(path, "SELECT line_hash FROM rejected_lines")]]
    counts = {v["value"]: v["count"] for v in facet["facet_results"]["reviewer"]["results"]}
    assert all(counts[reviewer] == n > 0 for reviewer, n in expected.items())
    assert client.get("/scores").status_code == 200
    assert client.get("/scores/sessions").status_code == 200
    assert client.get("/scores/reviewer_severity_by_week.json").status_code == 200
    assert client.get("/scores/-/bias-report").status_code == 200


@pytest.mark.parametrize("statement", [
    "INSERT INTO local_keys VALUES ('chosen', 'a key the writer knows')",
    "UPDATE local_keys SET value = 'a key the writer knows'",
    "DELETE FROM local_keys",
    "DROP TABLE local_keys",
    "ALTER TABLE local_keys RENAME TO keys_to_read",
    "ALTER TABLE main.local_keys ADD COLUMN copy TEXT",
    "CREATE INDEX ix_value ON local_keys (value)",
    "CREATE TRIGGER copy_key AFTER INSERT ON local_keys BEGIN INSERT INTO notes VALUES (new.value); END",
    "INSERT INTO notes SELECT value FROM local_keys WHERE value IS NOT NULL",
])
def test_the_authorizer_refuses_every_write_to_local_keys_and_lets_other_tables_be_written(tmp_path, statement):
    from council_db.outlets.datasette_local_keys import authorizer

    connection = sqlite3.connect(tmp_path / "keys.db", isolation_level=None)
    connection.execute("CREATE TABLE local_keys (name TEXT PRIMARY KEY, value TEXT)")
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.execute("INSERT INTO local_keys VALUES ('line_hash', 'secret')")
    connection.set_authorizer(authorizer(["main"]))
    try:
        if statement.startswith("INSERT INTO notes"):
            connection.execute(statement)  # allowed, and it copies nothing: the key reads as NULL
            assert connection.execute("SELECT COUNT(*) FROM notes").fetchone() == (0,)
        else:
            with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
                connection.execute(statement)
        connection.execute("INSERT INTO notes VALUES ('written')")
        connection.set_authorizer(None)
        assert connection.execute("SELECT * FROM local_keys").fetchall() == [("line_hash", "secret")]
    finally:
        connection.close()


def test_the_authorizer_reads_raw_pages_as_null_where_sqlite_has_them():
    from council_db.outlets.datasette_local_keys import authorizer

    authorize = authorizer(["main"])

    assert authorize(sqlite3.SQLITE_READ, "sqlite_dbpage", "data", "main", None) == sqlite3.SQLITE_IGNORE
    assert authorize(sqlite3.SQLITE_READ, "dbstat", "payload", "main", None) == sqlite3.SQLITE_OK
    assert authorize(sqlite3.SQLITE_READ, "local_keys", "value", "other", None) == sqlite3.SQLITE_OK
