"""Data survives migrations: a database filled at every past revision upgrades to head with
every row of every column intact, a filled database downgrades step by step (keeping what
the older schema has) down to base, and every command refuses a newer database untouched.

The fixture data is SQL written for the schema of a revision: FIXTURES maps the first
revision each script fits to the script. A migration that changes tables must add the
script for its revision here (the test for coverage below says so).
"""

from __future__ import annotations

import gc
import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest

from council_db.errors import DatabaseTooNew
from council_db.store import migrate
from council_db.store.database import open_database
from tests.conftest import Cli, session, write_jsonl
from tests.store.sqlite_files import make_council_db_at, revisions_oldest_first, set_revision

FIXTURE_0001 = """
INSERT INTO imports (id, source, source_kind, file_identity, file_size, head_sha256, tail_sha256, mode,
    start_offset, end_offset, start_line, end_line, inserted, duplicates, rejected, skipped, status,
    started_at, finished_at, council_db_version)
VALUES (1, '/data/bias_metrics.jsonl', 'file', '2049:1234', 2100, 'aa', 'bb', 'full', 0, 2100, 0, 5, 4, 0, 1, 0,
        'complete', '2025-12-17 10:31:00.000000', '2025-12-17 10:31:01.000000', '0.1.0');
INSERT INTO rejected_lines (id, import_id, line_number, field, reason, raw)
VALUES (1, 1, 3, 'score_value', 'score_value: got "x"; expected a finite number', '{"score_value": "x"}');
INSERT INTO models (id, name) VALUES (1, 'openai/gpt-4o'), (2, 'anthropic/claude-3-5-sonnet'), (3, 'google/gemini');
INSERT INTO scales (id, name, low, high) VALUES (1, '1-10', 1, 10), (2, '0-1', 0, 1);
INSERT INTO record_envelopes (id, digest, ts_us, timestamp, consent_level, schema_version, schema_version_raw,
    council_config_version, query_hash, query_metadata)
VALUES (1, 'd1', 1765967400000000, '2025-12-17T10:30:00Z', 4, '1.2.0', NULL, '0.1.0', '0123456789abcdef',
        '{"category":"coding"}');
INSERT INTO sessions (id, session_key, ts_us, timestamp, consent_level, schema_version, schema_version_raw,
    council_config_version, query_hash, query_metadata, category, language, length_bucket, import_id)
VALUES (1, 'session-a', 1765967400123456, '2025-12-17T10:30:00.123456+00:00', 2, '1.2.0', NULL, '0.1.0', NULL,
        '{"category":"coding","token_bucket":"short","language":"en"}', 'coding', 'en', 'short', 1),
       (2, 'session-b', NULL, '', 1, '1.0.0', '1', NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO scores (session_id, reviewer_id, model_id, position, response_length_chars, score_value, scale_id,
    display_order, self_review, exclusion_id, envelope_id)
VALUES (1, 1, 2, 0, 1200, 8.5, 1, 1, 0, NULL, NULL),
       (1, 1, 1, 1, 900, 9.0, 1, 1, 1, NULL, 1),
       (1, 2, 3, 2, 40, 0.0, 1, 1, 0, 1, NULL),
       (2, 3, 2, 0, 700, 0.5, 2, 0, 0, NULL, NULL);
"""

FIXTURE_0006 = FIXTURE_0001 + """
INSERT INTO outbox_events (id, endpoint, event_id, session_id, payload, created_at, attempts, last_error, sent_at)
VALUES (1, 'https://team.example/events', 'e1', 1, '{"event_id":"e1"}', '2025-12-17 11:00:00.000000', 2,
        'HTTP 503', NULL);
"""

FIXTURE_0007 = FIXTURE_0006.replace("""INSERT INTO rejected_lines (id, import_id, line_number, field, reason, raw)
VALUES (1, 1, 3, 'score_value', 'score_value: got "x"; expected a finite number', '{"score_value": "x"}');""",
"""INSERT INTO rejected_lines (id, import_id, line_number, field, reason, byte_length, error_column, line_hash,
    unknown_keys, known_values)
VALUES (1, 1, 3, 'score_value', 'score_value: got a string of 1 characters; expected a finite number', 20, NULL,
        '0123456789abcdef', 0, '{"score_value": {"type": "string"}}'),
       (2, 1, 4, NULL, 'not valid JSON (expected value at byte 1)', 9, 1, 'fedcba9876543210', NULL, NULL);""")

