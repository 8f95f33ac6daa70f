"""SQLite's score inserts: rows of sessions the batch created go in without a conflict check,
and a column with one value in every row of a statement (NULL among them) is bound once, not
in each row (each bound NULL cost sqlite3 0.6 us, a bool 0.5). What is stored must not
change: checked here row by row."""

from __future__ import annotations

import json

from sqlalchemy import event, text

from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.store.writer import ScoreWriter
from tests.conftest import record, session

LEFT_OUT = ("exclusion_id", "envelope_id", "ts_us", "import_id")


def _batch(lines: list[dict]):
    return Normaliser().normalise(LineBatch(1, [json.dumps(line).encode() for line in lines], 0)).rows


def _score_inserts(connection) -> list[str]:
    """The INSERT INTO scores statements run on ``connection`` from now on."""
    seen: list[str] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("INSERT INTO scores"):
            seen.append(statement)

    event.listen(connection, "before_cursor_execute", note)
    return seen


def bound(statement: str, parameters: tuple) -> tuple[list[str], dict[str, object], list[tuple]]:
    """An insert's columns bound in each row, those bound once with their values, and the rows'
    own values: the shared parameters come first in each row (?1..?k), each row's own after them."""
    columns = statement.split(" (", 1)[1].split(")", 1)[0].split(", ")
    row = statement.split(" VALUES (", 1)[1].split(")", 1)[0].split(", ")
    shared = {name: parameters[int(mark[1:]) - 1] for name, mark in zip(columns, row) if mark != "?"}
    own, rest = [name for name in columns if name not in shared], parameters[len(shared):]
    return own, shared, [tuple(rest[start:start + len(own)]) for start in range(0, len(rest), len(own))]


def _stored(connection) -> list[tuple]:
    return connection.execute(text(
        "SELECT s.session_key, r.name, m.name, position, score_value, exclusion_id, envelope_id, scores.ts_us, "
        "scores.import_id "
        "FROM scores JOIN sessions s ON s.id = session_id JOIN models r ON r.id = reviewer_id "
        "JOIN models m ON m.id = model_id ORDER BY 1, 2, 3, 4")).fetchall()


def test_new_sessions_rows_are_inserted_without_conflict_check_and_all_null_columns_bound_once(db):
    inserts: list[tuple] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("INSERT INTO scores"):
            inserts.append(bound(statement, parameters))

    with db.bulk_writer() as connection:
        statements = _score_inserts(connection)
        event.listen(connection, "before_cursor_execute", note)
        assert ScoreWriter(connection).write(_batch(session("a") + session("b")), None) == 32
        assert statements and all("ON CONFLICT" not in statement for statement in statements)
        assert inserts and all({column: shared[column] for column in LEFT_OUT} == dict.fromkeys(LEFT_OUT)
                               for _, shared, _ in inserts)
        rows = _stored(connection)
    assert len(rows) == 32 and {row[5:] for row in rows} == {(None, None, None, None)}


def test_rows_of_stored_sessions_keep_the_conflict_check_and_a_column_some_row_fills(db):
    """A later batch adds to a stored session, repeats one of its rows and brings one score out
    of scale: the repeat is skipped, the exclusion stored for that row only."""
    with db.bulk_writer() as connection:
        writer = ScoreWriter(connection)
        writer.write(_batch(session("a")[:8]), None)
        statements = _score_inserts(connection)
        later = session("a")[7:] + [record(session_id="a", reviewer_id="x/judge", score_value=11.0)]
        assert writer.write(_batch(later), None) == 9
        assert statements and all("ON CONFLICT" in statement for statement in statements)
        assert all("exclusion_id" in statement for statement in statements)
        rows = _stored(connection)
    assert len(rows) == 17
    assert [row[1] for row in rows if row[5] is not None] == ["x/judge"]


def test_score_rows_reach_sqlite_in_primary_key_order(db):
    """The scores table is kept in key order (WITHOUT ROWID): rows given in that order append
    to its pages. A file's rows come in its own order (here: sessions and models shuffled)."""
    lines = session("b") + session("a")
    lines = lines[5:] + lines[:5]
    keys: list[tuple] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("INSERT INTO scores"):
            keys.extend(row[:4] for row in bound(statement, parameters)[2])

    with db.bulk_writer() as connection:
        event.listen(connection, "before_cursor_execute", note)
        assert ScoreWriter(connection).write(_batch(lines), None) == 32
    assert len(keys) == 32 and keys == sorted(keys)


def test_a_column_with_one_value_in_every_row_is_bound_once_not_in_each(db):
    """The import, the scale and whether positions are display slots are the same in every row
    of a batch (llm-council's files), and no row has an exclusion, own envelope or own time:
    the statement binds each of those once; the other columns are bound in each row, a truth
    value as 0 or 1. What is stored is what binding them in each row stored."""
    seen: list[tuple] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("INSERT INTO scores"):
            seen.append(bound(statement, parameters))

    with db.bulk_writer() as connection:
        import_id = connection.execute(text(
            "INSERT INTO imports (source, source_kind, mode, start_offset, end_offset, start_line, end_line, "
            "inserted, duplicates, rejected, skipped, status, started_at, council_db_version) VALUES ('f', 'file', "
            "'full', 0, 0, 0, 0, 0, 0, 0, 0, 'running', '2026-01-01', 'test') RETURNING id")).scalar_one()
        event.listen(connection, "before_cursor_execute", note)
        assert ScoreWriter(connection).write(_batch(session("a") + session("b")), import_id) == 32
        rows = _stored(connection)
        kept = connection.execute(text("SELECT DISTINCT scale_id, display_order, typeof(display_order), "
                                       "typeof(import_id), typeof(self_review) FROM scores")).fetchall()
    [(own, shared, values)] = seen
    assert own == ["session_id", "reviewer_id", "model_id", "position", "response_length_chars", "score_value",
                   "self_review"]
    assert shared == {"import_id": import_id, "scale_id": shared["scale_id"], "display_order": 1,
                      **dict.fromkeys(("exclusion_id", "envelope_id", "ts_us"))}
    assert len(values) == 32 and {type(row[6]) for row in values} == {int}
    assert len(rows) == 32 and {row[8] for row in rows} == {import_id}
    assert len(kept) == 1 and kept[0][1:] == (1, "integer", "integer", "integer")
