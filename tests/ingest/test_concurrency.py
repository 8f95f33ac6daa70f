"""Several importers and report readers on one SQLite file at once: every record is stored
once, every process exits 0, and "database is locked" never reaches the user.

Real processes racing on a new database file: two files, each imported by two processes
(one process reads both), one file big enough for the worker-process path,
while `bias-report` and `stats` read in a loop.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter

from council_db.ingest import pipeline
from tests.reliability import council_db_argv, file_records, integrity, simulated_file, stored_records


def test_concurrent_importers_and_readers_store_every_record_once_without_locked_errors(tmp_path):
    big = simulated_file(tmp_path / "big.jsonl", 2_400, seed=11)
    small = simulated_file(tmp_path / "small.jsonl", 600, seed=12)
    assert big.stat().st_size >= pipeline.PARALLEL_MIN_BYTES > small.stat().st_size
    db_path = tmp_path / "shared.db"
    imports = [["import", "-q", str(big)], ["import", "-q", str(small)], ["import", "-q", str(small), str(big)]]

    importers = [subprocess.Popen(council_db_argv(db_path, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for args in imports]
    reads = []
    while any(process.poll() is None for process in importers) or len(reads) < 2:
        if not db_path.exists():  # a command that only reads never creates the database: an importer does
            time.sleep(0.01)
            continue
        for args in (["bias-report", "--format", "json"], ["stats", "--format", "json"]):
            reads.append(subprocess.run(council_db_argv(db_path, *args), capture_output=True, timeout=120))
    finished = [(process.wait(timeout=120), *process.communicate()) for process in importers]

    for code, _, stderr in finished:
        assert code == 0, stderr.decode()
        assert b"locked" not in stderr and b"Traceback" not in stderr
    for read in reads:
        assert read.returncode == 0, read.stderr.decode()
        assert b"locked" not in read.stderr and b"Traceback" not in read.stderr
        json.loads(read.stdout)
    assert integrity(db_path) == "ok"
    expected = Counter(file_records(big) + file_records(small))
    assert max(expected.values()) == 1, "the two files share no record"
    assert stored_records(db_path) == expected
