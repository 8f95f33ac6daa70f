"""A judge log whose sessions gain records all through the file (fastchat-single: a session
is a question's turn, and llm_judge writes model after model) imports at a cost per batch that
does not grow with what its sessions already hold (issue 27, item 19). Each batch used to read
back every stored row of the sessions it added to (for the day totals) and to recompute their
statistics from all of them, so the import time grew with the square of the gradings per
session. benchmarks/bench_fastchat_single.py measures the rate; here, what is read back is
counted, with small batches, and the derived tables are checked against the records."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from sqlalchemy import event

from council_db.ingest import lines as lines_module
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store import writer
from council_db.store.database import open_database
from council_db.store.derived import check
from council_db.store.stored_keys import StoredKeys
from tests.conftest import Cli, both_backends, same_numbers
from tests.store.sqlite_files import url_for
from tests.store.test_day_totals import totals

SESSIONS, MODELS, BATCH = 8, 60, 40  # 480 gradings in 12 batches, each adding to every session


def llm_judge_order(path):
    """Gradings of every question's turn, model after model, as llm_judge appends them."""
    with path.open("w") as out:
        for number in range(SESSIONS * MODELS):
            model, question = divmod(number, SESSIONS)
            out.write(json.dumps({"question_id": question, "model": f"model-{model}", "judge": ["gpt-4", "single-v1"],
                                  "score": number % 10 + 1, "turn": 1, "tstamp": 1.7e9 + number}) + "\n")
    return path


def scores_by_name(url: str) -> list[tuple]:
    """Every stored score row, names for ids (two databases number them apart)."""
    engine = open_database(url, notify=lambda _: None).engine
    try:
        with engine.connect() as connection:
            return sorted(tuple(row) for row in connection.exec_driver_sql(
                "SELECT s.session_key, r.name, m.name, c.position, c.score_value, c.response_length_chars, "
                "c.display_order, c.self_review, c.exclusion_id, c.ts_us FROM scores AS c "
                "JOIN sessions AS s ON s.id = c.session_id JOIN models AS r ON r.id = c.reviewer_id "
                "JOIN models AS m ON m.id = c.model_id"))
    finally:
        engine.dispose()


def rows_read_back(db, monkeypatch) -> Counter[int]:
    """Per session id, how many times the import reads its stored rows back (filled as it runs)."""
    reads: Counter[int] = Counter()

    def counted(connection, cursor, statement, parameters, *_):
        if "FROM scores WHERE session_id BETWEEN" in statement:
            first, last = parameters[-2:]
            reads.update(range(first, last + 1))

    event.listen(db.engine, "before_cursor_execute", counted)
    return reads


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_keeps_what_it_read_across_commits_unless_one_is_rolled_back(db, tmp_path, monkeypatch):
    """Over commits (no other connection wrote) a session is read once; a transaction rolled
    back takes what it added, so what the import held is read again."""
    from council_db.ingest import importer

    monkeypatch.setattr(lines_module, "BATCH_LINES", BATCH)
    monkeypatch.setattr(writer, "BATCH_RECORDS", BATCH)
    monkeypatch.setattr(importer, "COMMIT_EVERY_LINES", 3 * BATCH)
    reads = rows_read_back(db, monkeypatch)
    source, options = llm_judge_order(tmp_path / "single.jsonl"), FormatOptions("fastchat-single")
    assert import_files(db, [str(source)], options=options).files[0].inserted == SESSIONS * MODELS
    assert set(reads.values()) == {1}

    reads.clear()
    with db.bulk_writer() as connection:
        keys = StoredKeys(connection)
        keys.hold({1})
        connection.rollback()
        keys.hold({1})
        connection.commit()
        keys.hold({1})
    assert reads == {1: 2}, "read again after the rollback, not after the commit"


