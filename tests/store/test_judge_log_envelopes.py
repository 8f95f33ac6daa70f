"""A judge log gives every grading its own time, so each record after its session's first gets
an envelope of its own (record_envelopes). The writer stores them in one insert per batch under
ids it reserves, without reading the ids back (issue 30: fastchat-single's import rate); what is
stored is what was stored before, on the published MT-bench grading."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

from sqlalchemy import event, text

from council_db.ingest.formats.judge_lines import iso_time
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.database import open_database
from tests import realdata
from tests.conftest import both_backends, scalar

JUDGMENTS = realdata.MT_BENCH / "model_judgment" / "gpt-4_single.jsonl"
OPTIONS = FormatOptions("fastchat-single", answers=realdata.MT_BENCH / "model_answer")
# Each record by its natural key (the reviewer by its model: a judge's prompt, kept since revision
# 0016, makes it an identity of that model), with its score, exclusion, length and time (its own
# envelope's, else its session's)
RECORDS = """
SELECT s.session_key, COALESCE((SELECT b.name FROM models AS b WHERE b.id = r.model_of), r.name), m.name, sc.position,
       sc.score_value, sc.exclusion_id, sc.response_length_chars,
       COALESCE(e.timestamp, s.timestamp), COALESCE(e.ts_us, s.ts_us)
FROM scores AS sc JOIN sessions AS s ON s.id = sc.session_id JOIN models AS r ON r.id = sc.reviewer_id
JOIN models AS m ON m.id = sc.model_id LEFT JOIN record_envelopes AS e ON e.id = sc.envelope_id
"""
# The digest of those records as commit 31fe228 (before this change) stored them from JUDGMENTS
STORED_BEFORE = "fa1834cc7eaab02dcad45ed0e9d149267eceb5221bdf81f34060176d0d2d2d29"
SESSION_TURNS, GRADINGS = 160, 800


def stored_records(db) -> list[list]:
    with db.engine.connect() as connection:
        return sorted(list(row) for row in connection.execute(text(RECORDS)))


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
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == GRADINGS - SESSION_TURNS  # a session's first: its own


def test_the_writer_reads_no_envelope_ids_back_when_every_envelope_is_new(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'council.db'}", notify=lambda _: None)
    statements: list[str] = []
    event.listen(db.engine, "before_cursor_execute", lambda _c, _k, sql, *_: statements.append(sql))
    import_files(db, [str(JUDGMENTS)], options=OPTIONS)
    looked_up = [sql for sql in statements if sql.startswith("SELECT") and "FROM record_envelopes WHERE" in sql]
    assert looked_up == []
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == GRADINGS - SESSION_TURNS
    db.engine.dispose()


@both_backends
def test_envelopes_stored_already_are_found_by_their_digest_and_stored_once(db, tmp_path):
    lines = JUDGMENTS.read_text(encoding="utf-8").splitlines(keepends=True)
    first_part = tmp_path / "first.jsonl"
    first_part.write_text("".join(lines[:500]), encoding="utf-8")
    import_files(db, [str(first_part)], options=OPTIONS)
    whole = tmp_path / "gpt-4_single.jsonl"  # another file: its first 500 lines' envelopes are stored already
    whole.write_text("".join(lines), encoding="utf-8")
    assert import_files(db, [str(whole)], options=OPTIONS).total("inserted") == GRADINGS - 500
    assert digest(stored_records(db)) == STORED_BEFORE
    assert scalar(db, "SELECT COUNT(*) FROM record_envelopes") == GRADINGS - SESSION_TURNS
