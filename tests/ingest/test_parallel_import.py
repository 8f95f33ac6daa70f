"""The worker-process import path gives exactly what the in-process path gives.

Small thresholds make small files take the parallel path: many segments, two workers.
"""

from __future__ import annotations

import gzip
import json
import threading

import numpy as np
import pytest

from council_db.ingest import pipeline
from council_db.ingest.importer import import_files
from council_db.ingest.sources import resolve_sources
from council_db.outlets.export import ExportFilter, records
from tests.conftest import both_backends, record, session, write_jsonl


@pytest.fixture
def parallel(monkeypatch):
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "SEGMENT_BYTES", 3_000)
    monkeypatch.setattr(pipeline, "QUEUED_CHUNKS", 2)


def many_sessions(count: int) -> list:
    return [line for number in range(count) for line in session(f"s{number:03d}")]


def test_segments_are_cut_after_newlines_and_cover_the_file(tmp_path, parallel):
    path = write_jsonl(tmp_path / "in.jsonl", many_sessions(10))
    source = resolve_sources([str(path)])[0]
    parts = pipeline.segments(source, 0, source.size)
    data = path.read_bytes()
    assert len(parts) > 5 and parts[0].start == 0 and parts[-1].end == len(data) and parts[-1].last
    assert all(a.end == b.start and data[a.end - 1:a.end] == b"\n" for a, b in zip(parts, parts[1:]))


def test_chunks_joined_for_the_writer_keep_every_row_bad_line_and_end_and_stop_at_a_commit(tmp_path, parallel):
    lines = many_sessions(12)
    lines.insert(40, "{broken")
    source = resolve_sources([str(write_jsonl(tmp_path / "in.jsonl", lines))])[0]
    chunks = list(pipeline.source_chunks(source, 0, 1))
    for batch_records, commit_lines in ((100, 10**6), (10**6, 50)):
        joined = list(pipeline.merged(iter(chunks), batch_records, commit_lines))
        assert 1 < len(joined) < len(chunks)
        assert all(len(j.normalised.rows) >= batch_records or j.lines >= commit_lines for j in joined[:-1])
        assert [j.end_offset for j in joined][-1] == source.size and joined[-1].last_line == len(lines)
        assert sum(j.lines for j in joined) == len(lines)
        assert [r.line_number for j in joined for r in j.normalised.rejected] == [41]
        keys = [k for j in joined for k in np.array(j.normalised.rows.session_keys)[j.normalised.rows.session]]
        assert keys == [k for c in chunks for k in np.array(c.normalised.rows.session_keys)[c.normalised.rows.session]]


@both_backends
def test_parallel_import_stores_the_same_records_as_serial(tmp_path, db, parallel):
    lines = many_sessions(30)
    summary = import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", lines))])
    assert (summary.total("inserted"), summary.total("rejected")) == (len(lines), 0)
    assert sorted(records(db, ExportFilter()), key=json.dumps) == sorted(lines, key=json.dumps)


@both_backends
def test_bad_lines_in_later_segments_keep_their_absolute_line_numbers(tmp_path, db, parallel):
    lines = many_sessions(20)
    bad = {37: "{broken", 150: record(score_value="x"), 301: "also broken"}
    for number, line in bad.items():
        lines.insert(number - 1, line)
    summary = import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", lines))])
    assert [r.line_number for r in summary.files[0].rejected_lines] == sorted(bad)
    assert summary.total("inserted") == 320


def _imported_then_grown(tmp_path, db, *tail: str):
    """Ten sessions imported, then one more session and ``tail`` lines appended to the file."""
    path = write_jsonl(tmp_path / "in.jsonl", many_sessions(10))
    import_files(db, [str(path)])
    with path.open("a") as out:
        out.writelines(json.dumps(line) + "\n" for line in session("late"))
        out.writelines(tail)
    return path


@both_backends
def test_a_grown_file_resumes_from_the_right_byte_and_line(tmp_path, db, parallel):
    path = _imported_then_grown(tmp_path, db, "garbage\n")
    result = import_files(db, [str(path)]).files[0]
    assert (result.mode, result.inserted, result.lines) == ("incremental", 16, 17)
    assert result.rejected_lines[0].line_number == 177


@both_backends
def test_a_half_written_last_line_is_left_for_later_on_the_parallel_path(tmp_path, db, parallel):
    path = write_jsonl(tmp_path / "in.jsonl", many_sessions(10))
    with path.open("a") as out:
        out.write(json.dumps(record(session_id="tail"))[:30])
    result = import_files(db, [str(path)]).files[0]
    assert (result.inserted, result.rejected) == (160, 0)