# 0009 names each import's format: a file read as FastChat's single grading, and its record
# of unknown answer length.
FIXTURE_0009 = FIXTURE_0007.replace(
    "started_at, finished_at, council_db_version)", "started_at, finished_at, council_db_version, format)").replace(
    "'2025-12-17 10:31:01.000000', '0.1.0');", "'2025-12-17 10:31:01.000000', '0.1.0', 'fastchat-single');").replace(
    "VALUES (1, 1, 2, 0, 1200, 8.5,", "VALUES (1, 1, 2, 0, -1, 8.5,")
assert FIXTURE_0009.count("fastchat-single") == 1 and ", -1, 8.5," in FIXTURE_0009

# 0012 gives each reviewer its kind: an LLM judge, a human rater, a gold label.
FIXTURE_0012 = FIXTURE_0009.replace(
    "INSERT INTO models (id, name) VALUES (1, 'openai/gpt-4o'), (2, 'anthropic/claude-3-5-sonnet'), "
    "(3, 'google/gemini');",
    "INSERT INTO models (id, name, reviewer_kind) VALUES (1, 'openai/gpt-4o', 'judge'), "
    "(2, 'anthropic/claude-3-5-sonnet', 'human'), (3, 'google/gemini', 'gold');")
assert FIXTURE_0012.count("'human'") == 1
# 0013 names the import that stored each record, an import's options, and which imports read
# records another had stored first (an import of a second file, whose records were lost).
FIXTURE_0013 = FIXTURE_0012.replace("""display_order, self_review, exclusion_id, envelope_id)
VALUES (1, 1, 2, 0, -1, 8.5, 1, 1, 0, NULL, NULL),
       (1, 1, 1, 1, 900, 9.0, 1, 1, 1, NULL, 1),
       (1, 2, 3, 2, 40, 0.0, 1, 1, 0, 1, NULL),
       (2, 3, 2, 0, 700, 0.5, 2, 0, 0, NULL, NULL);""", """display_order, self_review, exclusion_id, envelope_id, import_id)
VALUES (1, 1, 2, 0, -1, 8.5, 1, 1, 0, NULL, NULL, 1),
       (1, 1, 1, 1, 900, 9.0, 1, 1, 1, NULL, 1, 1),
       (1, 2, 3, 2, 40, 0.0, 1, 1, 0, 1, NULL, 2),
       (2, 3, 2, 0, 700, 0.5, 2, 0, 0, NULL, NULL, NULL);""") + """
INSERT INTO imports (id, source, source_kind, mode, start_offset, end_offset, start_line, end_line, inserted,
    duplicates, rejected, skipped, status, started_at, council_db_version, format, options, records_lost)
VALUES (2, '/data/gpt-4_single.jsonl', 'file', 'full', 0, 900, 0, 2, 1, 1, 0, 0, 'complete',
        '2025-12-18 10:00:00.000000', '0.2.0', 'fastchat-single', '{"bench": "mt_bench"}', 1);
INSERT INTO import_overlaps (import_id, first_id, last_id) VALUES (2, 1, 1);
"""
assert FIXTURE_0013.count("import_id)") == 2 and "NULL, NULL, NULL);" in FIXTURE_0013
# 0014 stores each session's key hash (the first 32 bits of md5(session_key)): the upgrade
# computes it for the sessions there are, as the fixture states it.
FIXTURE_0014 = FIXTURE_0013.replace(
    "query_metadata, category, language, length_bucket, import_id)\nVALUES",
    "query_metadata, category, language, length_bucket, import_id, key_hash)\nVALUES").replace(
    "'coding', 'en', 'short', 1),", f"'coding', 'en', 'short', 1, {int(hashlib.md5(b'session-a').hexdigest()[:8], 16)}),"
).replace("NULL, NULL, NULL, NULL, 1);", f"NULL, NULL, NULL, NULL, 1, {int(hashlib.md5(b'session-b').hexdigest()[:8], 16)});")
assert FIXTURE_0014.count("key_hash)") == 1 and FIXTURE_0014.count("1, 3") >= 1
# 0015 keeps the style of an answer where its line gave some (NULL: unknown).
FIXTURE_0015 = FIXTURE_0014 + """
INSERT INTO answer_styles (session_id, reviewer_id, model_id, position, response_tokens, markdown_headers,
    markdown_lists, markdown_bold)
VALUES (1, 1, 1, 1, 250, 0, 3, NULL);
"""
# 0016 knows a reviewer's provenance: a reviewer row named by its identity's label, pointing at
# its model's row, with its prompt, temperature and seed, and a record it gave (self-preference
# by the model: openai/gpt-4o's own answer).
FIXTURE_0016 = FIXTURE_0015 + """
INSERT INTO models (id, name, reviewer_kind, model_of, prompt, temperature, seed)
VALUES (4, 'openai/gpt-4o · prompt single-v1 · T=0.7 · seed 7', 'judge', 1, 'single-v1', 0.7, 7);
INSERT INTO scores (session_id, reviewer_id, model_id, position, response_length_chars, score_value, scale_id,
    display_order, self_review, exclusion_id, envelope_id, import_id)
VALUES (1, 4, 1, 1, 900, 7.5, 1, 1, 1, NULL, NULL, 1);
"""
# 0017 keeps a rubric's named scores of a record, each name once.
FIXTURE_0017 = FIXTURE_0016 + """
INSERT INTO dimension_names (id, name) VALUES (1, 'accuracy'), (2, 'clarity');
INSERT INTO score_dimensions (session_id, reviewer_id, model_id, position, dimension_id, score)
VALUES (1, 1, 1, 1, 1, 7.0), (1, 1, 1, 1, 2, 8.5);
"""
# 0018 keeps a record's own time as a number where only its time sets it apart from its session.
FIXTURE_0018 = FIXTURE_0017 + """
INSERT INTO scores (session_id, reviewer_id, model_id, position, response_length_chars, score_value, scale_id,
    display_order, self_review, exclusion_id, envelope_id, import_id, ts_us)
VALUES (1, 2, 1, 3, 950, 6.0, 1, 1, 0, NULL, NULL, 1, 1765967460000000);
"""
# 0019 keeps council-db watch's state: a rule outcome whose failing alert the webhook accepted,
# and one seen passing (no alert was due).
FIXTURE_0019 = FIXTURE_0018 + """
INSERT INTO watch_state (watch, endpoint, rule, subject, status, changed_at, sent_at, alert_id)
VALUES ('nightly', '0123456789abcdef', 'severity-max', 'openai/gpt-4o', 'fail', '2025-12-18 06:00:00.000000',
        '2025-12-18 06:00:01.000000', 'a1'),
       ('nightly', '0123456789abcdef', 'min-sessions', 'window', 'pass', '2025-12-18 06:00:00.000000', NULL, NULL);
"""

