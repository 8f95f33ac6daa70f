"""`council-db check`'s false failures on data with nothing planted, and its time beside the report's.

    python benchmarks/bench_check.py [--datasets 100] [--sessions 200] [--workers 1] [--store 2000]

False failures: --datasets simulated windows of --sessions sessions (seeds 0..N-1; four
reviewers of equal severity scoring four equal models, no position, length or self-preference
effect, nothing drifting), each one's report built as `check` builds it, judged by the default
rules (no-flags: any flag at q <= 0.05, one Benjamini-Hochberg family, so under the complete
null at most about 5% of windows) and by every figure rule at a tight bound (no-flags,
severity-max 0.1, length-max 0.1, on the CI). Printed: the share of windows that fail, with its
95% Wilson interval, and the data size.

Time: a SQLite store of --store sessions (simulated, imported); printed, the median of 3 runs of
building the window's report (report_for_window, what bias-report runs) and of judging every
rule on it and writing each format, then the wall time of `council-db check` and of `council-db
bias-report --json` as processes: what check costs beyond the report.

    python benchmarks/bench_check.py --db FILE|URL [--runs 3] [--audit] [--write-docs]

On an existing store (read only; the 1M-session one for the target: check <= 3 s): the best of
--runs of the window's whole report and of the report check builds for its rules
(report_for_window(for_rules=True): no alpha, no version-drift lookups), in process and in
turn, then of `council-db check` as a process (wall, CPU, peak RSS), with the store's size and
the machine's 1-minute load before each; --audit adds one `export --audit` and one `--verify-audit` of the
whole store (a temporary bundle). --write-docs puts the table in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from council_db.analysis.loading.score_data import from_records
from council_db.gate import outputs, rules, verdicts
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl

DEFAULT = rules.merged([], [], None)
EVERY_FIGURE = [rules.Rule("no-flags"), rules.Rule("severity-max", 0.1), rules.Rule("length-max", 0.1)]


def failures(seed: int, sessions: int) -> tuple[bool, bool]:
    """Whether the default rules and the tight figure rules fail one null window."""
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=sessions, seed=seed), out)
    report = build(from_records([json.loads(line) for line in out.getvalue().splitlines()]))
    return tuple(verdicts.exit_code(verdicts.judge(report, chosen)) == 1 for chosen in (DEFAULT, EVERY_FIGURE))


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's 95% score interval of the share k/n."""
    p, denominator = k / n, 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def false_failures(datasets: int, sessions: int, workers: int) -> None:
    with ProcessPoolExecutor(workers) as pool:
        found = list(pool.map(failures, range(datasets), [sessions] * datasets))
    print(f"false failures on {datasets} null windows of {sessions} sessions "
          f"({sessions * 16:,} records each: 4 reviewers x 4 models)")
    for name, column in (("default rules (no-flags)", 0), ("no-flags, severity-max 0.1, length-max 0.1", 1)):
        k = sum(row[column] for row in found)
        low, high = wilson(k, datasets)
        print(f"  {name}: {k}/{datasets} = {k / datasets:.1%} (95% CI {low:.1%} to {high:.1%})")


def _median_seconds(run, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _process(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "council_db", *args], capture_output=True, check=False)
    return time.perf_counter() - start


