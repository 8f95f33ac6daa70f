"""Store benchmark: import rate next to a bare sqlite3 executemany of the same rows,
bytes per session, re-import of a grown file, and `council-db --help` start-up time.

    python benchmarks/bench_store.py [--sessions 20000]

Targets (PRODUCT.md): import >= 200,000 records/s and >= 1/3 of the bare executemany
rate; <= 1 KB per 4x4 session; --help <= 100 ms (issue 16); re-import reads only new bytes.
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
from pathlib import Path

from compiled import ENV, compile_council_db  # benchmarks/ is on the path when run as a script
from doc_tables import machine, markdown_table, write_table

from council_db.ingest.importer import import_files
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.store.database import open_database


def simulate(path: Path, sessions: int, seed: int) -> int:
    with path.open("wb") as out:
        return write_jsonl(SimulationConfig(sessions=sessions, seed=seed), out)["records"]


def timed_import(db_file: Path, source: Path) -> tuple[float, int]:
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    start = time.perf_counter()
    summary = import_files(db, [str(source)])
    elapsed = time.perf_counter() - start
    db.engine.dispose()
    return elapsed, summary.total("inserted")


def bare_executemany(imported: Path, empty: Path) -> tuple[float, int]:
    """The same score rows into the same schema (foreign keys, WAL), with no parsing at all."""
    with sqlite3.connect(imported) as source:
        rows = source.execute("SELECT * FROM scores").fetchall()
        parents = {t: source.execute(f"SELECT * FROM {t}").fetchall()
                   for t in ("imports", "models", "scales", "sessions")}
    target = sqlite3.connect(empty, isolation_level=None)
    for pragma in ("foreign_keys=ON", "journal_mode=WAL", "synchronous=NORMAL"):
        target.execute(f"PRAGMA {pragma}")
    target.execute("BEGIN")
    for table, values in parents.items():
        target.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(values[0]))})", values)
    target.execute("COMMIT")
    marks = ",".join("?" * len(rows[0]))
    start = time.perf_counter()
    target.execute("BEGIN")
    target.executemany(f"INSERT INTO scores VALUES ({marks}) ON CONFLICT DO NOTHING", rows)
    target.execute("COMMIT")
    elapsed = time.perf_counter() - start
    target.close()
    return elapsed, len(rows)


def bytes_per_session(db_file: Path, sessions: int) -> float:
    with sqlite3.connect(db_file) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        used = pages - connection.execute("PRAGMA freelist_count").fetchone()[0]
        page = connection.execute("PRAGMA page_size").fetchone()[0]
    return used * page / sessions


def help_times(runs: int = 15) -> list[float]:
    script = Path(sys.executable).with_name("council-db")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "council_db"]
    compile_council_db()  # untimed: --help starts from compiled bytecode, as installed
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([*command, "--help"], stdout=subprocess.DEVNULL, check=True, env=ENV)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20_000, help="4x4 sessions to simulate (16 records each)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = work / "bias_metrics.jsonl"
        records = simulate(source, args.sessions, args.seed)
        size_mb = source.stat().st_size / 1e6
        import_s, inserted = timed_import(work / "council.db", source)
        bare_s, bare_rows = bare_executemany(work / "council.db", _empty_copy(work))
        per_session = bytes_per_session(work / "council.db", args.sessions)

        grown = max(1, args.sessions // 100)
        extra = work / "extra.jsonl"
        simulate(extra, grown, args.seed + 1)
        with source.open("ab") as out:
            out.write(extra.read_bytes())
        reimport_s, reinserted = timed_import(work / "council.db", source)
        helps = help_times()

    import_rate, bare_rate = inserted / import_s, bare_rows / bare_s
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"SQLite {sqlite3.sqlite_version}")
    print(f"data: {args.sessions:,} sessions x 16 = {records:,} records, {size_mb:,.1f} MB of JSONL")
    rows = [
        ("import (validated records/s)", f"{import_rate:,.0f}", ">= 200,000"),
        ("bare sqlite3 executemany (rows/s)", f"{bare_rate:,.0f}", ""),
        ("import / bare", f"{import_rate / bare_rate:.2f}", ">= 0.33"),
        ("bytes per 4x4 session (with indexes)", f"{per_session:,.0f}", "<= 1,024"),
        (f"re-import after +{grown:,} sessions (s)", f"{reimport_s:.3f} ({reinserted:,} new)", "reads only new bytes"),
        ("council-db --help (ms, min/median)",
         f"{min(helps) * 1e3:.0f} / {statistics.median(helps) * 1e3:.0f}", "<= 100"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>22}  {target}")
    if args.write_docs:
        table = markdown_table(["figure", "value", "target"], [list(row) for row in rows], right={1})
        write_table("store", table, f"{machine()}; {args.sessions:,} sessions, {records:,} records, "
                                    f"{size_mb:,.1f} MB of JSONL")


def _empty_copy(work: Path) -> Path:
    """A fresh database at the same schema revision, for the bare insert."""
    empty = work / "bare.db"
    open_database(f"sqlite:///{empty}", notify=lambda _: None).engine.dispose()
    return empty


if __name__ == "__main__":
    main()
