"""What an OpenAI evals import stores, written batch by batch: the same sessions, envelopes,
score rows and own times whichever way its batches are read (columns, or a record each) and
however small they are, as main stored them (a digest of every stored row, pinned); and the
writer makes a session's envelope only for a session new to the database (a run log's
sample recurs once per run, so most of a batch's sessions were stored by an earlier batch)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from council_db.contract import envelope as envelope_module
from council_db.contract.envelope import Envelope
from council_db.contract.score_batch import ScoreBatch
from council_db.ingest import importer
from council_db.ingest import lines as lines_module
from council_db.ingest.formats import openai_evals
from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.readers import reader
from council_db.ingest.importer import import_files
from council_db.ingest.lines import LineBatch
from council_db.ingest.normalise import Normaliser
from council_db.ingest.sources import resolve_sources
from council_db.store import writer as writer_module
from council_db.store.database import open_database
from tests.conftest import write_jsonl
from tests.ingest.test_record_columns import summary

ARGS = {"eval_type": "cot_classify", "modelgraded_spec": "fact", "eval_kwargs": {"temperature": 0, "seed": 7}}
# What each table an import writes keeps, every row in a fixed order, ids as what they name
# (a session reserved after a batch met stored ones may take another free id).
TABLES = {
    "sessions": "SELECT session_key, ts_us, timestamp, consent_level, schema_version, schema_version_raw, "
                "council_config_version, query_hash, query_metadata, category, language, length_bucket, import_id, "
                "key_hash FROM sessions ORDER BY session_key",
    "record_envelopes": "SELECT digest, ts_us, timestamp, consent_level, schema_version, schema_version_raw, "
                        "council_config_version, query_hash, query_metadata FROM record_envelopes ORDER BY digest",
    "scores": "SELECT s.session_key, r.name, m.name, c.position, c.response_length_chars, c.score_value, k.name, "
              "c.display_order, c.self_review, c.exclusion_id, e.digest, c.import_id, c.ts_us FROM scores c "
              "JOIN sessions s ON s.id = c.session_id JOIN models r ON r.id = c.reviewer_id "
              "JOIN models m ON m.id = c.model_id JOIN scales k ON k.id = c.scale_id "
              "LEFT JOIN record_envelopes e ON e.id = c.envelope_id ORDER BY 1, 4",
    "models": "SELECT m.name, m.reviewer_kind, o.name, m.prompt, m.temperature, m.seed FROM models m "
              "LEFT JOIN models o ON o.id = m.model_of ORDER BY m.name",
    "scales": "SELECT name, low, high FROM scales ORDER BY name",
}


def spec(run: int) -> dict:
    functions = [f"model-{run}", "gpt-4"]
    return {"spec": {"completion_fns": functions, "eval_name": f"fact{run % 2}.dev.v0", "run_id": f"run{run}",
                     "run_config": {"completion_fns": functions, "eval_spec": {
                         "cls": "evals.elsuite.modelgraded.classify:ModelBasedClassify", "args": ARGS}}}}


def run_log(runs: int, samples: int) -> list[dict]:
    """``runs`` logs joined, each grading ``samples`` samples plus one of its own (a session new
    in a later run), three samples' events interleaved; two evals (a session's category
    differs between runs: a record envelope of its own), times of both forms str(datetime)
    writes (with and without microseconds), a time shared by several gradings, one grading
    without a candidate's answer and one invalid choice."""
    events: list[dict] = []
    for run in range(runs):
        events.append(spec(run))
        event_id = 0
        names = [f"fact.dev.{sample}" for sample in range(samples)] + [f"fact.run{run}.only"]
        for first in range(0, len(names), 3):
            group = names[first:first + 3]
            for order, step in enumerate(("raw_sample", "sampling", "sampling", "metrics")):
                for number, sample in enumerate(group):
                    if (order, run, sample) == (1, 1, "fact.dev.4"):  # the answer came with the sample
                        continue
                    micro = "" if (event_id + run) % 5 == 0 else f".{(event_id * 7919 + run) % 10**6:06d}"
                    second = 7 if sample.endswith(".2") else event_id % 60
                    data = ({"choice": "__invalid__" if (run, sample) == (2, "fact.dev.3") else "ABCDE"[number],
                             "score": [0.0, 0.25, 0.5, 0.75, 1.0][(first + number + run) % 5]}
                            if step == "metrics" else {"sampled": ["answer " * (1 + (first + number + run) % 7)]})
                    events.append({"run_id": f"run{run}", "event_id": event_id, "sample_id": sample, "type": step,
                                   "data": data, "created_by": "",
                                   "created_at": f"2024-05-02 1{run}:{first % 60:02d}:{second:02d}{micro}+00:00"})
                    event_id += 1
        events.append({"final_report": {"score": 0.5}})
    return events