def timing(store_sessions: int) -> None:
    from council_db.analysis.loading.window import Window
    from council_db.report.for_window import report_for_window
    from council_db.store.database import open_database

    with tempfile.TemporaryDirectory() as tmp:
        log, db_path = Path(tmp) / "log.jsonl", Path(tmp) / "council.db"
        with log.open("w") as out:
            write_jsonl(SimulationConfig(sessions=store_sessions, seed=1), out)
        subprocess.run([sys.executable, "-m", "council_db", "--db", str(db_path), "import", str(log)],
                       capture_output=True, check=True)
        db = open_database(f"sqlite:///{db_path}", notify=lambda _: None)
        made = report_for_window(db, Window(), {})
        every = [*EVERY_FIGURE, rules.Rule("min-tier", "high"), rules.Rule("agreement-min", 0.5),
                 rules.Rule("position-consistency-min", 0.5)]

        def judged() -> None:
            found = verdicts.judge(made.report, every)
            outputs.text(found, made.report.window), outputs.as_json(found, every, made.report.window)
            outputs.junit(found), outputs.github(found), outputs.step_summary(found, made.report.window)

        report_s = _median_seconds(lambda: report_for_window(db, Window(), {}))
        judge_s = _median_seconds(judged, repeats=20)
        check_s = statistics.median(_process("--db", str(db_path), "check", "--no-flags", "--severity-max", "0.1",
                                             "--length-max", "0.1", "--json") for _ in range(3))
        bias_s = statistics.median(_process("--db", str(db_path), "bias-report", "--json") for _ in range(3))
    print(f"time on a store of {store_sessions:,} sessions ({store_sessions * 16:,} records), median of 3:")
    print(f"  the window's report (report_for_window): {report_s:.3f} s")
    print(f"  judging {len(every)} rules and writing all four formats and the step summary: {judge_s * 1000:.2f} ms")
    print(f"  council-db check (process): {check_s:.2f} s; council-db bias-report --json (process): {bias_s:.2f} s; "
          f"check's overhead {check_s - bias_s:+.2f} s")


def _timed(run) -> tuple[float, float]:
    """Wall seconds and CPU seconds of this process (less sensitive to the machine's other work)."""
    start, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - start, time.process_time() - cpu


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def on_store(db: str, runs: int, audit: bool, write_docs: bool) -> None:
    """check's time on an existing store, and the shortcut's share of it."""
    from bench_commands import run, store_size  # benchmarks/ is on the path when run as a script
    from doc_tables import machine, markdown_table, write_table

    from council_db.analysis.loading.window import Window
    from council_db.report.for_window import report_for_window
    from council_db.store.database import open_reader

    url = db if "://" in db else f"sqlite:///{Path(db).resolve()}"
    sessions, records, _ = store_size(db)
    database = open_reader(url)
    # the processes first: a child forked from this process once it holds reports would count
    # their memory in its peak RSS
    processes = [["check", "--min-sessions", "1"]]  # the report, then a rule that passes (a failure exits 1)
    with tempfile.TemporaryDirectory() as tmp:
        bundle = str(Path(tmp) / "audit.zip")
        if audit:
            processes += [["export", "--audit", bundle], ["export", "--verify-audit", bundle]]
        process_rows = []
        for args in processes:
            load = _load()
            found = [run(db, args) for _ in range(runs if args[0] == "check" else 1)]
            wall, cpu, peak = (min(t[i] for t in found) for i in range(3))
            shown = " ".join(args if args[0] == "check" else args[:2])
            process_rows.append([f"`council-db {shown}`", f"{wall:.2f} s", f"{cpu:.2f} s", f"{peak:.0f} MB", load])
    kinds = {"the whole report (bias-report's)": False, "the report for check's rules": True}
    load, times = _load(), {name: [] for name in kinds}
    for _ in range(runs):  # the two in turn, so a change in the machine's load touches both alike
        for name, for_rules in kinds.items():
            times[name].append(_timed(lambda: report_for_window(database, Window(), {}, for_rules=for_rules)))
    rows = [[f"{name}, in process", f"{min(t[0] for t in found):.2f} s", f"{min(t[1] for t in found):.2f} s", "",
             load] for name, found in times.items()] + process_rows
    table = markdown_table(["what", "wall (best)", "CPU (best)", "peak (least)", "load before"], rows,
                           right={1, 2, 3, 4})
    measured_on = f"{machine()}; {sessions:,} sessions, {records:,} records; best of {runs}"
    print(table + "\n\n" + measured_on)
    if write_docs:
        write_table("check-store", table, measured_on)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--store", type=int, default=2000, help="sessions in the timed store (0: no timing)")
    parser.add_argument("--db", help="time check on this existing store (read only) instead")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--audit", action="store_true", help="--db: time export --audit and --verify-audit too")
    parser.add_argument("--write-docs", action="store_true", help="--db: write the table into docs/benchmarks.md")
    args = parser.parse_args()
    if args.db:
        on_store(args.db, args.runs, args.audit, args.write_docs)
        return
    false_failures(args.datasets, args.sessions, args.workers)
    if args.store:
        timing(args.store)


if __name__ == "__main__":
    main()
