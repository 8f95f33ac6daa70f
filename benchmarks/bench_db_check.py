"""`db check`'s checks one by one (where its time goes), the day totals compared row by row
(old) against screened a range at a time (store/day_screen.py, new), and the whole check old
and new one after the other and new two at a time (store/db_check.py), paired in one run on
one SQLite store (only read).

    python benchmarks/bench_db_check.py --db PATH [--runs 2]

Wall and CPU seconds of this process; on a shared machine the two threads only gain when a
second core is free, so the load is printed beside them (issue 32's target: <= 30 s at 1M).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sqlite3
import time
from pathlib import Path

from bench_export import size  # benchmarks/ is on the path when run as a script

from council_db.store import db_check, derived, references
from council_db.store.database import open_reader
from council_db.store.day_screen import DayScreen


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(work) -> tuple[float, float]:
    """(wall, CPU) seconds of ``work()``."""
    wall, used = time.perf_counter(), cpu()
    work()
    return time.perf_counter() - wall, cpu() - used


DAYS = tuple(table for table in derived.DERIVED if table.range_column == "day")


def old(db) -> None:
    """Every range of every derived table compared row by row, one check after the other."""
    references.orphans(db)
    derived.check(db)


def new(db) -> None:
    """The day totals screened, one check after the other."""
    references.orphans(db)
    derived.check(db, screen=DayScreen().passes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="An existing SQLite store (only read).")
    parser.add_argument("--runs", type=int, default=2, help="Paired runs of the whole check.")
    options = parser.parse_args()
    sessions, records = size(options.db)
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"SQLite {sqlite3.sqlite_version}; {sessions:,} sessions, {records:,} records\n")
    db = open_reader(f"sqlite:///{options.db}")
    for table in derived.DERIVED:
        wall, used = timed(lambda: derived.check(db, tables=(table,)))
        print(f"{table.name:<22} {wall:7.2f} s wall {used:7.2f} s CPU")
    wall, used = timed(lambda: derived.check(db, tables=DAYS, screen=DayScreen().passes))
    print(f"{'day totals screened':<22} {wall:7.2f} s wall {used:7.2f} s CPU")
    wall, used = timed(lambda: references.orphans(db))
    print(f"{'references':<22} {wall:7.2f} s wall {used:7.2f} s CPU\n")
    for run in range(options.runs):
        for name, work in (("old, one after the other", old), ("new, one after the other", new),
                           ("new, two at a time", db_check.check)):
            load = os.getloadavg()[0]
            wall, used = timed(lambda: work(db))
            print(f"run {run + 1}: {name:<24} {wall:7.2f} s wall {used:7.2f} s CPU (load {load:.1f})")
    db.engine.dispose()


if __name__ == "__main__":
    main()
