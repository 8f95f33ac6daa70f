"""bias-report's loading, part by part, and export --since, on a store (only read); with
--baseline, paired against another commit's code, run alternately on the same store.

    python benchmarks/bench_loading.py --db FILE [--runs 3] [--baseline DIR]

DIR is another commit's source tree: `git archive COMMIT council_db sql migrations | tar -x -C DIR`.
Each run is a fresh process (`--child`): `council-db bias-report --json` in process, with the
thread CPU of each loading part (the whole-window sums over session_stats, the sample's choice,
the sample's records) and the process's CPU and peak; then `export --since T` over the latest
EXPORT_SESSIONS sessions, its CPU. On a shared machine CPU seconds, not wall, are the figure:
each is the median of --runs, the two codes' runs alternating. The two codes' report JSON (and
export bytes) must be equal, the report's field by field but its generated_at. It prints its
table and the load it ran at (docs/benchmarks.md gives the figures in its text: measured at
load 7 to 9, they are not a table's).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from doc_tables import machine, markdown_table

AS_OF = "--as-of"  # timed cases are pinned to the benchmark's start, so both codes read the same window
CASES = {"whole window": [], "--days 30": ["--days", "30"], "--sessions 1000": ["--sessions", "1000"]}
EXPORT_SESSIONS = 62_500  # the latest sessions export --since reads: 1,000,000 records at 16 a session
PARTS = {"totals": "_part_sums", "sample": "_sample", "records": "fetch_records"}


def _child(db: str, args: list[str], out: str) -> None:
    """One run in this process: the report (or the export) with each loading part's thread CPU."""
    from council_db.analysis.loading import window, window_totals

    cpu: dict[str, float] = defaultdict(float)

    def timed(module, name: str, label: str) -> None:
        original = getattr(module, name)

        def wrapper(*a, **k):
            start = time.thread_time()
            try:
                return original(*a, **k)
            finally:
                cpu[label] += time.thread_time() - start
        setattr(module, name, wrapper)

    for label, name in PARTS.items():
        timed(window_totals if label == "totals" else window, name, label)
    from council_db.cli.app import main

    sys.argv = ["council-db", "--db", db, *args, "-o", out]
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main()
    cpu["process"] = time.process_time() - start
    cpu["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(cpu))


def _run(db: str, args: list[str], out: Path, source: str | None) -> dict[str, float]:
    """A child process's figures; ``source``: the tree its council_db is imported from."""
    env = {**os.environ, "PYTHONPATH": source} if source else {k: v for k, v in os.environ.items()
                                                                if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, __file__, "--child", db, str(out), *args], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _same(a: Path, b: Path, report: bool) -> bool:
    if not report:
        return a.read_bytes() == b.read_bytes()
    first, second = (json.loads(path.read_text()) for path in (a, b))
    for document in (first, second):
        document.pop("generated_at", None)
    return first == second


def _since(db: str) -> str:
    """The time of the EXPORT_SESSIONS-th latest session."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        since, = connection.execute("SELECT timestamp FROM sessions ORDER BY ts_us DESC LIMIT 1 OFFSET ?",
                                    (EXPORT_SESSIONS - 1,)).fetchone()
    return since


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a SQLite store, only read")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="another commit's source tree, run alternately with this one")
    options = parser.parse_args()
    since, as_of = _since(options.db), datetime.now(timezone.utc).isoformat()  # as-of: after every import
    cases = {name: ["bias-report", "--json", *args, *([AS_OF, as_of] if "--days" in args else [])]
             for name, args in CASES.items()}
    cases["export --since T"] = ["export", "--since", since]
    codes = {"this": None, **({"baseline": options.baseline} if options.baseline else {})}
    loads, rows = [os.getloadavg()[0]], []
    with tempfile.TemporaryDirectory() as folder:
        for name, args in cases.items():
            figures: dict[str, list[dict]] = {code: [] for code in codes}
            for _ in range(options.runs):
                for code, source in reversed(codes.items()):  # the baseline first, then this
                    figures[code].append(_run(options.db, args, Path(folder) / code, source))
                    loads.append(os.getloadavg()[0])
            same = "" if len(codes) == 1 else \
                ("equal" if _same(Path(folder) / "this", Path(folder) / "baseline", args[0] != "export") else "DIFFER")
            for code in codes:
                median = {key: statistics.median(run[key] for run in figures[code])
                          for key in ("process", *PARTS, "peak MB") if key in figures[code][0]}
                rows.append([f"`{name}`", code, *(f"{median[key]:.2f} s" if key in median else "-"
                                                  for key in ("process", *PARTS)),
                             f"{median['peak MB']:.0f} MB", same])
                print(" | ".join(rows[-1]), flush=True)
    table = markdown_table(["case", "code", "CPU", "totals' sums", "sample's choice", "sample's records", "peak",
                            "output"], rows, right=range(2, 7))
    with sqlite3.connect(f"file:{options.db}?mode=ro", uri=True) as connection:
        sessions, = connection.execute("SELECT COUNT(*) FROM sessions").fetchone()
        records, = connection.execute("SELECT COUNT(*) FROM scores").fetchone()
    measured = (f"{machine()}; {sessions:,} sessions, {records:,} records; median of {options.runs}, load "
                f"{min(loads):.1f}-{max(loads):.1f}")
    print(f"\n{table}\n\n{measured}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[4:], sys.argv[3])
    else:
        main()
