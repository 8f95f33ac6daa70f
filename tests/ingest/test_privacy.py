"""A query planted anywhere in the input never reaches the database file, its WAL, a
backup, an export, or anything a command prints; exports honour each record's consent.

The import runs as a real process and the other commands in-process, while a reader
connection holds the database open so the WAL file stays on disk to be scanned.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from tests.conftest import Cli, record, session, write_jsonl
from tests.reliability import council_db_argv, simulated_file

PLANTED = "PLANTED-QUERY-7f3a: what did my doctor say about my test results?"
MARK = b"PLANTED-QUERY-7f3a"


def planted_lines() -> list:
    """The query wherever a writer might put it: kept records, rejected lines, skipped ones."""
    kept = session("planted", query=PLANTED, prompt={"text": PLANTED}, messages=[PLANTED],
                   query_metadata={"category": "health", "token_bucket": "short", "language": "en",
                                   "query": PLANTED, "history": [PLANTED]})
    return kept + [
        record(session_id="planted", position=9, prompt=PLANTED, score_value="bad"),  # bad field, query beside it
        record(session_id="planted", position=10, query_metadata=PLANTED),  # the query instead of the object
        record(session_id="planted", position=11, query_metadata={"category": [PLANTED]}),  # a list for a string
        record(session_id="planted", position=12, messages=[{"role": "user", "content": PLANTED}]),  # kept
        '{"session_id": "planted", "query": ["' + PLANTED + '", broken',  # not even JSON
        record(session_id="planted", position=13, consent_level=0, query=PLANTED),  # never to be kept
    ]


def test_a_planted_query_never_reaches_the_database_its_wal_a_backup_an_export_or_any_output(tmp_path):
    db_path = tmp_path / "council.db"
    planted = write_jsonl(tmp_path / "planted.jsonl", planted_lines())
    background = simulated_file(tmp_path / "background.jsonl", 30, seed=5)  # enough sessions for a full report
    assert Cli(db_path)("db", "upgrade").exit_code == 0
    holder = sqlite3.connect(db_path)  # an open reader: the WAL is kept, not folded back and deleted
    holder.execute("SELECT count(*) FROM scores").fetchone()

    first = subprocess.run(council_db_argv(db_path, "import", "--format", "json", str(planted), str(background)),
                           capture_output=True, timeout=120)
    summary = json.loads(first.stdout)
    assert first.returncode == 3 and (summary["rejected"], summary["skipped"]) == (4, 1)
    assert summary["inserted"] == 17 + 30 * 16
    outputs = [first.stdout, first.stderr]
    cli = Cli(db_path)  # the same output in-process, faster than a process per command
    for args in (["import", str(planted)], ["stats", "--format", "json"], ["sessions", "--format", "csv"],
                 ["rejected"], ["rejected", "--format", "json"], ["export", "-o", str(tmp_path / "out.jsonl")],
                 ["export", "--format", "csv"], ["export", "--min-consent", "2"], ["bias-report"],
                 ["bias-report", "--format", "json"], ["bias-report", "--format", "markdown"],
                 ["audit", "planted", "--format", "json"], ["audit", "planted"],
                 ["db", "backup", str(tmp_path / "backup.db")]):
        result = cli(*args)
        assert result.exit_code in (0, 3), (args, result.output, result.exception)
        outputs += [result.stdout_bytes, result.stderr_bytes]

    wal = Path(f"{db_path}-wal")
    assert wal.stat().st_size > 0, "the WAL is there to be scanned"
    for private in (db_path, wal, Path(f"{db_path}-shm"), tmp_path / "backup.db"):
        assert private.stat().st_mode & 0o777 == 0o600, private.name
    scanned = {path.name: path.read_bytes() for path in tmp_path.iterdir()
               if path.is_file() and path.name not in ("planted.jsonl", "background.jsonl")}
    holder.close()
    assert {"council.db", "council.db-wal", "backup.db", "out.jsonl"} <= set(scanned)
    for name, data in scanned.items():
        assert MARK not in data, f"the planted query is in {name}"
    for output in outputs:
        assert MARK not in output
    assert b'"score_value": {"type": "string"}' in scanned["council.db"] + scanned["council.db-wal"], \
        "rejected lines are kept, their free text by type only"


def test_export_honours_each_records_own_consent_level_not_only_its_sessions(cli, tmp_path):
    lines = session("mixed", consent_level=1)
    for line in lines[:4]:
        line["consent_level"] = 3
    lines.append(record(session_id="mixed", position=7, consent_level=0))
    cli("import", str(write_jsonl(tmp_path / "in.jsonl", lines)))

    everything = [json.loads(line) for line in cli("export").stdout.splitlines()]
    shareable = [json.loads(line) for line in cli("export", "--min-consent", "2").stdout.splitlines()]

    assert len(everything) == 16 and all(r["consent_level"] in (1, 3) for r in everything), "level 0 is never kept"
    assert sorted(json.dumps(r) for r in shareable) == sorted(json.dumps(r) for r in lines[:4])
