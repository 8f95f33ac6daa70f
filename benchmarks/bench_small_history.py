"""Small-history benchmark: council-db's `bias-report` against llm-council's own `bias-report`
on the same file of upstream-format sessions, timed in the same run (issue 16).

    python benchmarks/bench_small_history.py [--sessions 2000] [--repeats 7]
        [--llm-council PATH | --install SPEC] [--big-store FILE] [--work DIR]

llm-council is not a council-db dependency: unless --llm-council names its `llm-council`
executable, the benchmark makes a throwaway virtualenv and `pip install`s --install (default
`llm-council-core`; a wheel's path works too). `council-db simulate` writes the sessions in
llm-council's bias_metrics.jsonl format, and llm-council reads that file with
`bias-report --input FILE`. council-db imports it once into a SQLite store; then each repeat
runs, one after the other (so a slow spell on a shared machine hits both):

- llm-council `bias-report --input FILE`;
- council-db `bias-report` on the store;
- council-db `import` into an empty store and then `bias-report` (what a first look costs);
- `council-db --help`;
- with --big-store, `council-db bias-report --sessions 1000` on that (existing, never
  written) store.

It prints the median wall and CPU (user + system) time of each, and council-db's time over
llm-council's. Targets: council-db's bias-report no slower than llm-council's (ratio <= 1),
`--help` <= 100 ms, `--sessions 1000` <= 0.5 s on any store size.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

from compiled import ENV  # benchmarks/ is on the path when run as a script
from doc_tables import machine, markdown_table, write_table

COUNCIL_DB = [sys.executable, "-m", "council_db"]


def timed(command: list[str]) -> tuple[float, float]:
    """Run ``command`` to the end; its wall seconds and CPU seconds (user + system, the
    steadier figure when other work shares the machine)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime


def install_llm_council(spec: str, where: Path) -> str:
    """A throwaway virtualenv in ``where`` with llm-council installed; its executable."""
    venv.create(where, with_pip=True)
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", spec], check=True)
    return str(where / "bin" / "llm-council")


def council_db(db: Path, *args: str) -> list[str]:
    return [*COUNCIL_DB, "--db", str(db), *args]


def fresh_import_and_report(jsonl: Path, work: Path) -> list[str]:
    """One shell command: import into an empty store, then report (each a council-db process)."""
    db = work / "first-look.db"
    for path in work.glob("first-look.db*"):
        path.unlink()
    importing = " ".join(council_db(db, "import", "-q", str(jsonl)))
    return ["sh", "-c", f"{importing} && {' '.join(council_db(db, 'bias-report'))}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000, help="simulated 4x4 sessions (default 2000)")
    parser.add_argument("--repeats", type=int, default=7, help="runs of each, alternating; medians (default 7)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--llm-council", help="an installed llm-council executable")
    source.add_argument("--install", default="llm-council-core", help="pip spec for the throwaway virtualenv")
    parser.add_argument("--big-store", type=Path, help="a large store for the --sessions 1000 figure")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = options.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        llm_council = options.llm_council or install_llm_council(options.install, work / "llm-council-venv")
        jsonl, db = work / "bias_metrics.jsonl", work / "council.db"
        subprocess.run([*COUNCIL_DB, "simulate", "-o", str(jsonl), "--sessions", str(options.sessions)],
                       check=True, stderr=subprocess.DEVNULL)
        db.unlink(missing_ok=True)
        subprocess.run(council_db(db, "import", "-q", str(jsonl)), check=True, stderr=subprocess.DEVNULL)
        runs = {
            "llm-council bias-report": lambda: [llm_council, "bias-report", "--input", str(jsonl)],
            "council-db bias-report": lambda: council_db(db, "bias-report"),
            "council-db import + bias-report": lambda: fresh_import_and_report(jsonl, work),
            "council-db --help": lambda: [*COUNCIL_DB, "--help"],
        }
        if options.big_store:
            runs["council-db bias-report --sessions 1000 (big store)"] = lambda: council_db(
                options.big_store, "bias-report", "--sessions", "1000")
        for command in runs.values():  # once unmeasured: compiled bytecode and warm file caches
            timed(command())
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        for _ in range(options.repeats):
            for name, command in runs.items():
                times[name].append(timed(command()))
        report(options, jsonl, times)


def report(options: argparse.Namespace, jsonl: Path, times: dict[str, list[tuple[float, float]]]) -> None:
    wall = {name: statistics.median(t[0] for t in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(t[1] for t in runs) for name, runs in times.items()}
    records = sum(1 for _ in jsonl.open(encoding="utf-8"))
    load = os.getloadavg()[0]
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.1f}; "
          f"{options.sessions:,} sessions, {records:,} records ({jsonl.stat().st_size / 1e6:.1f} MB); "
          f"median of {options.repeats}")
    if options.big_store:
        print(f"big store: {options.big_store} ({options.big_store.stat().st_size / 1e9:.2f} GB)")
    print(f"{'run':<52} {'wall s':>8} {'CPU s':>8}")
    for name in times:
        print(f"{name:<52} {wall[name]:>8.3f} {cpu[name]:>8.3f}")
    base = "llm-council bias-report"
    for name in ("council-db bias-report", "council-db import + bias-report"):
        print(f"{name} / {base}: wall {wall[name] / wall[base]:.2f}, CPU {cpu[name] / cpu[base]:.2f}")
    if options.write_docs:
        rows = [[name, f"{wall[name]:.3f} s", f"{cpu[name]:.3f} s", f"{wall[name] / wall[base]:.2f}"]
                for name in times]
        table = markdown_table(["run", "wall", "CPU", "wall / llm-council's"], rows, right={1, 2, 3})
        write_table("small-history", table, f"{machine()}; {options.sessions:,} sessions, {records:,} records; "
                                            f"llm-council from {options.llm_council or options.install}; "
                                            f"median of {options.repeats}")


if __name__ == "__main__":
    main()
