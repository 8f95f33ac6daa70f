"""An import killed with SIGKILL at any moment leaves a sound database holding a prefix of
the file, and running it again ends with exactly the file's records: none lost, none doubled.

Real processes, real files: `council-db import` on a simulated file, killed at random
moments. The files are big enough for the import to take a second or more, one of them
above the size that takes the worker-process path. The long version, with many more kills,
is benchmarks/crash_import.py.
"""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from council_db.ingest import pipeline
from tests.reliability import (
    council_db_argv,
    file_records,
    integrity,
    is_prefix,
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