@both_backends
def test_a_batch_reads_no_stored_session_twice_and_statistics_are_recomputed_once(db, tmp_path, monkeypatch):
    """Each batch adds to every session; a session's stored rows are read back once in the
    import (the first time a batch adds to it), not once a batch (issue 30, item 7)."""
    monkeypatch.setattr(lines_module, "BATCH_LINES", BATCH)
    monkeypatch.setattr(writer, "BATCH_RECORDS", BATCH)
    reads: Counter[int] = Counter()
    refreshes: list[str] = []

    def counted(connection, cursor, statement, parameters, *_):
        if statement.startswith("DELETE FROM session_stats"):
            refreshes.append(statement)
        if "FROM scores WHERE session_id BETWEEN" in statement:
            first, last = parameters[-2:]
            reads.update(range(first, last + 1))

    event.listen(db.engine, "before_cursor_execute", counted)
    result = import_files(db, [str(llm_judge_order(tmp_path / "single.jsonl"))],
                          options=FormatOptions("fastchat-single")).files[0]
    assert result.inserted == SESSIONS * MODELS
    assert sorted(reads) == list(range(1, SESSIONS + 1)), "every session is added to after its first batch"
    assert set(reads.values()) == {1}, "a session's stored rows are read once, not once a batch"
    assert len(refreshes) == 1, "older sessions' statistics are recomputed at the commit, not for every batch"
    assert all(finding.missing == finding.extra == finding.differing == 0 for finding in check(db))


@both_backends
def test_sessions_gaining_records_across_batches_and_imports_store_what_one_batch_stores(db, db_url, tmp_path,
                                                                                        monkeypatch):
    """A file imported half, then grown (the second import adds to sessions the first
    stored), with a line repeated batches later (a key stored already: kept once) and small
    batches, gives the score rows and day totals of the whole file in one batch."""
    whole = llm_judge_order(tmp_path / "single.jsonl").read_text().splitlines(keepends=True)
    repeated = json.loads(whole[3]) | {"score": 1}  # the same key, another score: the first one stays
    whole.insert(len(whole) - 5, json.dumps(repeated) + "\n")
    half = tmp_path / "half.jsonl"
    half.write_text("".join(whole[:len(whole) // 2]))
    (tmp_path / "single.jsonl").write_text("".join(whole))
    options = FormatOptions("fastchat-single")
    in_one_batch = url_for(tmp_path / "one-batch.db")
    assert Cli(in_one_batch)("import", "-q", "--from", "fastchat-single", str(tmp_path / "single.jsonl")).exit_code == 0
    monkeypatch.setattr(lines_module, "BATCH_LINES", 7)
    monkeypatch.setattr(writer, "BATCH_RECORDS", 7)
    import_files(db, [str(half)], options=options)
    grown = import_files(db, [str(tmp_path / "single.jsonl")], options=options).files[0]

    assert grown.inserted == SESSIONS * MODELS - len(whole) // 2 and grown.duplicates >= 1
    assert same_numbers(totals(db_url), totals(in_one_batch))
    assert scores_by_name(db_url) == scores_by_name(in_one_batch)
    assert all(finding.missing == finding.extra == finding.differing == 0 for finding in check(db))


@both_backends
def test_an_import_that_another_writes_between_its_commits_reads_its_sessions_again(db, db_url, tmp_path,
                                                                                   monkeypatch):
    """Between two of an import's transactions another import adds to the sessions it holds in
    memory (the last model's gradings, which the first reaches later): what the first held is
    forgotten, so it finds those records stored and counts nothing twice."""
    from council_db.ingest import importer

    monkeypatch.setattr(lines_module, "BATCH_LINES", BATCH)
    monkeypatch.setattr(writer, "BATCH_RECORDS", BATCH)
    monkeypatch.setattr(importer, "COMMIT_EVERY_LINES", 3 * BATCH)
    source = llm_judge_order(tmp_path / "single.jsonl")
    lines = source.read_text().splitlines(keepends=True)
    last_model = tmp_path / "last-model.jsonl"
    last_model.write_text("".join(lines[-SESSIONS:]))
    options, write, between = FormatOptions("fastchat-single"), writer.ScoreWriter.write, []

    def other_import_between_commits(self, batch, import_id):
        if not self.connection.in_transaction() and self.totals.keys.sessions and not between:
            between.append(import_files(db, [str(last_model)], options=options).files[0].inserted)
        return write(self, batch, import_id)

    monkeypatch.setattr(writer.ScoreWriter, "write", other_import_between_commits)
    result = import_files(db, [str(source)], options=options).files[0]

    assert between == [SESSIONS] and result.inserted == SESSIONS * (MODELS - 1)
    assert all(finding.missing == finding.extra == finding.differing == 0 for finding in check(db))
    in_one_go = url_for(tmp_path / "one-go.db")
    assert Cli(in_one_go)("import", "-q", "--from", "fastchat-single", str(source)).exit_code == 0
    assert same_numbers(totals(db_url), totals(in_one_go))
