"""Every session screened: `council-db anomalies` on the report's sample against
`anomalies --every-session` (every session of the window tested against the sample's fit, in
one pass over its records), paired in one run on one store: wall, CPU and peak memory, with
the store's size and the machine's load.

    python benchmarks/bench_every_session.py --db FILE [--slice 100000] [--write-docs]

Issue 32's target: every session at 1,000,000 sessions in <= 5 s and <= 300 MB. `--slice N`
also times, on the store's first N sessions, the two ways the pass could get its sums: the
raw columns read into numpy (what every_session does) and the per-record arithmetic done in
SQL, grouped by (session, reviewer) (the effects written in as CASE terms).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import time
from pathlib import Path

from bench_commands import run, store_size  # benchmarks/ is on the path when run as a script
from compiled import compile_council_db
from doc_tables import machine, markdown_table, write_table

RAW = ("SELECT sc.session_id, sc.reviewer_id, sc.model_id, CASE WHEN sc.display_order THEN sc.position ELSE -1 END, "
       "sc.response_length_chars, sc.score_value FROM scores AS sc WHERE sc.session_id <= :last "
       "AND sc.exclusion_id IS NULL")
TERM = "(CASE {column} WHEN 1 THEN 0.1 WHEN 2 THEN -0.1 WHEN 3 THEN 0.2 WHEN 4 THEN 0.0 END)"
GROUPED = ("SELECT COUNT(*) FROM (SELECT sc.session_id, sc.reviewer_id, COUNT(*), SUM(sc.score_value), "
           "SUM(sc.score_value * sc.score_value), MIN(sc.score_value), MAX(sc.score_value), SUM(u), SUM(u * u) FROM "
           f"(SELECT sc.*, sc.score_value - {TERM.format(column='sc.reviewer_id')} - "
           f"{TERM.format(column='sc.model_id')} - 0.05 * ln(sc.response_length_chars + 1.0) AS u FROM scores AS sc "
           "WHERE sc.session_id <= :last AND sc.exclusion_id IS NULL) AS sc GROUP BY sc.session_id, sc.reviewer_id)")


def slice_times(path: str, sessions: int) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Wall and CPU seconds (SQLite runs in this process, so CPU counts its work too) to read
    the first ``sessions`` sessions' raw columns into numpy, and to do the arithmetic and the
    grouping in SQL instead; and the records they hold."""
    import numpy as np

    connection = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        cursor = connection.execute(RAW, {"last": sessions})
        records = 0
        while rows := cursor.fetchmany(50_000):
            records += len(np.fromiter(rows, dtype=np.dtype("i8,i8,i8,i8,i8,f8"), count=len(rows)))
        raw = (time.perf_counter() - start, time.process_time() - cpu)
        start, cpu = time.perf_counter(), time.process_time()
        connection.execute(GROUPED, {"last": sessions}).fetchall()
        return raw, (time.perf_counter() - start, time.process_time() - cpu), records
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a SQLite store, only read")
    parser.add_argument("--slice", type=int, default=0, help="also time the two ways to get the sums on N sessions")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    options = parser.parse_args()
    sessions, records, _ = store_size(options.db)
    compile_council_db()
    load = os.getloadavg()[0]
    print(f"{machine()}; store: {sessions:,} sessions, {records:,} records; load average {load:.1f}")
    rows = []
    for name, args in (("`anomalies` (the report's sample)", ["anomalies"]),
                       ("`anomalies --every-session`", ["anomalies", "--every-session"])):
        wall, cpu, peak = run(options.db, args)
        print(f"{name:<40} {wall:8.2f} s wall {cpu:8.2f} s CPU {peak:8.0f} MB", flush=True)
        rows.append([name, f"{wall:.2f} s", f"{cpu:.2f} s", f"{peak:.0f} MB"])
    if options.slice:
        raw, grouped, sliced = slice_times(options.db, options.slice)
        for what, (wall, cpu) in ((f"the pass's reading alone, first {options.slice:,} sessions ({sliced:,} "
                                   "records)", raw),
                                  (f"the same sums by arithmetic and GROUP BY in SQL, first {options.slice:,} "
                                   "sessions", grouped)):
            print(f"{what}: {wall:.2f} s wall, {cpu:.2f} s CPU")
            rows.append([what, f"{wall:.2f} s", f"{cpu:.2f} s", ""])
    if options.write_docs:
        write_table("every-session", markdown_table(["what", "wall", "CPU", "peak"], rows, right={1, 2, 3}),
                    f"{machine()}; {sessions:,} sessions, {records:,} records; load average {load:.1f} "
                    f"(a shared machine: CPU is the steadier figure)")


if __name__ == "__main__":
    main()