# 0002, 0003 and 0005 add views only; 0004's session_stats and 0010's day totals are derived
# from the scores (the migrations compute them), so older data is theirs too.
FIXTURES = {"0001": FIXTURE_0001, "0004": FIXTURE_0001, "0006": FIXTURE_0006, "0007": FIXTURE_0007,
            "0009": FIXTURE_0009, "0010": FIXTURE_0009, "0012": FIXTURE_0012,
            "0013": FIXTURE_0013, "0014": FIXTURE_0014, "0015": FIXTURE_0015,
            "0016": FIXTURE_0016, "0017": FIXTURE_0017, "0018": FIXTURE_0018, "0019": FIXTURE_0019,
            "0020": FIXTURE_0019,  # 0020's packed_records and store_options: empty until `db pack`
            "0021": FIXTURE_0019}  # 0021's check memory: empty until a clean `db check`
DATA_TABLES = ("imports", "rejected_lines", "models", "scales", "record_envelopes", "sessions", "scores",
               "exclusion_reasons", "outbox_events", "local_keys", "import_overlaps", "answer_styles",
               "dimension_names", "score_dimensions", "watch_state")
# What a migration changes on purpose: 0007 drops the redacted copy of each rejected line, as
# redaction let query text through (issue 14; a downgrade gives it back empty), and withholds
# the values that old reasons quoted.
DROPPED = {"rejected_lines": {"raw"}}
WITHHELD = {("rejected_lines", "reason")}