@both_backends
def test_gzip_is_read_by_one_worker(tmp_path, db, parallel):
    path = tmp_path / "in.jsonl.gz"
    with gzip.open(path, "wt") as out:
        out.writelines(json.dumps(line) + "\n" for line in many_sessions(10))
    assert import_files(db, [str(path)]).total("inserted") == 160


@both_backends
def test_a_failing_worker_is_reported_as_an_error_not_a_hang(tmp_path, db, parallel, monkeypatch):
    from council_db.errors import CouncilDbError

    def explode(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(pipeline, "_read", explode)
    with pytest.raises(CouncilDbError, match="reading failed: OSError: disk on fire"):
        import_files(db, [str(write_jsonl(tmp_path / "in.jsonl", many_sessions(5)))])


def test_an_import_stopped_early_ends_its_workers_without_errors_in_their_pipe_readers(tmp_path, parallel, monkeypatch):
    """Stopping mid-file (an error, a kill of the consumer) must not close a worker's pipe
    under the thread still reading it: that read fails with a TypeError instead of EOF, and
    a closed descriptor's number can be reused by another file the thread would then read."""
    thread_errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: thread_errors.append(args.exc_type.__name__))
    source = resolve_sources([str(write_jsonl(tmp_path / "in.jsonl", many_sessions(40)))])[0]
    parts = pipeline.segments(source, 0, source.size)
    for _ in range(30):
        chunks = pipeline.chunks_in_workers(source, parts, 1, 2)
        next(chunks)
        chunks.close()
        readers = [thread for thread in threading.enumerate() if thread.name.endswith("(_drain)")]
        assert readers == [], "a pipe was closed under the thread reading it"
    assert thread_errors == []


def _drains() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.endswith("(_drain)")]


def test_a_head_start_reads_the_file_before_the_database_is_opened(tmp_path, parallel):
    from council_db.ingest.importer import head_start

    source = resolve_sources([str(write_jsonl(tmp_path / "in.jsonl", many_sessions(20)))])[0]
    started = head_start([source])
    try:
        queued = started._queues[0]
        for _ in range(500):  # the first worker's first chunk, with no database anywhere
            if not queued.empty():
                break
            threading.Event().wait(0.01)
        assert not queued.empty()
    finally:
        started.close()
    assert _drains() == []


def test_no_head_start_where_the_file_would_not_be_read_in_segments(tmp_path, monkeypatch):
    from council_db.ingest.formats.options import FormatOptions
    from council_db.ingest.importer import head_start

    path = write_jsonl(tmp_path / "in.jsonl", many_sessions(5))
    zipped = tmp_path / "in.jsonl.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    assert head_start(resolve_sources([str(path)])) is None  # a small file: read in this process
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    assert head_start(resolve_sources([str(zipped)])) is None  # one stream, one worker, read as before
    assert head_start(resolve_sources([str(path)]), FormatOptions("openai-evals")) is None  # read in order
    assert head_start([]) is None


@both_backends
def test_a_head_start_stores_what_an_import_without_one_stores(tmp_path, db, parallel):
    from council_db.ingest.importer import head_start, import_sources

    lines = many_sessions(20)
    for number, line in {37: "{broken", 150: record(score_value="x")}.items():
        lines.insert(number - 1, line)
    sources = resolve_sources([str(write_jsonl(tmp_path / "in.jsonl", lines))])
    result = import_sources(db, sources, head_start=head_start(sources)).files[0]
    assert (result.inserted, [r.line_number for r in result.rejected_lines]) == (320, [37, 150])
    assert sorted(records(db, ExportFilter()), key=json.dumps) == sorted(
        (line for line in lines if isinstance(line, dict) and line.get("score_value") != "x"), key=json.dumps)
    assert _drains() == []


@both_backends
def test_a_head_start_is_stopped_unused_when_the_import_resumes_past_the_start(tmp_path, db, parallel):
    from council_db.ingest.importer import head_start, import_sources

    path = _imported_then_grown(tmp_path, db)
    sources = resolve_sources([str(path)])
    result = import_sources(db, sources, head_start=head_start(sources)).files[0]
    assert (result.mode, result.inserted, result.lines, result.duplicates) == ("incremental", 16, 16, 0)
    assert _drains() == []


def test_the_cli_stops_its_head_start_when_the_database_cannot_be_opened(tmp_path, parallel):
    from tests.conftest import Cli

    path = write_jsonl(tmp_path / "in.jsonl", many_sessions(20))
    result = Cli(f"sqlite:///{tmp_path}")("import", str(path))  # a folder: no database opens there
    assert result.exit_code == 1 and "unable to open database file" in str(result.exception)
    assert _drains() == []
    result = Cli(f"sqlite:///{tmp_path / 'council.db'}")("import", str(path))
    assert result.exit_code == 0 and "320 new records" in result.output
    assert _drains() == []
