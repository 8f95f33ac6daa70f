"""SQLite's inserts bind a column with one value in every row once, not in each row (sqlite3
binds None through a failed adapter look-up, 0.6 us a value): the sessions a judge log
creates share their envelope's columns, most of them NULL. A None among other values goes as
NaN, which SQLite stores as NULL. What is stored must not change: every value and its storage
class checked here."""

from __future__ import annotations

import json
import math

import numpy as np
from sqlalchemy import event, text

from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.store.insert_statements import insert_statement, split_shared
from council_db.store.writer import ScoreWriter
from tests.conftest import session
from tests.store.test_score_statements import bound


def _batch(lines: list[dict]):
    return Normaliser().normalise(LineBatch(1, [json.dumps(line).encode() for line in lines], 0)).rows


def _inserts(connection, table: str) -> list[tuple]:
    """The ``table``'s inserts run on ``connection`` from now on, as ``bound`` parts them."""
    seen: list[tuple] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith(f"INSERT INTO {table} "):
            seen.append(bound(statement, parameters))

    event.listen(connection, "before_cursor_execute", note)
    return seen


def test_sessions_columns_alike_in_every_row_are_bound_once_and_stored_as_bound_in_each(db):
    """Three sessions without a query hash or config version, one of two languages: the NULL
    columns and the consent level are bound once; the language, NULL in one session only,
    stays NULL there."""
    lines = [line for key, language in (("a", "en"), ("b", None), ("c", "en"))
             for line in session(key, models=2, reviewers=2, council_config_version=None,
                                 query_metadata={"category": "coding", "language": language})]
    with db.bulk_writer() as connection:
        inserts = _inserts(connection, "sessions")
        assert ScoreWriter(connection).write(_batch(lines), None) == 12
        stored = connection.execute(text(
            "SELECT session_key, typeof(council_config_version), typeof(query_hash), typeof(schema_version_raw), "
            "consent_level, typeof(consent_level), language, typeof(language), typeof(ts_us), typeof(key_hash), "
            "typeof(import_id) FROM sessions ORDER BY session_key")).fetchall()
    [(own, shared, rows)] = inserts
    assert {"council_config_version": None, "query_hash": None, "schema_version_raw": None, "consent_level": 1,
            "import_id": None}.items() <= shared.items()
    assert "session_key" in own and "language" in own and len(rows) == 3
    assert stored == [("a", "null", "null", "null", 1, "integer", "en", "text", "integer", "integer", "null"),
                      ("b", "null", "null", "null", 1, "integer", None, "null", "integer", "integer", "null"),
                      ("c", "null", "null", "null", 1, "integer", "en", "text", "integer", "integer", "null")]


def test_session_statistics_bind_their_common_counts_once_and_keep_an_unusable_z_null(db):
    """Two 2x2 sessions: as many records each, none excluded (bound once); answer_z, NaN for
    two answers (too few for a correlation), is NULL as before."""
    with db.bulk_writer() as connection:
        inserts = _inserts(connection, "session_stats")
        ScoreWriter(connection).write(_batch(session("a", models=2, reviewers=2) + session("b", models=2,
                                                                                             reviewers=2)), None)
        stored = connection.execute(text(
            "SELECT records, typeof(records), unscored, typeof(answer_z), typeof(score_sum) FROM session_stats"
        )).fetchall()
    [(own, shared, rows)] = inserts
    assert {"records": 4, "unscored": 0, "out_of_scale": 0}.items() <= shared.items()
    assert own[0] == "session_id" and len(rows) == 2
    assert stored == [(4, "integer", 0, "null", "real")] * 2


def test_split_shared_parts_lists_and_arrays_by_one_value_in_every_row():
    names, values, shared = split_shared(
        ("id", "key", "none", "some_none", "same", "number", "nan"),
        [[1, 2, 3], ["x", "y", "z"], [None] * 3, ["a", None, "b"], np.array([7, 7, 7]), np.array([0.5, 1.5, 0.5]),
         np.array([np.nan, 1.0, np.nan])])
    assert names == ("id", "key", "some_none", "number", "nan")
    assert shared == {"none": None, "same": 7} and type(shared["same"]) is int
    assert values[2][0] == "a" and math.isnan(values[2][1]) and values[3] == [0.5, 1.5, 0.5]
    assert math.isnan(values[4][0]) and values[4][1] == 1.0


def test_split_shared_always_binds_the_first_column_in_each_row():
    """It counts the rows: two rows alike in every column are still two rows."""
    names, values, shared = split_shared(("a", "b"), [[1, 1], [2, 2]])
    assert names == ("a",) and values == [[1, 1]] and shared == {"b": 2}


def test_a_shared_parameter_is_bound_once_and_the_rows_own_numbered_after_it():
    import sqlite3

    statement = insert_statement("?", "t", ("a", "b"), None, 3, ("c",))
    assert statement == "INSERT INTO t (c, a, b) VALUES (?1, ?, ?), (?1, ?, ?), (?1, ?, ?)"
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE t (a INTEGER, b TEXT, c INTEGER)")
    connection.execute(statement, (9, 1, "x", 2, math.nan, 3, "z"))
    assert connection.execute("SELECT a, b, typeof(b), c FROM t ORDER BY a").fetchall() == [
        (1, "x", "text", 9), (2, None, "null", 9), (3, "z", "text", 9)]


def test_new_sessions_rows_are_made_from_each_shared_envelope_once_and_hashed_as_key_hash_hashes():
    """Two envelopes shared by four sessions: each session's row carries its own envelope's
    columns, its key and its key's hash, whatever the key's characters."""
    from council_db.contract.envelope import Envelope
    from council_db.store.envelope_rows import SESSION_COLUMNS, session_columns
    from council_db.store.key_hash import key_hash

    def made(timestamp: str, language: str | None) -> Envelope:
        return Envelope(timestamp, None, 1, "1.2.0", None, None, None, None, "coding", language, None, True)

    one, other = made("", "en"), made("2025-01-01T00:00:00+00:00", None)
    keys = ["a", "é", "x\udc80y", "d"]
    columns = session_columns([7, 8, 9, 10], dict(zip(keys, [one, other, one, other])), 3)
    rows = [dict(zip(("id", *SESSION_COLUMNS), row)) for row in zip(*columns)]
    assert [row["id"] for row in rows] == [7, 8, 9, 10] and [row["session_key"] for row in rows] == keys
    assert [(row["timestamp"], row["language"]) for row in rows] == [("", "en"), (other.timestamp, None)] * 2
    assert [row["key_hash"] for row in rows] == [key_hash(key) for key in keys]
    assert {row["import_id"] for row in rows} == {3} and {row["category"] for row in rows} == {"coding"}