def as_kept(rows: dict[str, set[tuple]]) -> dict[str, set[tuple]]:
    """The rows as the newest schema keeps them."""
    def kept(table: str, pair: tuple) -> tuple:
        column, value = pair
        if (table, column) in WITHHELD:
            return column, re.sub(r'"[^"]*"', '"[withheld]"', value)
        return pair

    return {table: {tuple(kept(table, p) for p in row if p[0] not in DROPPED.get(table, ())) for row in found}
            for table, found in rows.items()}


def fixture_for(revision: str) -> str:
    """The script of the newest fixture at or before ``revision``."""
    order = revisions_oldest_first()
    return FIXTURES[max((r for r in FIXTURES if order.index(r) <= order.index(revision)), key=order.index)]


def table_rows(path: Path) -> dict[str, set[tuple]]:
    """Every row of every data table the database has, as {table: {(column, value) pairs...}}."""
    connection = sqlite3.connect(path)
    try:
        found = {}
        present = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in (t for t in DATA_TABLES if t in present):
            cursor = connection.execute(f"SELECT * FROM {table}")
            columns = [c[0] for c in cursor.description]
            found[table] = {tuple(zip(columns, row)) for row in cursor}
        return found
    finally:
        connection.close()


def only_columns(rows: dict[str, set[tuple]], like: dict[str, set[tuple]]) -> dict[str, set[tuple]]:
    """``rows`` cut to the columns ``like`` has (an older schema may lack newer columns)."""
    columns = {table: {name for row in found for name, _ in row} for table, found in like.items()}
    return {table: {tuple(p for p in row if p[0] in columns[table]) for row in found}
            for table, found in rows.items() if table in like}


def filled_at(tmp_path: Path, revision: str) -> Path:
    path = tmp_path / f"at-{revision}.db"
    make_council_db_at(path, revision)
    connection = sqlite3.connect(path)
    try:
        connection.executescript(fixture_for(revision))
    finally:
        connection.close()
    return path


def test_every_revision_that_changes_tables_has_its_fixture():
    for number, revision in enumerate(revisions_oldest_first()):
        source = Path(migrate.scripts().get_revision(revision).path).read_text()
        steps = ("create_table", "add_column", "alter_column", "drop_column", "add column", "drop column")
        if number == 0 or any(step in source.lower() for step in steps):
            assert revision in FIXTURES, f"revision {revision} changes tables: add its fixture SQL to FIXTURES"


@pytest.mark.parametrize("revision", revisions_oldest_first())
def test_a_database_filled_at_each_revision_upgrades_to_head_with_its_data_intact(tmp_path, revision):
    path = filled_at(tmp_path, revision)
    before = table_rows(path)
    assert all(before.values())

    database = open_database(f"sqlite:///{path}", notify=lambda _: None)
    try:
        with database.engine.connect() as connection:
            readable = connection.exec_driver_sql("SELECT count(*) FROM score_records").scalar()
    finally:
        database.engine.dispose()

    assert migrate.current_revision(database.engine) == migrate.HEAD
    assert only_columns(table_rows(path), before) == as_kept(before)
    assert readable == len(before["scores"])


def test_a_filled_database_downgrades_one_revision_at_a_time_keeping_its_data_then_to_base(tmp_path):
    path = filled_at(tmp_path, migrate.HEAD)
    cli = Cli(path)
    assert cli("import", str(write_jsonl(tmp_path / "in.jsonl", session("imported")))).exit_code == 0
    at_head = table_rows(path)
    for revision in reversed(revisions_oldest_first()[:-1]):
        assert cli("db", "downgrade", revision).exit_code == 0
        older = table_rows(path)
        if revision == "0017":
            at_head = own_time_as_envelope(at_head, older)
        assert only_columns(at_head, older) == as_kept(older), f"rows lost downgrading to {revision}"
    assert cli("db", "downgrade", "base").exit_code == 0
    up = cli("db", "upgrade")
    assert up.exit_code == 0 and "(empty) -> " + migrate.HEAD in up.stderr