def dump(db_file: Path) -> list:
    """Every stored row of the tables an import writes, in id order."""
    import sqlite3

    with sqlite3.connect(db_file) as connection:
        return [(table, connection.execute(query).fetchall()) for table, query in TABLES.items()]


def digest(rows: list) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def imported(tmp_path: Path, name: str, log: Path) -> list:
    db_file = tmp_path / f"{name}.db"
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    import_files(db, [str(log)], options=FormatOptions("openai-evals"))
    db.engine.dispose()
    return dump(db_file)


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 7 lines, a write every 5 records and a commit every 30 lines (the writer's
    caches last a transaction): most sessions a batch holds were stored before."""
    monkeypatch.setattr(lines_module, "BATCH_LINES", 7)
    monkeypatch.setattr(writer_module, "BATCH_RECORDS", 5)
    monkeypatch.setattr(importer, "COMMIT_EVERY_LINES", 30)


def test_a_multi_run_log_in_small_batches_stores_what_main_stored(tmp_path, small_batches):
    log = write_jsonl(tmp_path / "runs.jsonl", run_log(4, 10))
    rows = imported(tmp_path, "small", log)
    assert [len(found) for _, found in rows] == [14, 20, 43, 6, 1]
    assert digest(rows) == "0ee25648d409e634"  # main at 28ba614


def test_the_writer_makes_an_envelope_only_for_a_session_new_to_the_database(tmp_path, small_batches, monkeypatch):
    """Each session's envelope is made once, when it is stored: none for a session a batch
    shares with one stored before, in this transaction or an earlier one (81,000 made for
    200,000 records of the benchmark's log)."""
    made: list[Envelope] = []
    first_envelopes = ScoreBatch.first_envelopes
    monkeypatch.setattr(ScoreBatch, "first_envelopes", lambda self, *asked: made.extend(
        found := first_envelopes(self, *asked)) or found)
    log = write_jsonl(tmp_path / "runs.jsonl", run_log(4, 10))
    sessions = next(found for table, found in imported(tmp_path, "counted", log) if table == "sessions")
    assert len(made) == len(sessions) == 14
    assert {(envelope.timestamp, envelope.ts_us) for envelope in made} == {row[2:0:-1] for row in sessions}


def normalised_batches(log: Path, size: int) -> list:
    """Every batch of ``size`` lines of the log read and normalised in turn, as one worker does."""
    lines = log.read_bytes().splitlines()
    normaliser = Normaliser(reader(FormatOptions("openai-evals"), resolve_sources([str(log)])[0]))
    return [summary(normaliser.normalise(LineBatch(start + 1, lines[start:start + size], 0)))
            for start in range(0, len(lines), size)]


@pytest.mark.parametrize("size", [5, 23, 400])
def test_gradings_read_as_columns_normalise_as_their_records(tmp_path, monkeypatch, size):
    log = write_jsonl(tmp_path / "runs.jsonl", run_log(4, 10))
    columns = normalised_batches(log, size)
    monkeypatch.setattr(openai_evals, "graded_columns", lambda *_: None)
    assert columns == normalised_batches(log, size)


def test_a_gradings_time_is_read_once(tmp_path, monkeypatch):
    """The reader reads each grading's time into microseconds; only an envelope made anew (a
    new session's, and the second eval's first: its category differs) parses its text again
    (timestamp_us), and no time is checked against its text (own_time)."""
    parsed: list[str] = []
    timestamp_us = envelope_module.timestamp_us

    def counted(text):
        parsed.append(text)
        return timestamp_us(text)

    def checked(*_):
        raise AssertionError("a time was checked against its text")
    monkeypatch.setattr(envelope_module, "timestamp_us", counted)
    monkeypatch.setattr(envelope_module.Envelope, "own_time", checked)
    log = write_jsonl(tmp_path / "runs.jsonl", run_log(4, 10))
    batches = normalised_batches(log, 40)
    sessions = {row[0] for batch in batches for row in batch[0]}
    assert len(sessions) == 14 and len(parsed) == 14 + 1


def test_a_refused_line_among_gradings_read_as_columns_is_named_by_its_line_and_field(tmp_path, db):
    events = run_log(2, 6)
    events[22]["created_at"], events[34]["run_id"] = "yesterday", "another run"
    assert (events[22]["type"], events[34]["type"]) == ("metrics", "sampling")
    log = write_jsonl(tmp_path / "runs.jsonl", events)
    lines = log.read_bytes().splitlines()
    parsed = reader(FormatOptions("openai-evals"), resolve_sources([str(log)])[0])(LineBatch(1, lines, 0))
    refused = [(23, "created_at"), (35, "run_id")]  # the sample of line 35 is graded still, its length unknown
    assert len(parsed.columns) == 14 - 1 and [(bad.line_number, bad.field) for bad in parsed.rejected] == refused
    summary = import_files(db, [str(log)], options=FormatOptions("openai-evals"))
    assert (summary.total("inserted"), summary.total("rejected")) == (13, 2)
    assert [(bad.line_number, bad.field) for bad in summary.files[0].rejected_lines] == refused


def odd_log(path: Path, runs: int) -> Path:
    """run_log's events written with odd lines among them: CRLF and blank-padded lines, an
    empty line, a byte order mark after a cat, JSON cut short, a metrics event of a score of
    the wrong type."""
    lines = [json.dumps(event).encode() for event in run_log(runs, 10)]
    lines[5] += b"\r"
    lines[9] = b"  " + lines[9] + b"\t"
    lines.insert(12, b"")
    lines[30] = b"\xef\xbb\xbf" + lines[30]
    lines[41] = lines[41][:-7]
    bad = next(number for number, line in enumerate(lines) if b'"metrics"' in line and number > 60)
    lines[bad] = lines[bad].replace(b'"score": ', b'"score": "x", "was": ')
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def rejected(db_file: Path) -> list:
    import sqlite3

    with sqlite3.connect(db_file) as connection:
        return connection.execute("SELECT line_number, field, reason FROM rejected_lines ORDER BY id").fetchall()


def test_a_log_with_odd_lines_then_grown_stores_and_rejects_what_main_did(tmp_path, small_batches):
    """Lines read as they are (no stripped copy) or stripped first, a batch msgspec refuses
    read a line at a time: the rows stored and the lines rejected (each named once, by its
    number) are main's; the log grown by two runs is read whole again, and stores what
    main stored then."""
    log = odd_log(tmp_path / "runs.jsonl", 2)
    db_file = tmp_path / "odd.db"
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    import_files(db, [str(log)], options=FormatOptions("openai-evals"))
    first = dump(db_file)
    odd_log(log, 4)
    import_files(db, [str(log)], options=FormatOptions("openai-evals"))
    db.engine.dispose()
    assert [(line, field) for line, field, _ in rejected(db_file)] == [(42, None), (69, "data.score")]
    assert [len(found) for _, found in first] == [12, 9, 21, 4, 1]
    assert (digest(first), digest(dump(db_file)), digest(rejected(db_file))) == (
        "60c4b2e9a046cb36", "3706dac3daf0f881", "cfca2a7acf0fd82b")  # main at d73455a
