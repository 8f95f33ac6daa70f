"""Command benchmark: wall time and peak memory of each analysis command on one store, each a
real `council-db` process as a user runs it, printed with the store's size.

    python benchmarks/bench_commands.py --db FILE|URL [--runs 1] [--commands trends,anomalies,...]
    python benchmarks/bench_commands.py --sessions 100000 [--work DIR] [--throwaway-postgres]

Targets at 1,000,000 4x4 sessions (16M records, issue 16): `trends`, `anomalies`,
`leaderboard`, `scores`, `audit` and `stats` each <= 5 s and <= 300 MB peak; `bias-report` (and `check`)
<= 3 s and <= 300 MB. Above `--sample-sessions` (default 5,000) sessions the record-level
commands read the bias report's sample of the window, so their cost stays flat in the store
size; `scores` and `audit` read one session (plus, for `scores --method bias-adjusted`, the
sample its offsets are estimated from).

With --sessions a store of that many simulated sessions is built in --work (default: a
temporary folder) first. The figures are one machine's: on a shared machine, rough.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench_scale import throwaway_postgres  # benchmarks/ is on the path when run as a script
from compiled import ENV, compile_council_db
from doc_tables import machine, markdown_table, write_table

COMMAND = [sys.executable, "-m", "council_db"]
COMMANDS = {
    "trends": ["trends"],
    "anomalies": ["anomalies"],
    "leaderboard": ["leaderboard"],
    "leaderboard-mean": ["leaderboard", "--method", "mean"],
    "scores": ["scores", "--session", "{session}"],
    "scores-bias-adjusted": ["scores", "--session", "{session}", "--method", "bias-adjusted"],
    "audit": ["audit", "{session}"],
    "stats": ["stats"],
    "bias-report": ["bias-report"],
    "check": ["check", "--min-sessions", "1"],  # the report, then a rule that passes (a failure exits 1)
}


def run(db: str, args: list[str]) -> tuple[float, float, float]:
    """Run council-db on ``db``; wall seconds, CPU seconds (user + system: less sensitive to
    other work on the machine than wall time) and peak RSS in MB of that process."""
    start = time.perf_counter()
    process = subprocess.Popen([*COMMAND, "--db", db, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=ENV)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"council-db {' '.join(args)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def store_size(db: str) -> tuple[int, int, str]:
    """Sessions, records, and the latest session's id (the one `scores` and `audit` read)."""
    from sqlalchemy import text

    from council_db.store.database import open_reader

    database = open_reader(db if "://" in db else f"sqlite:///{Path(db).resolve()}")
    with database.engine.connect() as connection:
        sessions = connection.execute(text("SELECT COUNT(*) FROM sessions")).scalar_one()
        records = connection.execute(text("SELECT COUNT(*) FROM scores")).scalar_one()
        latest = connection.execute(text("SELECT session_key FROM sessions ORDER BY ts_us DESC, id DESC LIMIT 1"))
        key = latest.scalar_one()
    database.engine.dispose()
    return sessions, records, key


def build(sessions: int, work: Path, url: str | None = None) -> str:
    """A store of ``sessions`` simulated 4x4 sessions: a SQLite file in ``work``, or the
    database ``url``. A file {sessions}.jsonl already in ``work`` is imported as it is."""
    from council_db.simulate import SimulationConfig, write_jsonl

    jsonl, db = work / f"{sessions}.jsonl", url or str(work / f"{sessions}.db")
    if not jsonl.exists():
        with jsonl.open("w", encoding="utf-8") as out:
            write_jsonl(SimulationConfig(sessions=sessions, seed=sessions, days=365), out)
    subprocess.run([*COMMAND, "--db", db, "import", "-q", str(jsonl)], check=True, stdout=subprocess.DEVNULL)
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", help="an existing store (file or SQLAlchemy URL); only read, but upgraded "
                                     "(as by any council-db command) if its schema is older")
    source.add_argument("--sessions", type=int, help="build a store of this many simulated sessions")
    parser.add_argument("--work", type=Path, help="where --sessions builds its store (default: a temporary folder)")
    parser.add_argument("--throwaway-postgres", action="store_true",
                        help="with --sessions: build the store on the test suite's PostgreSQL server "
                             "(tests/postgres.py: 127.0.0.1, fsync off), stopped afterwards")
    parser.add_argument("--runs", type=int, default=1, help="runs per command: the best time, the largest peak")
    parser.add_argument("--commands", default=",".join(COMMANDS), help=f"comma-separated, of {', '.join(COMMANDS)}")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table into docs/benchmarks.md (commands-sqlite or commands-postgresql)")
    options = parser.parse_args()
    chosen = options.commands.split(",")
    unknown = set(chosen) - set(COMMANDS)
    if unknown:
        parser.error(f"unknown command(s): {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        url = stack.enter_context(throwaway_postgres()) if options.throwaway_postgres else None
        db = options.db or build(options.sessions, options.work or Path(scratch), url)
        sessions, records, key = store_size(db)
        compile_council_db()  # untimed: the commands start from compiled bytecode, as installed
        print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
              f"store: {sessions:,} sessions, {records:,} records")
        print(f"{'command':<22} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
        rows = []
        for name in chosen:
            args = [arg.format(session=key) for arg in COMMANDS[name]]
            results = [run(db, args) for _ in range(options.runs)]
            wall, cpu, peak = min(r[0] for r in results), min(r[1] for r in results), max(r[2] for r in results)
            print(f"{name:<22} {wall:>8.2f} {cpu:>8.2f} {peak:>8.0f}", flush=True)
            shown = " ".join(arg if arg != "{session}" else "ID" for arg in COMMANDS[name])
            rows.append([f"`{shown}`", f"{wall:.2f} s", f"{cpu:.2f} s", f"{peak:.0f} MB"])
    if options.write_docs:
        table_name = "commands-postgresql" if db.startswith("postgresql") else "commands-sqlite"
        table = markdown_table(["command", "wall", "CPU", "peak"], rows, right={1, 2, 3})
        write_table(table_name, table, f"{machine()}; {sessions:,} sessions, {records:,} records; "
                                       f"best of {options.runs}")


if __name__ == "__main__":
    main()