def own_time_as_envelope(at_head: dict[str, set[tuple]], older: dict[str, set[tuple]]) -> dict[str, set[tuple]]:
    """The rows at head as 0017 keeps them: the record with its own time (FIXTURE_0018) points at
    an envelope row of its own, its session's at that time, which the downgrade made."""
    made = {row for row in older["record_envelopes"]} - {row for row in at_head["record_envelopes"]}
    (envelope,) = [dict(row) for row in made]
    assert (envelope["timestamp"], envelope["ts_us"], envelope["consent_level"], envelope["schema_version"]) == (
        "2025-12-17T10:31:00+00:00", 1765967460000000, 2, "1.2.0")
    timed = {row for row in at_head["scores"] if dict(row)["ts_us"] is not None}
    moved = {tuple(("envelope_id", envelope["id"]) if name == "envelope_id" else (name, value) for name, value in row)
             for row in timed}
    return {**at_head, "record_envelopes": at_head["record_envelopes"] | made,
            "scores": at_head["scores"] - timed | moved}


@pytest.mark.parametrize("args", [("import", "IN"), ("export",), ("bias-report",), ("sessions",), ("stats",),
                                  ("rejected",), ("audit", "session-a"), ("db", "upgrade"),
                                  ("db", "downgrade", "0001")])
def test_every_command_refuses_a_database_from_a_newer_council_db_leaving_its_bytes_identical(tmp_path, args):
    path = filled_at(tmp_path, migrate.HEAD)
    set_revision(path, "9999")
    source = write_jsonl(tmp_path / "in.jsonl", session("new"))
    files = sorted(tmp_path.iterdir())
    before = hashlib.sha256(path.read_bytes()).hexdigest()

    result = Cli(path)(*[str(source) if arg == "IN" else arg for arg in args])
    gc.collect()  # an engine refused inside the command is closed once collected

    assert isinstance(result.exception, DatabaseTooNew), result.output
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(tmp_path.iterdir()) == files, "no -wal or -journal file was left"


@pytest.fixture
def secure_delete_off():
    """SQLite as many builds have it (Debian's turns secure_delete on): freed pages keep their bytes."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def off(dbapi_connection, _record) -> None:
        dbapi_connection.execute("PRAGMA secure_delete = OFF")

    event.listen(Engine, "connect", off)
    yield
    event.remove(Engine, "connect", off)


def test_upgrading_past_0007_leaves_no_byte_of_a_rejected_lines_old_text_in_the_file(tmp_path, secure_delete_off):
    path = filled_at(tmp_path, "0006")
    planted = "PLANTED-OLD-RAW-91c2 what did my doctor say"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA secure_delete = OFF")
    with connection:
        connection.executemany("INSERT INTO rejected_lines (import_id, line_number, field, reason, raw) "
                               "VALUES (1, ?, NULL, 'not valid JSON', ?)",
                               [(number, f'{{"query": "{planted} {number}"') for number in range(10, 400)])
        # Before 0007 a reason could quote up to 60 characters of the value it refused.
        connection.executemany("INSERT INTO rejected_lines (import_id, line_number, field, reason, raw) "
                               "VALUES (1, ?, 'timestamp', ?, '')",
                               [(number, f'timestamp: "{planted} {number}" is not an ISO-8601 time')
                                for number in range(400, 410)] + [
                                (410, f'timestamp: {json.dumps(planted * 2)[:60]} is not an ISO-8601 time')])
    connection.close()
    assert planted.encode() in path.read_bytes()

    database = open_database(f"sqlite:///{path}", notify=lambda _: None)
    database.engine.dispose()  # the last connection folds the WAL back into the file

    assert migrate.current_revision(database.engine) == migrate.HEAD
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(path.name)]
    assert all(planted.encode()[:20] not in p.read_bytes() for p in leftovers)
    reasons = sqlite3.connect(path).execute("SELECT reason FROM rejected_lines WHERE line_number >= 400").fetchall()
    assert {reason for (reason,) in reasons} == {'timestamp: "[withheld]" is not an ISO-8601 time',
                                                  'timestamp: "[withheld]"'}
