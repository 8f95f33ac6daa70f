"""Helpers for the reliability tests and their long-run scripts: simulated files, council-db
in real processes that can be killed, and checks of what a database holds afterwards.

Records are compared as canonical JSON text (sorted keys): two records are the same when
every one of llm-council's 13 fields is the same, so "present once" means natural key and
values alike.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from council_db.outlets.export import ExportFilter, records
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.store.database import open_database

# council-db's own entry point, with the importer's commit interval set from argv[1]: a
# smaller interval gives a kill more committed states to land between (the logic is the same).
IMPORT_WITH_COMMIT_EVERY = (
    "import sys; import council_db.ingest.importer as importer; "
    "importer.COMMIT_EVERY_LINES = int(sys.argv.pop(1)); "
    "from council_db.cli.app import main; sys.argv[0] = 'council-db'; main()"
)


def simulated_file(path: Path, sessions: int, seed: int) -> Path:
    with path.open("wb") as out:
        write_jsonl(SimulationConfig(sessions=sessions, seed=seed), out)
    return path


def canonical(record: dict) -> str:
    return json.dumps(record, sort_keys=True)


def file_records(path: Path) -> list[str]:
    """The file's records in file order (every simulated line is valid, consent level 1)."""
    with path.open("rb") as lines:
        return [canonical(json.loads(line)) for line in lines if line.strip()]


def stored_records(db_path: Path) -> Counter:
    """Every stored record, counted (a count above 1 would be a doubled record)."""
    db = open_database(f"sqlite:///{db_path}", notify=lambda _: None)
    try:
        return Counter(canonical(record) for record in records(db, ExportFilter()))
    finally:
        db.engine.dispose()


def integrity(db_path: Path) -> str:
    connection = sqlite3.connect(db_path, timeout=30)
    try:
        return "; ".join(row[0] for row in connection.execute("PRAGMA integrity_check"))
    finally:
        connection.close()


def is_prefix(stored: Counter, expected: list[str]) -> bool:
    """True when the stored records are exactly the first N records of the file, once each:
    an import commits in file order, so whatever survives a crash is a prefix."""
    return stored == Counter(expected[:sum(stored.values())])


def council_db_argv(db_path: Path, *args: str, commit_every: int | None = None) -> list[str]:
    if commit_every is None:
        return [sys.executable, "-m", "council_db", "--db", str(db_path), *args]
    return [sys.executable, "-c", IMPORT_WITH_COMMIT_EVERY, str(commit_every), "--db", str(db_path), *args]


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@dataclass
class Outcome:
    killed: bool
    returncode: int
    stdout: bytes
    stderr: bytes


def run_and_kill(argv: list[str], after: float, *, orphan_wait: float = 15.0) -> Outcome:
    """Run ``argv`` in a new process group and SIGKILL its main process after ``after``
    seconds, as a crash or the OOM killer would (unless it ended first). Worker processes it
    forked must then end on their own (they find their pipe closed); any still running
    after ``orphan_wait`` seconds are killed and reported."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=after)
        return Outcome(False, process.returncode, stdout, stderr)
    except subprocess.TimeoutExpired:
        pass
    os.kill(process.pid, signal.SIGKILL)
    deadline = time.monotonic() + orphan_wait
    try:  # forked workers share the output pipes: this also waits for them to end
        stdout, stderr = process.communicate(timeout=orphan_wait)
        while _group_alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    except subprocess.TimeoutExpired:
        stdout = stderr = b""
    if _group_alive(process.pid):
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"worker processes outlived the killed importer {process.pid} by {orphan_wait} s")
    return Outcome(True, process.returncode, stdout, stderr)


FIRST_COMMIT = "SELECT 1 FROM imports WHERE status = 'running' AND end_line > start_line"


def _first_commit_seen(db_path: Path) -> bool:
    """True once an import in progress has committed progress (its row shows lines read)."""
    try:
        connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1)
    except sqlite3.OperationalError:  # not created yet
        return False
    try:
        return connection.execute(FIRST_COMMIT).fetchone() is not None
    except sqlite3.OperationalError:  # no schema yet, or busy
        return False
    finally:
        connection.close()


def _first_commit_seen_on_server(url: str) -> bool:
    import psycopg

    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as connection:
        try:
            return connection.execute(FIRST_COMMIT).fetchone() is not None
        except psycopg.errors.UndefinedTable:  # no schema yet
            return False


def kill_after_first_commit(argv: list[str], db: Path | str, *, timeout: float = 60.0) -> Outcome:
    """Run an import of ``argv`` into ``db`` (an SQLite file, or a PostgreSQL URL) and SIGKILL
    it as soon as its first commit is visible: the moment a crash leaves the most
    committed-but-unfinished state behind."""
    seen = _first_commit_seen if isinstance(db, Path) else _first_commit_seen_on_server
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + timeout
    while process.poll() is None and not seen(db) and time.monotonic() < deadline:
        time.sleep(0.005)
    killed = process.poll() is None
    if killed:
        os.killpg(process.pid, signal.SIGKILL)
    stdout, stderr = process.communicate()
    return Outcome(killed, process.returncode, stdout, stderr)
