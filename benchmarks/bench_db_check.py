"""`db check`'s checks one by one (where its time goes), the day totals compared row by row
(old) against screened a range at a time (store/day_screen.py, new), and the whole check old
and new one after the other and new two at a time (store/db_check.py), paired in one run on
one SQLite store (only read).

    python benchmarks/bench_db_check.py --db PATH [--runs 2]
    python benchmarks/bench_db_check.py --db COPY --scoped --add FILE [--write-docs]
    python benchmarks/bench_db_check.py --db COPY --trigger-cost --add FILE [--runs 2]

Wall and CPU seconds of this process; on a shared machine the two threads only gain when a
second core is free, so the load is printed beside them (issue 32's target: <= 30 s at 1M).

``--scoped`` WRITES to the store (give it a copy): it upgrades it to revision 0021, then times
what `db check` reads since the last clean check (store/check_memory.py): the count pass
alone, the first check (a full one, recorded clean), the default check of the clean store, the
import of FILE (10,000 sessions in the issue's measurement), the default check after it, and
the full check after it (today's check, paired with the one before). ``--write-docs`` puts
that table into docs/benchmarks.md (db-check-scoped).

``--trigger-cost`` (also on a copy; 100,000 sessions is enough) imports FILE into two copies
of the store, one without revision 0021's triggers, then deletes those sessions again, paired
in each run: what the triggers cost an import (only its updates fire them) and a deletion.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bench_export import size  # benchmarks/ is on the path when run as a script

from council_db.store import check_memory, db_check, derived, references
from council_db.store.database import open_database, open_reader
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


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def imported(db_path: Path, source: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of `council-db import` of ``source`` into the store, in its own process."""
    wall, used = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-m", "council_db", "--db", str(db_path), "import", "-q", str(source)], check=True)
    return time.perf_counter() - wall, children_cpu() - used


def scoped_check(db, *, full: bool = False) -> check_memory.Scope:
    """`db check` as the command runs it: the scope, the checks, the clean check recorded."""
    scope = check_memory.scope(db, full=full)
    findings, orphans = db_check.check(db, scope=scope)
    assert not any(finding.wrong for finding in findings + orphans), "the copy is not clean"
    check_memory.record_clean(db, scope)
    return scope


def scoped(db_path: Path, source: Path, write_docs: bool) -> None:
    """The default check's rows: after a clean check, and after an import of ``source``."""
    from doc_tables import machine, markdown_table, write_table

    db = open_database(f"sqlite:///{db_path}")  # upgrades the copy to 0021
    sessions, records = size(db_path)
    rows = []

    def row(name: str, work, note=lambda _: "") -> None:
        load = os.getloadavg()[0]
        wall, used = time.perf_counter(), cpu()
        found = work()
        wall, used = time.perf_counter() - wall, cpu() - used
        said = note(found)
        print(f"{name:<38} {wall:7.2f} s wall {used:7.2f} s CPU (load {load:.1f}) {said}")
        rows.append([name, f"{wall:.1f} s", f"{used:.1f} s", f"{load:.1f}", said])

    def ranges(scope: check_memory.Scope) -> str:
        return f"{scope.checked:,} of {scope.ranges:,} ranges"

    row("count pass (the scope alone)", lambda: check_memory.scope(db), ranges)
    row("first check: all ranges, recorded clean", lambda: scoped_check(db), ranges)
    row("default check of the clean store", lambda: scoped_check(db), ranges)
    load = os.getloadavg()[0]
    wall, used = imported(db_path, source)
    added = size(db_path)[0] - sessions
    print(f"{'import of ' + f'{added:,} sessions':<38} {wall:7.2f} s wall {used:7.2f} s CPU (load {load:.1f})")
    rows.append([f"import of {added:,} sessions", f"{wall:.1f} s", f"{used:.1f} s", f"{load:.1f}", "its own process"])
    row("default check after the import", lambda: scoped_check(db), ranges)
    row("--full after the import (today's check)", lambda: scoped_check(db, full=True), ranges)
    db.engine.dispose()
    if write_docs:
        table = markdown_table(["check", "wall", "CPU", "load", "read"], rows, right={1, 2, 3})
        write_table("db-check-scoped", table, f"{machine()}; {sessions:,} sessions, {records:,} records, "
                                              f"then {added:,} sessions imported")


TRIGGERS = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%check_marks'"


def trigger_cost(db_path: Path, source: Path, runs: int) -> None:
    """Import ``source`` into copies of the store with and without revision 0021's triggers,
    then delete the sessions it added, paired in each run."""
    from council_db.store import removal

    open_database(f"sqlite:///{db_path}").engine.dispose()  # upgraded to 0021
    connection = sqlite3.connect(db_path)
    (high,) = connection.execute("SELECT MAX(id) FROM sessions").fetchone()  # the added sessions' ids are above
    connection.close()
    for run in range(runs):
        for name in ("with triggers", "without"):
            copy = db_path.with_name(f"{db_path.stem}-{'on' if name.startswith('with ') else 'off'}.db")
            shutil.copyfile(db_path, copy)
            if name == "without":
                connection = sqlite3.connect(copy)
                with connection:
                    for (trigger,) in connection.execute(TRIGGERS).fetchall():
                        connection.execute(f"DROP TRIGGER {trigger}")
                connection.close()
            load = os.getloadavg()[0]
            import_wall, import_cpu = imported(copy, source)
            db = open_database(f"sqlite:///{copy}")
            selection = removal.Selection("the added sessions", "s.id > :high", {"high": high})
            delete_wall, delete_cpu = timed(lambda: removal.delete(db, selection))
            db.engine.dispose()
            print(f"run {run + 1}, {name:<13}: import {import_wall:6.2f} s wall {import_cpu:6.2f} s CPU; delete "
                  f"{delete_wall:6.2f} s wall {delete_cpu:6.2f} s CPU (load {load:.1f})")
            copy.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="An existing SQLite store (only read but with "
                                                                "--scoped and --trigger-cost: give those a copy).")
    parser.add_argument("--runs", type=int, default=2, help="Paired runs of the whole check.")
    parser.add_argument("--scoped", action="store_true", help="The default check after a clean one and after "
                                                              "an import of --add (writes the store).")
    parser.add_argument("--trigger-cost", action="store_true", help="Import --add and delete it again, with and "
                                                                    "without revision 0021's triggers.")
    parser.add_argument("--add", type=Path, help="The sessions to import (a JSONL file).")
    parser.add_argument("--write-docs", action="store_true", help="With --scoped: the table into docs/benchmarks.md.")
    options = parser.parse_args()
    sessions, records = size(options.db)
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"SQLite {sqlite3.sqlite_version}; {sessions:,} sessions, {records:,} records\n")
    if options.scoped or options.trigger_cost:
        if options.add is None:
            parser.error("--scoped and --trigger-cost import --add FILE: give it (council-db simulate writes one)")
        if options.scoped:
            scoped(options.db, options.add, options.write_docs)
        else:
            trigger_cost(options.db, options.add, options.runs)
        return
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
