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

The newer commands have a row each (issue 32): `check`, `diff` (two reviewers; the report
before and after a time), the leaderboard's other methods (`leaderboard` is its default,
`--method quality`; `bradley-terry`, with `--style length`; `ppi`), `bias-report --method
bayes`, `reviewers`, `sessions`, `orders`, `sql` (a simple SELECT) and `export` (its rate, over
the latest 62,500 sessions: a million records). `anomalies --every-session` (one pass over
every session, minutes at a million) is the opt-in it is: run once and outside the targets.
The rows marked "people" (`bias-report` with its section against the reference, `leaderboard
--method ppi`) need a store where human raters scored a share of the sessions: --reference-db,
built there (--reference-sessions simulated sessions, a tenth of them rated by three of five
humans) when the file does not exist, and with --sessions built beside the 4x4 store. `diff
--config-version` has no row: the simulator writes one config version.

With --sessions a store of that many simulated sessions is built in --work (default: a
temporary folder) first. The figures are one machine's: on a shared machine, rough. Other work
on the machine inflates CPU seconds too, so each row also gives its CPU over `bias-report`'s in
the same run, and the run states the load average it saw.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from datetime import datetime, timezone
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
    "diff-reviewers": ["diff", "--reviewer", "{reviewer}", "--against", "{other}"],
    "diff-changed-at": ["diff", "--changed-at", "{middle}"],
    "leaderboard-bradley-terry": ["leaderboard", "--method", "bradley-terry"],
    "leaderboard-bradley-terry-length": ["leaderboard", "--method", "bradley-terry", "--style", "length"],
    "bias-report-bayes": ["bias-report", "--method", "bayes"],
    "reviewers": ["reviewers"],
    "sessions": ["sessions"],
    "orders": ["orders", "--models", "a,b,c,d", "--reviewers", "a,b,c,d", "--seed", "1"],
    "sql": ["sql", "SELECT session_key, ts_us FROM sessions ORDER BY ts_us DESC LIMIT 1000"],
    "export": ["export", "--since", "{since}"],
    "anomalies-every-session": ["anomalies", "--every-session"],
    "bias-report-people": ["bias-report"],
    "leaderboard-ppi": ["leaderboard", "--method", "ppi"],
}
PEOPLE = {"bias-report-people", "leaderboard-ppi"}  # run on the store with human raters (--reference-db)
OPT_IN = {"anomalies-every-session"}  # minutes at a million sessions by design: run once, no target
EXPORTED_SESSIONS = 62_500  # `export` writes the latest this many sessions (a million 4x4 records)
HUMANS = ["h1", "h2", "h3", "h4", "h5"]  # as benchmarks/bench_reference_report.py


def target(name: str) -> str:
    """The row's target at a million sessions (issues 16 and 32): the report's 3 s for every
    command that is the report (`check` is the report and its rules), 5 s for the others."""
    if name in OPT_IN:
        return "opt-in, none"
    if name == "export":
        return "a rate"
    return "<= 3 s, 300 MB" if name.startswith(("bias-report", "check")) else "<= 5 s, 300 MB"


# Times one command from a small Python process of its own: a child started by this script
# would report this script's memory as its peak (Linux keeps the larger peak across exec, and
# the child begins as a copy of the parent), the launcher's child begins as a copy of it.
LAUNCHER = """import os, subprocess, sys, time
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime,
      usage.ru_maxrss / 1024)
"""


def run(db: str, args: list[str]) -> tuple[float, float, float]:
    """Run council-db on ``db``; wall seconds, CPU seconds (user + system: less sensitive to
    other work on the machine than wall time) and peak RSS in MB of that process."""
    launched = subprocess.run([sys.executable, "-c", LAUNCHER, *COMMAND, "--db", db, *args], capture_output=True,
                              env=ENV, text=True, check=True)
    wall, status, cpu, peak = launched.stdout.split()
    if int(status) != 0:
        raise SystemExit(f"council-db {' '.join(args)} failed: {launched.stderr}")
    return float(wall), float(cpu), float(peak)


