"""Scale benchmark: import rate, bias-report time and peak memory, bytes per session, at
growing database sizes, each step a real `council-db` process as a user runs it.

    python benchmarks/bench_scale.py [--sizes 1000,10000,100000,1000000] [--work DIR] [--import-runs 3]
                                     [--db-url URL | --throwaway-postgres]

Targets at 1,000,000 4x4 sessions (16M records, PRODUCT.md and issue 6): import >= 200,000
records/s; `bias-report` <= 3 s and <= 300 MB peak; `--sessions N` and `--days D` windows cost in
proportion to the window; <= 1 KB per session on disk; `council-db --help` <= 100 ms (issue 16).

Without --db-url each size gets a new SQLite file in --work (default: a temporary folder;
1M sessions need ~8 GB for the JSONL and ~1 GB for the database). With --db-url (e.g. a
PostgreSQL URL) the database is emptied (`db downgrade base`) before each size.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

from bench_store import bytes_per_session, help_times  # benchmarks/ is on the path when run as a script
from compiled import ENV, compile_council_db
from doc_tables import machine, markdown_table, write_table

from council_db.simulate import SimulationConfig, write_jsonl

COMMAND = [sys.executable, "-m", "council_db"]


def run(*args: str) -> tuple[float, float]:
    """Run council-db; (wall seconds, peak RSS in MB) of that process."""
    start = time.perf_counter()
    process = subprocess.Popen([*COMMAND, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"council-db {' '.join(args)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def best_of(runs: int, *args: str) -> tuple[float, float]:
    results = [run(*args) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def database_bytes_per_session(url: str, sessions: int) -> float:
    """PostgreSQL: the whole database (tables, indexes, TOAST) per session."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as connection:
        size = connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
    engine.dispose()
    return size / sessions


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A URL of an empty database on a server started for this run, stopped afterwards."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests import postgres

    reason = postgres.why_unavailable()
    if reason:
        raise SystemExit(f"--throwaway-postgres: {reason}")
    cluster = postgres.Cluster().start()
    try:
        yield cluster.database()
    finally:
        cluster.stop()


def fresh_database(size: int, work: Path, db_url: str | None) -> str:
    """An empty database for one import: a new SQLite file, or the server's emptied."""
    if db_url is not None:
        run("--db", db_url, "db", "downgrade", "base")
        return db_url
    for leftover in work.glob(f"{sqlite_file(size, work).name}*"):
        leftover.unlink()
    return str(sqlite_file(size, work))


def sqlite_file(size: int, work: Path) -> Path:
    return work / f"council-{size}.db"


def measure(size: int, work: Path, db_url: str | None, import_runs: int) -> dict[str, str]:
    source = work / f"sessions-{size}.jsonl"
    if not source.exists():
        with source.open("wb") as out:  # a year of sessions, so --days windows have something to cut
            write_jsonl(SimulationConfig(sessions=size, seed=size, days=365), out)
    records = size * 16
    imports = []
    for _ in range(import_runs):  # the median of several: one slow or lucky run must not decide
        db = fresh_database(size, work, db_url)
        imports.append(run("--db", db, "import", str(source)))
    import_s = statistics.median(seconds for seconds, _ in imports)
    import_mb = max(mb for _, mb in imports)
    if db_url is None:
        per_session = bytes_per_session(sqlite_file(size, work), size)
    else:
        per_session = database_bytes_per_session(db_url, size)
    report_s, report_mb = best_of(3, "--db", db, "bias-report", "--format", "json")
    window_s, _ = best_of(3, "--db", db, "bias-report", "--format", "json", "--sessions", "1000")
    days_s, _ = best_of(3, "--db", db, "bias-report", "--format", "json", "--days", "7")
    return {
        "sessions": f"{size:,}",
        "records": f"{records:,}",
        "import rec/s": f"{records / import_s:,.0f}",
        "import MB": f"{import_mb:,.0f}",
        "report s": f"{report_s:.2f}",
        "report MB": f"{report_mb:,.0f}",
        "--sessions 1000 s": f"{window_s:.2f}",
        "--days 7 s": f"{days_s:.2f}",
        "bytes/session": f"{per_session:,.0f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="session counts, comma-separated")
    parser.add_argument("--db-url", help="a database URL to use instead of one SQLite file per size")
    parser.add_argument("--throwaway-postgres", action="store_true",
                        help="start the test suite's PostgreSQL server (tests/postgres.py: 127.0.0.1, fsync off) "
                             "and measure against it")
    parser.add_argument("--work", type=Path, help="folder for the JSONL and SQLite files (kept); default: temporary")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table into docs/benchmarks.md (scale-sqlite or scale-postgresql)")
    parser.add_argument("--import-runs", type=int, default=3, help="imports per size, each into an empty database; "
                        "the table shows the median rate")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    compile_council_db()  # untimed: each process starts from compiled bytecode, as installed

    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        if args.throwaway_postgres:
            args.db_url = stack.enter_context(throwaway_postgres())
        rows = [measure(size, work, args.db_url, args.import_runs) for size in sizes]
    backend = args.db_url.split(":", 1)[0] if args.db_url else f"SQLite {sqlite3.sqlite_version}"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {backend}")
    help_ms = statistics.median(help_times()) * 1e3
    print(f"council-db --help: {help_ms:.0f} ms median of 15")
    columns = list(rows[0])
    widths = [max(len(c), *(len(r[c]) for r in rows)) for c in columns]
    print("| " + " | ".join(c.rjust(w) for c, w in zip(columns, widths)) + " |")
    print("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(row[c].rjust(w) for c, w in zip(columns, widths)) + " |")
    if args.write_docs:
        table = markdown_table(columns, [list(row.values()) for row in rows], right=set(range(len(columns))))
        write_table("scale-postgresql" if args.db_url else "scale-sqlite", table,
                    f"{machine()}; {backend}; `--help` {help_ms:.0f} ms; "
                    f"import: median of {args.import_runs}, reports: best of 3")


if __name__ == "__main__":
    main()
