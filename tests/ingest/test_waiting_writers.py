"""A writer waits for a running import however long it holds SQLite's write lock (issue 27,
item 19: "database is locked" beside a --strict import, which holds the lock for its whole
file), saying so once; a writer that is no import still stops it after the busy timeout,
with one line. Real processes; the busy timeout is cut to 0.3 s so that waiting past it
takes a moment, not 30 s (the logic is the same)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import Cli, simulated, write_jsonl
from tests.reliability import council_db_argv, file_records, stored_records

WITH_BUSY_TIMEOUT_MS = (
    "import sys; import council_db.store.database as database; "
    "database.BUSY_TIMEOUT_MS = int(sys.argv.pop(1)); "
    "from council_db.cli.app import main; sys.argv[0] = 'council-db'; main()"
)


def impatient(db_path: Path, *args: str) -> subprocess.Popen:
    """council-db whose busy timeout is 0.3 s."""
    return subprocess.Popen([sys.executable, "-c", WITH_BUSY_TIMEOUT_MS, "300", "--db", str(db_path), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_an_import_waits_for_a_strict_import_past_the_busy_timeout_and_both_store_everything(tmp_path):
    db_path = tmp_path / "council.db"
    strict_lines = write_jsonl(tmp_path / "strict.jsonl", simulated(sessions=20, seed=1)[0]).read_bytes()
    other = write_jsonl(tmp_path / "other.jsonl", simulated(sessions=5, seed=2)[0])
    strict = subprocess.Popen(council_db_argv(db_path, "import", "-q", "--strict", "-"), stdin=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        strict.stdin.write(strict_lines[:1000])  # its transaction is open, its file not yet ended
        strict.stdin.flush()
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".council.db.import-*.lock")):
            assert time.monotonic() < deadline and strict.poll() is None
            time.sleep(0.05)
        waiting = impatient(db_path, "import", "-q", str(other))
        said = waiting.stderr.readline()  # once its busy timeout has passed
        time.sleep(1.5)  # five more
        assert waiting.poll() is None, waiting.communicate()[1].decode()

        strict.stdin.write(strict_lines[1000:])
        strict.stdin.close()
        assert strict.wait(timeout=60) == 0, strict.stderr.read().decode()
        _, stderr = waiting.communicate(timeout=60)
    finally:
        strict.kill()
    assert said.decode().startswith("waiting for the running import 1 to finish writing")
    assert waiting.returncode == 0, stderr.decode()
    assert b"database" not in stderr and b"Traceback" not in stderr, "nothing more is said"
    assert sum(stored_records(db_path).values()) == len(file_records(other)) + 20 * 16


def test_a_writer_that_is_no_import_stops_an_import_after_the_busy_timeout_with_one_line(tmp_path):
    db_path = tmp_path / "council.db"
    first = write_jsonl(tmp_path / "first.jsonl", simulated(sessions=1, seed=1)[0])
    assert Cli(db_path)("import", "-q", str(first)).exit_code == 0
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # as sqlite3's shell in a transaction would
    try:
        _, stderr = impatient(db_path, "import", "-q", str(first)).communicate(timeout=60)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert stderr.decode().splitlines() == [
        f"error: database error: database is locked ({db_path}); another process held it for 30 s: try again when "
        "that process has finished"]
