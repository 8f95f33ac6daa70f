"""A judge log gives every grading its own time, so each record after its session's first has
a time of its own: since revision 0018 a number on its score row (scores.ts_us), not an
envelope row each (issue 30: fastchat-single's import rate). A record whose envelope differs in
more than its time still gets one, stored in one insert per batch under ids the writer reserves,
without reading the ids back. What is stored is what was stored before, on the published
MT-bench grading."""

from __future__ import annotations

import hashlib
import io
import json
from collections import defaultdict

from sqlalchemy import event, text

from council_db.contract.timestamps import time_text
from council_db.ingest.formats.judge_lines import iso_time
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.outlets import export
from council_db.store import migrate
from council_db.store.database import open_database
from tests import realdata
from tests.conftest import both_backends, scalar, session, write_jsonl

JUDGMENTS = realdata.MT_BENCH / "model_judgment" / "gpt-4_single.jsonl"
OPTIONS = FormatOptions("fastchat-single", answers=realdata.MT_BENCH / "model_answer")
# Each record by its natural key (the reviewer by its model: a judge's prompt, kept since revision
# 0016, makes it an identity of that model), with its score, exclusion, length and time (its own
# envelope's, else its session's; a number of its own, revision 0018, reads as its session's form of it)
RECORDS = """
SELECT s.session_key, COALESCE((SELECT b.name FROM models AS b WHERE b.id = r.model_of), r.name), m.name, sc.position,
       sc.score_value, sc.exclusion_id, sc.response_length_chars,
       COALESCE(e.timestamp, s.timestamp), COALESCE(e.ts_us, s.ts_us), sc.ts_us
FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id JOIN models AS r ON r.id = sc.reviewer_id
JOIN models AS m ON m.id = sc.model_id LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id
"""
# The digest of those records as commit 31fe228 (before this change) stored them from JUDGMENTS
STORED_BEFORE = "fa1834cc7eaab02dcad45ed0e9d149267eceb5221bdf81f34060176d0d2d2d29"
SESSION_TURNS, GRADINGS = 160, 800


def stored_records(db) -> list[list]:
    with db.engine.connect() as connection:
        rows = [list(row) for row in connection.execute(text(RECORDS))]
    return sorted(row[:7] + ([row[7], row[8]] if row[9] is None else [time_text(row[9], row[7]), row[9]])
                  for row in rows)


def digest(records: list[list]) -> str:
    return hashlib.sha256(json.dumps([tuple(row) for row in records]).encode()).hexdigest()


@both_backends
def test_the_published_grading_is_stored_as_before_with_each_gradings_own_time(db):
    import_files(db, [str(JUDGMENTS)], options=OPTIONS)
    records = stored_records(db)
    assert digest(records) == STORED_BEFORE
    graded_at = defaultdict(set)  # (session, model) -> the grading times in the file
    for line in realdata.mt_bench_judgments():
        graded_at[(f"q{line['question_id']}/t{line['turn']}", line["model"])].add(iso_time("tstamp", line["tstamp"]))
    assert len(records) == GRADINGS
    assert all(row[7] in graded_at[(row[0], row[2])] for row in records)
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE ts_us IS NOT NULL") == GRADINGS - SESSION_TURNS  # a session's
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == 0  # first: its session's; the others: their time


def configured(sessions: int) -> list[dict]:
    """llm-council sessions whose records each name their own config version (and time): an
    envelope that differs in more than its time, so every record after a session's first has
    its own envelope row."""
    return [dict(line, council_config_version=f"0.{number}", timestamp=f"2025-12-17T10:{number:02d}:00Z")
            for index in range(sessions) for number, line in enumerate(session(f"s{index}", models=2, reviewers=2))]


def test_the_writer_reads_no_envelope_ids_back_when_every_envelope_is_new(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'council.db'}", notify=lambda _: None)
    statements: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda _c, _k, sql, *_: statements.append(sql))
    import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", configured(50)))])
    looked_up = [sql for sql in statements if sql.startswith("SELECT") and "FROM record_envelopes WHERE" in sql]
    assert looked_up == []
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == 3  # the second, third and fourth config versions
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE envelope_id IS NOT NULL") == 50 * 3
    db.engine.dispose()


@both_backends
def test_envelopes_stored_already_are_found_by_their_digest_and_stored_once(db, tmp_path):
    lines = configured(50)
    import_files(db, [str(write_jsonl(tmp_path / "first.jsonl", lines[:2]))])  # a second config version's envelope
    whole = write_jsonl(tmp_path / "whole.jsonl", lines)  # another file: that envelope is stored already
    assert import_files(db, [str(whole)]).total("inserted") == len(lines) - 2
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == 3
    exported = [json.loads(line) for line in export_text(db).splitlines()]
    assert sorted(exported, key=json.dumps) == sorted(lines, key=json.dumps)


def export_text(db) -> str:
    out = io.StringIO()
    export.write(db, export.ExportFilter(), out)
    return out.getvalue()


@both_backends
def test_records_that_differ_from_their_session_only_in_time_keep_a_number_and_export_as_imported(db, tmp_path):
    lines = [dict(line, timestamp=f"2025-12-17 10:{number:02d}:0{index % 10}.250000+00:00")
             for index in range(20) for number, line in enumerate(session(f"s{index}", models=2, reviewers=2))]
    import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", lines))])
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == 0
    assert scalar(db, "SELECT COUNT(*) FROM scores WHERE ts_us IS NOT NULL") == 20 * 3
    exported = [json.loads(line) for line in export_text(db).splitlines()]
    assert sorted(exported, key=json.dumps) == sorted(lines, key=json.dumps)


@both_backends
def test_downgrading_to_0017_gives_each_own_time_an_envelope_row_and_every_record_keeps_its_time(db):
    import_files(db, [str(JUDGMENTS)], options=OPTIONS)
    migrate.downgrade(db.engine, "0017")
    with db.engine.connect() as connection:
        records = sorted(list(row) for row in connection.execute(text(RECORDS.replace(", sc.ts_us\n", "\n"))))
    assert digest(records) == STORED_BEFORE
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == GRADINGS - SESSION_TURNS
    migrate.upgrade(db.engine, "head")
