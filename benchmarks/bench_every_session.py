"""Every session screened: `council-db anomalies` on the report's sample against
`anomalies --every-session` (every session of the window tested against the sample's fit, in
one pass over its packed records, revision 0020, on a store `council-db db pack` packed), and
the same steps with the pass reading the score rows instead (what a store without `db pack`
reads), paired in one run on one store: wall, CPU and peak memory, with the store's size and
the machine's load.

    council-db --db FILE db pack  # once
    python benchmarks/bench_every_session.py --db FILE [--runs 2] [--baseline DIR] [--commands-only] [--write-docs]
    python benchmarks/bench_every_session.py --sessions 100000 [--work DIR] ...  # a simulated store, packed

Issue 32's target: every session at 1,000,000 sessions in <= 5 s and <= 300 MB. The last two
rows run the command's steps (the sample, its fit, the pass, the session tests; no output)
in a process of their own, reading packed records and score rows in turn, `--runs` times
each; a row shows the best run (least disturbed by other work on a shared machine).
``--baseline DIR`` runs the two commands of another tree too, alternating with this one's
(``git archive main council_db sql migrations | tar -x -C DIR``: old and new paired in one
run); ``--commands-only`` leaves out the steps' rows (reading score rows takes minutes at 1M).
``--sessions N`` builds a store of N simulated 4x4 sessions in ``--work`` and packs it (once: a
store of that size already there is reused), the size to profile at before a million.
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
from pathlib import Path

from bench_commands import COMMAND, ENV, LAUNCHER, build, run, store_size  # benchmarks/ is on the path as a script
from compiled import compile_council_db
from doc_tables import machine, markdown_table, write_table

# The command's steps, the pass reading packed records (argv[2] "packed") or score rows ("rows").
STEPS = """import sys
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.window import SAMPLE_SESSIONS, Window, load_sample
from council_db.analysis.sessions.anomalies import session_tests
from council_db.analysis.sessions.every_session import every_session
from council_db.store.database import open_reader
db = open_reader(sys.argv[1])
window = Window()
data = load_sample(db, window, SAMPLE_SESSIONS).data
cells = every_session(db, window, data, joint_model.fit(data), packed=sys.argv[2] == "packed")
assert cells is not None and session_tests(cells) is not None
"""


def steps(db: str, source: str) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak MB of the command's steps, the pass reading ``source``."""
    url = db if "://" in db else f"sqlite:///{os.path.abspath(db)}"
    launched = subprocess.run([sys.executable, "-c", LAUNCHER, sys.executable, "-c", STEPS, url, source],
                              capture_output=True, env=ENV, text=True, check=True)
    wall, status, cpu, peak = launched.stdout.split()
    if int(status) != 0:
        raise SystemExit(f"the steps reading {source} failed: {launched.stderr}")
    return float(wall), float(cpu), float(peak)


def run_tree(db: str, args: list[str], tree: Path) -> tuple[float, float, float]:
    """``run`` with council-db imported from ``tree`` (its own folder first on the path)."""
    launched = subprocess.run([sys.executable, "-c", LAUNCHER, sys.executable, "-m", "council_db", "--db",
                               os.path.abspath(db), *args], capture_output=True, text=True, check=True, cwd=tree,
                              env={**ENV, "PYTHONPATH": str(tree)})
    wall, status, cpu, peak = launched.stdout.split()
    if int(status) != 0:
        raise SystemExit(f"{tree}'s council-db {' '.join(args)} failed: {launched.stderr}")
    return float(wall), float(cpu), float(peak)


def packed(db: str) -> bool:
    """Whether `db pack` packed the store (the pass reads score rows elsewhere)."""
    from council_db.store.database import open_reader
    from council_db.store.packing import is_on

    return is_on(open_reader(db if "://" in db else f"sqlite:///{os.path.abspath(db)}"))


def simulated_store(sessions: int, work: Path) -> str:
    """A packed store of ``sessions`` simulated 4x4 sessions in ``work``, built and packed once."""
    db = str(work / f"{sessions}.db")
    if not Path(db).exists():
        work.mkdir(parents=True, exist_ok=True)
        build(sessions, work)
    if not packed(db):
        subprocess.run([*COMMAND, "--db", db, "db", "pack"], check=True, stdout=subprocess.DEVNULL)
    return db


def best(runs: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    return min(runs, key=lambda run: run[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", help="a SQLite store `council-db db pack` packed, only read")
    source.add_argument("--sessions", type=int, help="build (once) and pack a store of this many simulated sessions")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-every-session"), help="where --sessions builds")
    parser.add_argument("--runs", type=int, default=2, help="runs of each row, alternating (the best is shown)")
    parser.add_argument("--baseline", type=Path, help="another tree's council_db (e.g. main's), its commands paired")
    parser.add_argument("--commands-only", action="store_true", help="only the commands' rows, not the steps'")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    options = parser.parse_args()
    if options.sessions:
        options.db = simulated_store(options.sessions, options.work)
    if not packed(options.db):
        raise SystemExit(f"{options.db} keeps no packed records: run `council-db --db {options.db} db pack` first")
    sessions, records, _ = store_size(options.db)
    compile_council_db()
    measures = [("`anomalies` (the report's sample)", lambda: run(options.db, ["anomalies"])),
                ("`anomalies --every-session`", lambda: run(options.db, ["anomalies", "--every-session"]))]
    if options.baseline:
        compileall.compile_dir(options.baseline / "council_db", quiet=1)
        measures += [(f"{name}, baseline", lambda args=args: run_tree(options.db, args, options.baseline))
                     for name, args in (("`anomalies`", ["anomalies"]),
                                        ("`anomalies --every-session`", ["anomalies", "--every-session"]))]
    if not options.commands_only:
        measures += [("its steps, the pass reading packed records", lambda: steps(options.db, "packed")),
                     ("its steps, the pass reading score rows (no `db pack`)", lambda: steps(options.db, "rows"))]
    load = os.getloadavg()[0]
    print(f"{machine()}; store: {sessions:,} sessions, {records:,} records; load average {load:.1f}")
    rows: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(options.runs):  # alternating, so a busy spell on the machine falls on every row
        for name, measure in measures:
            wall, cpu, peak = measured = measure()
            rows.setdefault(name, []).append(measured)
            print(f"{name:<55} {wall:8.2f} s wall {cpu:8.2f} s CPU {peak:8.0f} MB", flush=True)
    table = [[name, f"{wall:.2f} s", f"{cpu:.2f} s", f"{peak:.0f} MB"]
             for name, (wall, cpu, peak) in ((name, best(runs)) for name, runs in rows.items())]
    if options.write_docs:
        write_table("every-session", markdown_table(["what", "wall", "CPU", "peak"], table, right={1, 2, 3}),
                    f"{machine()}; {sessions:,} sessions, {records:,} records; best of {options.runs} runs, "
                    f"alternating; load average {load:.1f} (a shared machine: CPU is the steadier figure)"
                    + (f"; baseline: {options.baseline}" if options.baseline else ""))


if __name__ == "__main__":
    main()
