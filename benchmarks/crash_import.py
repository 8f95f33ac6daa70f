"""Crash safety, the long run: `council-db import` SIGKILLed at random moments, many times.

    python benchmarks/crash_import.py [--sessions 4000] [--kills 50] [--commit-every 50000] [--seed 1]

After every kill: `PRAGMA integrity_check` is ok, and the database holds exactly the file's
first N records, once each (an import commits in file order). After the last kill the import
is run to completion and must hold exactly the file's records. The short version is
tests/ingest/test_crash_safety.py. Prints the figures with the data size.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' helpers

from council_db.ingest import pipeline  # noqa: E402
from tests.reliability import (  # noqa: E402
    council_db_argv,
    file_records,
    integrity,
    is_prefix,
    run_and_kill,
    simulated_file,
    stored_records,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=4_000, help="simulated sessions (16 records each)")
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--commit-every", type=int, default=50_000, help="the importer's lines per commit")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        source = simulated_file(folder / "bias_metrics.jsonl", args.sessions, args.seed)
        expected = file_records(source)
        size = source.stat().st_size
        path = "worker processes" if size >= pipeline.PARALLEL_MIN_BYTES else "in-process"
        print(f"file: {len(expected):,} records, {size / 1e6:.1f} MB ({path} import); "
              f"commit every {args.commit_every:,} lines")
        start = time.monotonic()
        reference = run_and_kill(council_db_argv(folder / "reference.db", "import", "-q", str(source),
                                                 commit_every=args.commit_every), after=600)
        whole = time.monotonic() - start
        assert reference.returncode == 0, reference.stderr.decode()
        print(f"an uninterrupted import takes {whole:.2f} s (process start included)")

        db_path = folder / "council.db"
        argv = council_db_argv(db_path, "import", "-q", str(source), commit_every=args.commit_every)
        killed, finished, prefixes = 0, 0, Counter()
        for round_number in range(args.kills):
            if round_number % 10 == 0 and db_path.exists():  # start again now and then: kills on a new file too
                for leftover in folder.glob("council.db*"):
                    leftover.unlink()
            outcome = run_and_kill(argv, after=rng.uniform(0.05, whole))
            assert integrity(db_path) == "ok", f"round {round_number}: integrity check failed"
            stored = stored_records(db_path)
            assert is_prefix(stored, expected), f"round {round_number}: not a prefix of the file"
            killed += outcome.killed
            finished += not outcome.killed
            prefixes[sum(stored.values())] += 1
            if not outcome.killed:  # finished: start the next round from an empty database
                for leftover in folder.glob("council.db*"):
                    leftover.unlink()
        final = run_and_kill(argv, after=600)
        assert final.returncode == 0, final.stderr.decode()
        assert integrity(db_path) == "ok"
        assert stored_records(db_path) == Counter(expected), "records lost or doubled"
        print(f"{killed} imports killed, {finished} finished before their kill; after every one: integrity ok, "
              f"a prefix of the file, nothing doubled")
        print(f"distinct committed states seen after a kill: {len(prefixes)} "
              f"(records stored: {min(prefixes):,} to {max(prefixes):,})")
        print(f"final import: {len(expected):,} records, each stored once, none lost")


if __name__ == "__main__":
    main()
