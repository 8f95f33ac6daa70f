"""Export rate, `stats` and `db check` time, and their peak memory, each a real `council-db`
process as a user runs it, on a store you name or one simulated for the run.

    python benchmarks/bench_export.py --db PATH              # an existing SQLite store (only read)
    python benchmarks/bench_export.py --sessions 100000 [--work DIR]

Targets at 1,000,000 4x4 sessions (16M records, issue 16): export >= 200,000 records/s with
memory flat in the data size; `stats` <= 5 s and <= 300 MB. `db check` has no target; it is
measured. CPU seconds (user + system) are printed beside wall time: on a shared machine the
wall time also counts waiting for a core, so records per CPU second is the steadier figure.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from doc_tables import machine, markdown_table, write_table  # benchmarks/ is on the path when run as a script

from council_db.simulate import SimulationConfig, write_jsonl

COMMAND = [sys.executable, "-m", "council_db"]


def run(*args: str, ok: tuple[int, ...] = (0,)) -> tuple[float, float, float]:
    """Run council-db; (wall seconds, CPU seconds, peak RSS in MB) of that process."""
    start = time.perf_counter()
    process = subprocess.Popen([*COMMAND, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in ok:
        raise SystemExit(f"council-db {' '.join(args)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def simulated_store(sessions: int, work: Path) -> Path:
    source, db = work / f"bench-{sessions}.jsonl", work / f"bench-{sessions}.db"
    if not db.exists():
        with source.open("w") as out:
            write_jsonl(SimulationConfig(sessions=sessions, seed=sessions, days=365), out)
        run("--db", str(db), "import", "-q", str(source))
        source.unlink()
    return db


def size(db: Path) -> tuple[int, int]:
    """(sessions, records) of a store, read without writing it."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        sessions = connection.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        records = connection.execute("SELECT SUM(records) FROM session_stats").fetchone()[0] or 0
    finally:
        connection.close()
    return sessions, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="An existing SQLite store (only read).")
    parser.add_argument("--sessions", type=int, default=100_000, help="Sessions to simulate when --db is not given.")
    parser.add_argument("--work", type=Path, help="Where a simulated store is kept (default: a temporary folder).")
    parser.add_argument("--write-docs", action="store_true", help="Write the table into docs/benchmarks.md.")
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="council-bench-export-"))
    db = options.db or simulated_store(options.sessions, work)
    sessions, records = size(db)
    print(f"{platform.node()}: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, Python "
          f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}")
    print(f"store: {db} ({sessions:,} sessions, {records:,} records, {db.stat().st_size / 1e6:,.0f} MB)\n")
    print(f"{'command':<22} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}  rate")
    rows = []
    for fmt in ("jsonl", "csv"):
        wall, cpu, peak = run("--db", str(db), "export", "--format", fmt, "-o", os.devnull)
        rate = f"{records / wall:,.0f} records/s ({records / cpu:,.0f} per CPU second)"
        print(f"{'export --format ' + fmt:<22} {wall:8.1f} {cpu:8.1f} {peak:8.0f}  {rate}")
        rows.append([f"`export --format {fmt}`", f"{wall:.1f} s", f"{cpu:.1f} s", f"{peak:.0f} MB", rate])
    for name, args, ok in (("stats", ("stats",), (0,)), ("db check", ("db", "check"), (0, 1))):
        wall, cpu, peak = run("--db", str(db), *args, ok=ok)
        print(f"{name:<22} {wall:8.1f} {cpu:8.1f} {peak:8.0f}")
        rows.append([f"`{name}`", f"{wall:.1f} s", f"{cpu:.1f} s", f"{peak:.0f} MB", ""])
    if options.write_docs:
        table = markdown_table(["command", "wall", "CPU", "peak", "rate"], rows, right={1, 2, 3})
        write_table("export-sqlite", table, f"{machine()}; {sessions:,} sessions, {records:,} records, "
                                            f"{db.stat().st_size / 1e6:,.0f} MB")


if __name__ == "__main__":
    main()
