"""An import killed with SIGKILL at any moment leaves a sound database holding a prefix of
the file, and running it again ends with exactly the file's records: none lost, none doubled.

Real processes, real files: `council-db import` on a simulated file, killed at random
moments. The files are big enough for the import to take a second or more, one of them
above the size that takes the worker-process path. The long version, with many more kills,
is benchmarks/crash_import.py.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections import Counter
from contextlib import suppress

import pytest

from council_db.ingest import pipeline
from tests.reliability import (
    council_db_argv,
    file_records,
    integrity,
    is_prefix,
    kill_after_first_commit,
    run_and_kill,
    simulated_file,
    stored_records,
)

COMMIT_EVERY = 6_000  # lines per committed transaction (the default is 50,000)


def timed_import(argv: list[str]) -> float:
    start = time.monotonic()
    outcome = run_and_kill(argv, after=300)
    assert outcome.returncode == 0, outcome.stderr.decode()
    return time.monotonic() - start


@pytest.mark.parametrize(("sessions", "kills", "parallel"), [(700, 3, False), (2_300, 4, True)],
                         ids=["in-process", "worker-processes"])
def test_an_import_killed_at_random_moments_ends_with_every_record_once(tmp_path, sessions, kills, parallel):
    source = simulated_file(tmp_path / "bias_metrics.jsonl", sessions, seed=sessions)
    assert (source.stat().st_size >= pipeline.PARALLEL_MIN_BYTES) is parallel
    expected = file_records(source)
    argv = council_db_argv(tmp_path / "council.db", "import", "--quiet", str(source), commit_every=COMMIT_EVERY)
    whole = timed_import(council_db_argv(tmp_path / "reference.db", "import", "--quiet", str(source),
                                         commit_every=COMMIT_EVERY))
    rng = random.Random(sessions)

    interrupted = []
    for _ in range(kills):
        outcome = run_and_kill(argv, after=rng.uniform(0.05, 0.9 * whole))
        assert integrity(tmp_path / "council.db") == "ok"
        stored = stored_records(tmp_path / "council.db")
        assert is_prefix(stored, expected), "after a crash the database holds the file's first N records, once each"
        if not outcome.killed:
            break
        interrupted.append(sum(stored.values()))

    assert interrupted, "no run was interrupted: the kills came too late"
    final = run_and_kill(argv, after=300)
    assert final.returncode == 0, final.stderr.decode()
    assert b"Traceback" not in final.stderr
    assert integrity(tmp_path / "council.db") == "ok"
    assert stored_records(tmp_path / "council.db") == Counter(expected)


def with_bad_lines(path, every: int) -> list[int]:
    """Put a bad line after every ``every`` good lines of the file; their line numbers."""
    good = path.read_bytes().splitlines(keepends=True)
    out, bad_numbers = [], []
    for index, line in enumerate(good):
        if index and index % every == 0:
            out.append(b"not a record\n")
            bad_numbers.append(len(out))
        out.append(line)
    path.write_bytes(b"".join(out))
    return bad_numbers


def test_an_import_killed_after_its_first_commit_resumes_there_and_keeps_each_bad_line_once(tmp_path):
    source = simulated_file(tmp_path / "bias_metrics.jsonl", 600, seed=5)
    expected = file_records(source)
    bad_numbers = with_bad_lines(source, every=700)
    db_path = tmp_path / "council.db"
    argv = council_db_argv(db_path, "import", "--quiet", str(source), commit_every=500)

    killed = kill_after_first_commit(argv, db_path)
    assert killed.killed, "the import ended before the kill"
    final = run_and_kill(argv, after=120)
    assert final.returncode == 3, final.stderr.decode()

    connection = sqlite3.connect(db_path)
    try:
        rows = connection.execute("SELECT status, start_line, end_line, inserted, rejected FROM imports "
                                  "ORDER BY id").fetchall()
        numbers = [n for (n,) in connection.execute("SELECT line_number FROM rejected_lines")]
    finally:
        connection.close()
    (dead, *_, dead_end, _, _), (done, resumed_from, end, _, _) = rows
    assert (dead, done) == ("interrupted", "complete")
    assert resumed_from == dead_end > 0, "the second import starts where the first one's last commit ended"
    assert end == len(expected) + len(bad_numbers)
    assert Counter(numbers) == Counter(bad_numbers), "every bad line is kept exactly once"
    assert sum(row[4] for row in rows) == len(bad_numbers)
    assert sum(row[3] for row in rows) == len(expected)
    assert stored_records(db_path) == Counter(expected)
    assert integrity(db_path) == "ok"


def damage_a_page_in_the_middle(db_path) -> None:
    """Fold the WAL into the file, then overwrite the header of a page halfway through it."""
    connection = sqlite3.connect(db_path)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    middle = db_path.stat().st_size // page_size // 2
    with db_path.open("r+b") as handle:
        handle.seek(middle * page_size)
        handle.write(b"\xee" * 64)


def test_importing_into_a_database_damaged_after_a_killed_import_exits_1_naming_the_fix(tmp_path):
    db_path = tmp_path / "council.db"
    earlier = simulated_file(tmp_path / "earlier.jsonl", 600, seed=6)
    assert run_and_kill(council_db_argv(db_path, "import", "--quiet", str(earlier)), after=120).returncode == 0
    source = simulated_file(tmp_path / "bias_metrics.jsonl", 600, seed=7)
    argv = council_db_argv(db_path, "import", "--quiet", str(source), commit_every=500)
    assert kill_after_first_commit(argv, db_path).killed
    damage_a_page_in_the_middle(db_path)  # among the earlier file's pages, which this import never reads
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        integrity(db_path)

    again = run_and_kill(argv, after=120)
    assert again.returncode == 1, again.stderr.decode()
    lines = again.stderr.decode().splitlines()
    assert len(lines) == 1 and str(db_path) in lines[0] and "damaged" in lines[0], lines
    assert "council-db db restore" in lines[0] and "council-db db backup" in lines[0]


def statuses_after_a_later_import(db_path, tmp_path) -> list[tuple[str, str]]:
    """(source kind, status) of every import, after another file is imported: the import that
    finds a killed one marks it."""
    later = simulated_file(tmp_path / "later.jsonl", 5, seed=7)
    assert run_and_kill(council_db_argv(db_path, "import", "--quiet", str(later)), after=120).returncode == 0
    connection = sqlite3.connect(db_path)
    try:
        return connection.execute("SELECT source_kind, status FROM imports ORDER BY id").fetchall()
    finally:
        connection.close()


def test_a_killed_import_from_a_pipe_is_marked_interrupted_by_the_next_import(tmp_path):
    """A FIFO is read once, as stdin is: there is nothing to resume, but its row must not stay
    `running` for ever."""
    source = simulated_file(tmp_path / "bias_metrics.jsonl", 600, seed=6)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def feed() -> None:
        with suppress(BrokenPipeError), fifo.open("wb") as out:  # the reader is killed mid-file
            out.write(source.read_bytes())

    feeder = threading.Thread(target=feed)
    feeder.start()
    db_path = tmp_path / "council.db"
    killed = kill_after_first_commit(council_db_argv(db_path, "import", "--quiet", str(fifo), commit_every=500),
                                     db_path)
    feeder.join(timeout=30)
    assert killed.killed, "the import ended before the kill"
    assert statuses_after_a_later_import(db_path, tmp_path) == [("stream", "interrupted"), ("file", "complete")]


def test_a_killed_copy_is_marked_interrupted_by_the_next_import_into_its_target(tmp_path):
    source_db = tmp_path / "laptop.db"
    data = simulated_file(tmp_path / "bias_metrics.jsonl", 600, seed=8)
    assert run_and_kill(council_db_argv(source_db, "import", "--quiet", str(data)), after=120).returncode == 0
    target = tmp_path / "team.db"
    copying = council_db_argv(source_db, "db", "copy", "--to", str(target), "--min-consent", "1", commit_every=500)

    killed = kill_after_first_commit(copying, target)
    assert killed.killed, "the copy ended before the kill"
    assert statuses_after_a_later_import(target, tmp_path) == [("copy", "interrupted"), ("file", "complete")]