def iso(ts_us: int) -> str:
    """A stored time (UTC microseconds) as the ISO-8601 text the options take."""
    return datetime.fromtimestamp(ts_us / 1e6, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def store_size(db: str) -> tuple[int, int, dict[str, str]]:
    """Sessions, records, and what the rows' {placeholders} stand for: the latest session
    (the one `scores` and `audit` read), the first two reviewers (`diff`), the middle of the
    sessions' span (`diff --changed-at`) and the time of the EXPORTED_SESSIONS-th latest."""
    from sqlalchemy import text

    from council_db.store.database import open_reader

    database = open_reader(db if "://" in db else f"sqlite:///{Path(db).resolve()}")
    with database.engine.connect() as connection:
        def one(sql: str):
            return connection.execute(text(sql)).scalar_one()

        sessions = one("SELECT COUNT(*) FROM sessions")
        records = one("SELECT COUNT(*) FROM scores")
        first, last = one("SELECT MIN(ts_us) FROM sessions"), one("SELECT MAX(ts_us) FROM sessions")
        reviewers = connection.execute(text("SELECT name FROM models WHERE id IN "
                                            "(SELECT DISTINCT reviewer_id FROM scores LIMIT 2) ORDER BY id")).scalars()
        reviewer, other = list(reviewers)
        since = one(f"SELECT ts_us FROM sessions ORDER BY ts_us DESC LIMIT 1 "
                    f"OFFSET {min(EXPORTED_SESSIONS, sessions) - 1}")
        values = {
            "session": one("SELECT session_key FROM sessions ORDER BY ts_us DESC, id DESC LIMIT 1"),
            "reviewer": reviewer, "other": other, "middle": iso((first + last) // 2),
            "since": iso(since), "since_us": str(since),
        }
    database.engine.dispose()
    return sessions, records, values


def exported_records(db: str, since_us: str) -> int:
    """The records `export --since` writes: the rate's numerator."""
    from sqlalchemy import text

    from council_db.store.database import open_reader

    database = open_reader(db if "://" in db else f"sqlite:///{Path(db).resolve()}")
    with database.engine.connect() as connection:
        count = connection.execute(text("SELECT COUNT(*) FROM scores AS s JOIN sessions AS t ON t.id = s.session_id "
                                        "WHERE t.ts_us >= :since"), {"since": int(since_us)}).scalar_one()
    database.engine.dispose()
    return count


def build(sessions: int, work: Path, url: str | None = None, people: bool = False) -> str:
    """A store of ``sessions`` simulated 4x4 sessions: a SQLite file in ``work``, or the
    database ``url``; with ``people``, a tenth of them also rated by three of five humans. A
    file of the same name with the suffix .jsonl already in ``work`` is imported as it is."""
    from council_db.simulate import SimulationConfig, write_jsonl

    stem = f"{sessions}-people" if people else f"{sessions}"
    jsonl, db = work / f"{stem}.jsonl", url or str(work / f"{stem}.db")
    if not jsonl.exists():
        extra = dict(humans=HUMANS, humans_per_session=3, reference_share=0.1, answer_sd=1.0) if people else {}
        with jsonl.open("w", encoding="utf-8") as out:
            write_jsonl(SimulationConfig(sessions=sessions, seed=sessions, days=365, **extra), out)
    subprocess.run([*COMMAND, "--db", db, "import", "-q", str(jsonl)], check=True, stdout=subprocess.DEVNULL)
    return db


def measure(db: str, name: str, values: dict[str, str], runs: int) -> tuple[float, float, float]:
    """Best wall and CPU time and the largest peak of ``runs`` runs (one for an opt-in row)."""
    args = [arg.format(**values) for arg in COMMANDS[name]]
    results = [run(db, args) for _ in range(1 if name in OPT_IN else runs)]
    return min(r[0] for r in results), min(r[1] for r in results), max(r[2] for r in results)


def shown(name: str) -> str:
    """The row's command as the table shows it: placeholders by what they stand for."""
    names = {"{session}": "ID", "{reviewer}": "A", "{other}": "B", "{middle}": "T", "{since}": "T"}
    text = " ".join(names.get(arg, arg if " " not in arg else f"'{arg}'") for arg in COMMANDS[name])
    return f"{text} (people)" if name in PEOPLE else text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", help="an existing store (file or SQLAlchemy URL); only read, but upgraded "
                                     "(as by any council-db command) if its schema is older")
    source.add_argument("--sessions", type=int, help="build a store of this many simulated sessions")
    parser.add_argument("--work", type=Path, help="where --sessions builds its store (default: a temporary folder)")
    parser.add_argument("--reference-db", type=Path,
                        help="a SQLite store with human raters for the people rows; built there (in a temporary "
                             "folder, then moved) if it does not exist")
    parser.add_argument("--reference-sessions", type=int, default=1_000_000,
                        help="sessions of the --reference-db store it builds (default 1,000,000)")
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
    if options.db and PEOPLE & set(chosen) and not options.reference_db:
        parser.error(f"{', '.join(sorted(PEOPLE & set(chosen)))} need a store with human raters: give "
                     f"--reference-db FILE (built there if it does not exist), or leave them out of --commands")
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as stack:
        url = stack.enter_context(throwaway_postgres()) if options.throwaway_postgres else None
        work = options.work or Path(scratch)
        db = options.db or build(options.sessions, work, url)
        stores = {False: (db, *store_size(db))}
        if PEOPLE & set(chosen):
            people = options.reference_db
            if people is None:
                people = Path(build(options.sessions or options.reference_sessions, work, people=True))
            elif not people.exists():  # built beside it; its lines (8 GB at 1M) not kept there
                built = build(options.reference_sessions, Path(scratch), people=True)
                shutil.move(built, people)
            stores[True] = (str(people), *store_size(str(people)))
        compile_council_db()  # untimed: the commands start from compiled bytecode, as installed
        print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        for with_people, (where, sessions, records, _) in stores.items():
            print(f"{'people' if with_people else '4x4'} store: {where}, {sessions:,} sessions, {records:,} records")
        print(f"{'command':<34} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'x report':>8}  target")
        rows, report_cpu, loads = [], None, [os.getloadavg()[0]]
        for name in chosen:
            where, _, _, values = stores[name in PEOPLE]
            wall, cpu, peak = measure(where, name, values, options.runs)
            report_cpu = cpu if name == "bias-report" else report_cpu
            ratio = f"{cpu / report_cpu:.2f}" if report_cpu else ""
            goal = target(name)
            if name == "export":
                count = exported_records(where, values["since_us"])
                goal = f"{count / cpu:,.0f} records/s CPU ({count:,} records)"
            print(f"{name:<34} {wall:>8.2f} {cpu:>8.2f} {peak:>8.0f} {ratio:>8}  {goal}", flush=True)
            rows.append([f"`{shown(name)}`", f"{wall:.2f} s", f"{cpu:.2f} s", f"{peak:.0f} MB", ratio, goal])
            loads.append(os.getloadavg()[0])
        print(f"load average {min(loads):.1f} to {max(loads):.1f}")
    if options.write_docs:
        table_name = "commands-postgresql" if db.startswith("postgresql") else "commands-sqlite"
        table = markdown_table(["command", "wall", "CPU", "peak", "CPU / bias-report's", "target"], rows,
                               right={1, 2, 3, 4})
        sizes = "; ".join(f"{'people' if p else '4x4'}: {s:,} sessions, {r:,} records"
                          for p, (_, s, r, _) in stores.items())
        write_table(table_name, table, f"{machine()}; {sizes}; best of {options.runs} (opt-in rows: 1); "
                                       f"load average {min(loads):.1f} to {max(loads):.1f}")


if __name__ == "__main__":
    main()
