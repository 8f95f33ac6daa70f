"""A rejected line keeps what finds it in its file (line number, byte length, a keyed hash,
where parsing stopped, its field and reason, the known values that are not free text) and
never its text: a query planted by every route that once leaked (issue 14, item 3) is in
no byte of the database, its WAL, a backup, the PostgreSQL data directory, nor any output
of ``import``, ``ingest`` or ``rejected``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from council_db.contract.fields import METADATA_MAX_CHARS, METADATA_VALUE_MAX_CHARS
from council_db.ingest import pipeline
from tests.conftest import BACKENDS, Cli, record, session, write_jsonl

PLANTED = "PLANTED-QUERY-c41d: is the rash on my arm contagious"
MARK = b"PLANTED-QUERY-c41d"


def _line(**changes) -> str:
    return json.dumps(record(**{"session_id": "leak", **changes}))


def leaking_lines() -> list[str]:
    """The query in each place a rejected line once showed it, one line each."""
    cut = _line(position=1)
    cut = cut[:cut.index('"leak"') + 3]  # inside a string: every quote after it is shifted by one
    with_query = json.dumps({**record(session_id="leak", position=2), "query": PLANTED})
    return [
        cut + with_query,  # a writer's crash: a line cut short, then the next one (the query outside quotes)
        '{"session_id": "leak", "' + PLANTED + '": broken',  # a string followed by ":" in a broken line
        '{"session_id": "leak, "query": "' + PLANTED + '", "position": 3}',  # quote pairs shifted by one
        PLANTED,  # unquoted text
        json.dumps(PLANTED),  # one JSON string (its value was echoed in the reason)
        json.dumps({PLANTED: 1, **record(session_id="leak", position=4, score_value="bad")}),  # the query as a key
        json.dumps([PLANTED, record(session_id="leak")]),  # a list
        _line(position=5, timestamp=PLANTED),  # echoed by the time check
        _line(position=6, score_scale=PLANTED),  # echoed by the scale check
        _line(position=7, schema_version=PLANTED),  # echoed by the version check
        _line(position=8, session_id=PLANTED * 12),  # too long: echoed as what was got
        _line(position=9, council_config_version=[PLANTED]),  # a list for a string
        _line(position=10, score_value=PLANTED),  # a string for a number
        _line(position=11, query_metadata={"category": PLANTED}, score_value="bad"),  # metadata beside a bad field
        _line(position=12, query_metadata={"category": PLANTED * 3}),  # a known metadata value over its cap
        _line(position=13, query_metadata={"note": PLANTED * 1_500}),  # metadata over its cap
        _line(position=14, query_metadata=PLANTED),  # the query for the object
        _line(position=15, timestamp=PLANTED + "\u0000"),  # a NUL character
        _line(position=16, prompt=PLANTED, position_extra=1)[:-1] + ', "consent_level": 9}',  # query beside a bad one
    ]


def planted_session() -> dict:
    return {"session_id": "ingested", "stage1_results": [{"model": "m/a", "response": "x"}],
            "stage2_results": [{"model": "m/b", "parsed_ranking": {"ranking": ["Response A", PLANTED]}}],
            "label_to_model": {"Response A": "m/a"}, "query": "fine", "consent_level": 1}


def ingest_cases() -> list[dict]:
    """Sessions whose query (or text beside it) is wrong: ``ingest`` echoed it on stderr."""
    good = planted_session()
    return [
        {**good, "query": [PLANTED]},  # a wrongly typed query
        {**good, "query": {"text": PLANTED}},
        {**good, "session_id": PLANTED * 12},  # too long
        {**good, "label_to_model": {"Response A": [PLANTED]}},  # a wrongly typed label value
        {**good, "timestamp": PLANTED},  # refused by the record's time check
        good,  # a ranking label that is the query: dropped with a warning
    ]


@pytest.fixture
def parallel(monkeypatch):
    """Worker processes read the file, as for a large one."""
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "SEGMENT_BYTES", 2_000)


def _commands(cli: Cli, planted: Path, tmp_path: Path) -> list[bytes]:
    """Every output of import, ingest and rejected for the planted input."""
    outputs = []
    for args in (["import", "--format", "json", str(planted)], ["import", str(planted)],
                 *(["rejected", "--format", fmt] for fmt in ("table", "json", "jsonl", "csv"))):
        result = cli(*args)
        assert result.exit_code in (0, 3), (args, result.output, result.exception)
        outputs += [result.stdout_bytes, result.stderr_bytes]
    for number, case in enumerate(ingest_cases()):
        path = tmp_path / f"session-{number}.json"
        path.write_text(json.dumps(case))
        result = cli("ingest", str(path), "--format", "json")
        outputs += [result.stdout_bytes, result.stderr_bytes, str(result.exception or "").encode()]  # main prints it
    return outputs


def _files(directory: Path, skip: set[str]) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in directory.rglob("*")
            if path.is_file() and path.name not in skip}


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("workers", [False, True], ids=["in-process", "worker-processes"])
def test_a_query_planted_by_every_route_that_leaked_is_nowhere_in_storage_or_output(
        request, tmp_path, backend, db_url, workers):
    if workers:
        request.getfixturevalue("parallel")
    planted = write_jsonl(tmp_path / "planted.jsonl", [*session("good"), *leaking_lines(), *session("after")])
    cli = Cli(db_url)
    assert cli("db", "upgrade").exit_code == 0
    holder = sqlite3.connect(db_url.removeprefix("sqlite:///")) if backend == "sqlite" else None
    if holder:  # an open reader: the WAL stays on disk to be scanned
        holder.execute("SELECT count(*) FROM scores").fetchone()

    outputs = _commands(cli, planted, tmp_path)

    if backend == "sqlite":
        assert cli("db", "backup", str(tmp_path / "backup.db")).exit_code == 0
        stored = _files(tmp_path, {"planted.jsonl"} | {p.name for p in tmp_path.glob("session-*.json")})
        assert {"council.db", "council.db-wal", "backup.db"} <= {Path(name).name for name in stored}
        holder.close()
    else:
        cluster = request.getfixturevalue("pg_cluster")
        cluster._admin("CHECKPOINT")
        stored = _files(cluster.directory, set())
    for name, data in stored.items():
        assert MARK not in data, f"the planted query is in {name}"
    for output in outputs:
        assert MARK not in output, output.decode(errors="replace")[:2000]
    rejected = json.loads(cli("rejected", "--format", "json").stdout)
    assert len(rejected) == len(leaking_lines()), "every bad line is kept for inspection"


def test_a_rejected_line_keeps_what_finds_it_in_its_file_but_none_of_its_text(cli, tmp_path):
    lines = leaking_lines()
    planted = write_jsonl(tmp_path / "planted.jsonl", [*session("good"), *lines])
    cli("import", str(planted))
    shown = {row["line_number"]: row for row in json.loads(cli("rejected", "--format", "json").stdout)}
    first = 17  # after the 16 lines of the good session

    cut = shown[first]
    line = lines[0].encode()
    assert cut["field"] is None and cut["byte_length"] == len(line)
    assert cut["error_column"] == line.index(b'{"schema_version"', 1) + 3, "where parsing stopped, in bytes"
    assert f"at byte {cut['error_column']}" in cut["reason"] and cut["reason"].startswith("not valid JSON")
    assert len(cut["line_hash"]) == 16 and cut["known_values"] is None

    as_key = shown[first + 5]
    assert as_key["field"] == "score_value" and as_key["unknown_keys"] == 1
    known = json.loads(as_key["known_values"])
    assert known["session_id"] == "leak" and known["model_id"] == "anthropic/claude-3-5-sonnet"
    assert known["position"] == 4 and known["score_value"] == {"type": "string"}
    assert known["query_metadata"] == {"type": "object"}, "metadata may hold anything: its type only"

    assert shown[first + 4]["reason"].startswith("not a JSON object (got a string of 52 characters)")
    assert json.loads(shown[first + 7]["known_values"])["timestamp"] == {"type": "string"}
    assert "string of 624 characters" in shown[first + 10]["reason"]

    table = cli("rejected", "--wide").stdout  # the 80-column table shows import, line, field and reason
    assert "line_hash" in table and "byte_length" in table and "error_column" in table


def test_the_line_hash_is_keyed_by_the_database_so_a_guess_cannot_be_checked_without_it(tmp_path):
    line = PLANTED
    hashes = []
    for name in ("one.db", "two.db"):
        cli = Cli(tmp_path / name)
        for _ in range(2):  # the same file twice: the second import re-reads it whole after a change
            path = write_jsonl(tmp_path / f"{name}-{_}.jsonl", [line])
            cli("import", str(path))
        hashes.append([row["line_hash"] for row in json.loads(cli("rejected", "--format", "json").stdout)])

    assert hashes[0][0] == hashes[0][1], "the same line has the same hash in one database"
    assert hashes[0][0] != hashes[1][0], "and another in another database"
    assert hashlib.sha256(line.encode()).hexdigest()[:16] not in hashes[0] + hashes[1]


def test_query_metadata_and_its_values_are_capped_naming_field_and_cap(cli, tmp_path, db):
    lines = [_line(position=0, query_metadata={"category": "c" * (METADATA_VALUE_MAX_CHARS + 1)}),
             _line(position=1, query_metadata={"category": "c" * METADATA_VALUE_MAX_CHARS}),
             _line(position=2, query_metadata={"note": "n" * METADATA_MAX_CHARS}),
             _line(position=3, query_metadata={"category": "x" * 10_000_000}),
             _line(position=4, query_metadata={"note": "\u0001" * 10_900}),  # 65,411 characters as JSON
             _line(position=5, query_metadata={"note": "\u0001" * 10_930})]  # 65,591
    result = cli("import", str(write_jsonl(tmp_path / "big.jsonl", lines)))

    assert result.exit_code == 3
    shown = {row["line_number"]: row for row in json.loads(cli("rejected", "--format", "json").stdout)}
    assert set(shown) == {1, 3, 4, 6}
    assert all(row["field"] == "query_metadata" for row in shown.values())
    assert f"at most {METADATA_VALUE_MAX_CHARS} characters" in shown[1]["reason"]
    assert f"at most {METADATA_MAX_CHARS:,} characters" in shown[3]["reason"]
    assert Path(db.engine.url.database).stat().st_size < 1_000_000, "the 10 MB value is not stored"
