"""PostgreSQL's writer copies rows into a staging table and inserts them from there: the
rows stored must be those SQLite stores, NULLs included, and the staging table must belong
to one transaction whatever happens to it. On the real server tests/postgres.py starts."""

from __future__ import annotations

import json

from sqlalchemy import text

from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.store.database import open_database
from council_db.store.session_stats import COLUMNS as STATS_COLUMNS
from council_db.store.writer import ScoreWriter
from tests.conftest import Cli, record, session, write_jsonl

TABLES = {
    "scores": "SELECT * FROM scores ORDER BY session_id, reviewer_id, model_id, position",
    "session_stats": f"SELECT {', '.join(STATS_COLUMNS)} FROM session_stats ORDER BY session_id, scale_id",
    "sessions": "SELECT id, session_key, consent_level, query_hash FROM sessions ORDER BY id",
    "record_envelopes": "SELECT id, timestamp, consent_level FROM record_envelopes ORDER BY id",
}


def _lines() -> list[dict]:
    """Sessions with what travels as a NULL marker: unscored and out-of-scale scores
    (exclusion_id), a record whose envelope differs from its session's (envelope_id), one whose
    time alone differs (ts_us), and
    sessions whose answer-level correlation is unusable (answer_z); a session whose answers'
    lengths are partly unknown; and a new session with keys repeated in one batch, once with
    another score (the first line's is kept)."""
    repeated = session("repeated")
    return (repeated + [dict(repeated[3], score_value=1.0), repeated[0]]
            + session("plain") + session("unscored", score_value=0.0) + session("flat", response_length_chars=900)
            + session("mixed")[:8] + [record(session_id="mixed", reviewer_id="vendor/model-3", position=2,
                                             model_id="vendor/model-1", score_value=42.0,
                                             timestamp="2025-12-18T00:00:00Z")]
            + [record(session_id="late", consent_level=2, score_value=7.0)]
            + session("timed")[:3] + [dict(session("timed")[3], timestamp="2025-12-18T00:00:00.500000+00:00")]
            + session("unsized")[:12] + session("unsized", response_length_chars=None)[12:])


def _rows(url: str) -> dict[str, list[tuple]]:
    db = open_database(url, notify=lambda _: None)
    try:
        with db.engine.connect() as connection:
            return {name: list(connection.execute(text(sql))) for name, sql in TABLES.items()}
    finally:
        db.engine.dispose()


def test_an_import_stores_on_postgresql_the_rows_it_stores_on_sqlite(pg_url, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", _lines())
    sqlite_url = f"sqlite:///{tmp_path / 'council.db'}"
    for url in (sqlite_url, pg_url):
        assert Cli(url)("import", str(source)).exit_code == 0
    on_sqlite, on_postgres = _rows(sqlite_url), _rows(pg_url)
    for column in ("exclusion_id", "envelope_id", "import_id", "ts_us"):
        assert any(row._mapping[column] is not None for row in on_sqlite["scores"]), column
    assert any(row[-1] is None for row in on_sqlite["session_stats"])  # an unusable answer_z
    for name in TABLES:
        assert on_postgres[name] == on_sqlite[name], name


def _batch(lines: list[dict]):
    return Normaliser().normalise(LineBatch(1, [json.dumps(line).encode() for line in lines], 0)).rows


def test_one_writer_keeps_writing_across_commits_and_rollbacks_and_leaves_no_staging_table(pg_url):
    db = open_database(pg_url, notify=lambda _: None)
    try:
        with db.bulk_writer() as connection:
            writer = ScoreWriter(connection)
            assert writer.write(_batch(session("a")), None) == 16
            connection.commit()
            assert writer.write(_batch(session("b")), None) == 16
            connection.rollback()
            assert writer.write(_batch(session("b") + session("a")), None) == 16
            assert writer.write(_batch(session("c")), None) == 16
            connection.commit()
            staged = connection.execute(text("SELECT COUNT(*) FROM pg_class WHERE relname LIKE '%\\_stage'"))
            assert staged.scalar() == 0
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT COUNT(*) FROM scores")).scalar() == 48
            assert connection.execute(text("SELECT COUNT(*) FROM session_stats")).scalar() == 3
    finally:
        db.engine.dispose()
