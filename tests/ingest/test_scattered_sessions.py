"""A judge log whose sessions gain records all through the file (fastchat-single: a session
is a question's turn, and llm_judge writes model after model) imports at a cost per batch that
does not grow with what its sessions already hold (issue 27, item 19). Each batch used to read
back every stored row of the sessions it added to (for the day totals) and to recompute their
statistics from all of them, so the import time grew with the square of the gradings per
session. benchmarks/bench_fastchat_single.py measures the rate; here, what is read back is
counted, with small batches, and the derived tables are checked against the records."""

from __future__ import annotations

import json

from sqlalchemy import event

from council_db.ingest import lines as lines_module
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store import day_totals, writer
from council_db.store.derived import check
from tests.conftest import both_backends

SESSIONS, MODELS, BATCH = 8, 60, 40  # 480 gradings in 12 batches, each adding to every session


def llm_judge_order(path):
    """Gradings of every question's turn, model after model, as llm_judge appends them."""
    with path.open("w") as out:
        for number in range(SESSIONS * MODELS):
            model, question = divmod(number, SESSIONS)
            out.write(json.dumps({"question_id": question, "model": f"model-{model}", "judge": ["gpt-4", "single-v1"],
                                  "score": number % 10 + 1, "turn": 1, "tstamp": 1.7e9 + number}) + "\n")
    return path


@both_backends
def test_a_batch_reads_back_rows_of_its_own_models_only_and_statistics_are_recomputed_once(
        db, tmp_path, monkeypatch):
    monkeypatch.setattr(lines_module, "BATCH_LINES", BATCH)
    monkeypatch.setattr(writer, "BATCH_RECORDS", BATCH)
    read_back: list[int] = []
    stored = day_totals._stored
    monkeypatch.setattr(day_totals, "_stored", lambda columns, day, found: read_back.append(len(found)) or stored(
        columns, day, found))
    refreshes: list[str] = []

    def counted(connection, cursor, statement, *_):
        if statement.startswith("DELETE FROM session_stats"):
            refreshes.append(statement)

    event.listen(db.engine, "before_cursor_execute", counted)
    result = import_files(db, [str(llm_judge_order(tmp_path / "single.jsonl"))],
                          options=FormatOptions("fastchat-single")).files[0]
    assert result.inserted == SESSIONS * MODELS
    assert len(read_back) == SESSIONS * MODELS // BATCH - 1, "every batch after the first adds to stored sessions"
    assert max(read_back) <= 2 * SESSIONS, "a batch reads back its sessions once per reviewer and scale, not each row"
    assert len(refreshes) == 1, "older sessions' statistics are recomputed at the commit, not for every batch"
    assert all(finding.missing == finding.extra == finding.differing == 0 for finding in check(db))
