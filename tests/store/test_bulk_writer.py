"""The bulk writer: SQLite skips foreign-key checks there, so the ids it uses must hold."""

from __future__ import annotations

import json
import sqlite3

from sqlalchemy import text

from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.store.database import BULK_PRAGMAS
from council_db.store.writer import ScoreWriter
from tests.conftest import record, session, write_jsonl


def _settings(driver) -> dict:
    return {name: driver.execute(f"PRAGMA {name}").fetchone()[0] for name in BULK_PRAGMAS}


def _batch(lines: list[dict]):
    batch = LineBatch(1, [json.dumps(line).encode() for line in lines], 0)
    return Normaliser().normalise(batch).rows


def test_the_bulk_settings_last_only_as_long_as_the_bulk_writer(db):
    with db.writer() as connection:
        driver = connection.connection.driver_connection
        before = _settings(driver)
    with db.bulk_writer() as connection:
        assert connection.connection.driver_connection is driver  # the pool hands back the same one
        assert _settings(driver) == {"temp_store": 2, "cache_size": -65536, "foreign_keys": 0}
    assert _settings(driver) == before and before["foreign_keys"] == 1


def test_an_import_leaves_every_reference_pointing_at_a_stored_row(cli, db, db_path, tmp_path):
    lines = (session("a") + session("b", schema_version="1.1.0") + [record(session_id="a", position=9,
             timestamp="2025-12-18T00:00:00Z")] + ["not json"] + session("c", score_value=0.0))
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)))
    with sqlite3.connect(db_path) as connection:
        assert connection.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 49
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []


def test_ids_cached_in_one_transaction_are_not_trusted_in_the_next(db):
    """Between two transactions another connection may delete what the writer had cached;
    the writer must then store the session again, not point at the deleted row."""
    with db.bulk_writer() as connection:
        writer = ScoreWriter(connection)
        writer.write(_batch(session("kept")[:8]), None)
        connection.commit()
        with db.engine.connect() as other:  # what a user's own sqlite3 session could do
            for table in ("session_stats", "scores", "sessions"):
                column = "id" if table == "sessions" else "session_id"
                other.execute(text(f"DELETE FROM {table} WHERE {column} IN "
                                   "(SELECT id FROM sessions WHERE session_key = 'kept')"))
            other.commit()
        writer.write(_batch(session("kept")[8:]), None)
        connection.commit()
        orphans = connection.execute(text("SELECT COUNT(*) FROM scores WHERE session_id NOT IN "
                                          "(SELECT id FROM sessions)")).scalar_one()
        stored = connection.execute(text("SELECT COUNT(*) FROM scores")).scalar_one()
    assert (orphans, stored) == (0, 8)
