"""The report's latency (issue 32, "In process"): `council_db.connect(db).report(sessions=1000)`
warm and first in a fresh process, and `bias-report --sessions 1000` as a whole process.

    python benchmarks/bench_latency.py [--db FILE] [--store FILE ...] [--baseline PATH]
        [--repeats 5] [--profile] [--llm-council PATH] [--work DIR] [--write-docs]

Without --db it builds a 2,000-session store (`council-db simulate` + `import`). In each run:

- in process: a fresh Python imports council_db (untimed), then times its first
  `report(sessions=1000)` and then 10 warm ones (their median wall and CPU time);
- whole process: `council-db bias-report --sessions 1000` on the 2,000-session store and on
  each --store (opened read only, never written: a 1M-session store works), wall and CPU
  (user + system: the steadier figure on a shared machine);
- with --llm-council (llm-council 0.53.0's executable, installed apart: it is no dependency),
  the whole-window `bias-report` of the 2,000-session store over llm-council's own
  `bias-report --input` of the same sessions (the store's FILE.jsonl), timed in the same repeat.

Each figure is the median over --repeats such runs.

With --baseline (a detached worktree of main: `git worktree add --detach /tmp/main-wt main`, or
`git archive main` unpacked) the two trees' report JSON is first compared field by field (every
session, --sessions 1000 and 100: 1e-9 relative, or it stops), then every figure is measured for
both trees, old then new, alternating within each repeat, so a slow spell on a shared machine
hits both. A tree runs from its own
source (its folder first on PYTHONPATH and as the working folder). --profile prints where a warm
report's time goes: cProfile (new tree), then each part's thread CPU time in every tree. Targets:
warm <= 100 ms, first <= 250 ms, whole process <= 0.3 s on any store, the 2,000-session report
<= 0.6x llm-council's.
"""

from __future__ import annotations

import argparse
import json
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

HERE = Path(__file__).resolve().parent.parent
WARM = 10  # warm reports per fresh process: their median is one repeat's figure

IN_PROCESS = """
import importlib, json, statistics, sys, time
import council_db
for module in sys.argv[3:]:  # "after imports": what the first report would import, loaded untimed
    importlib.import_module(module)
db = council_db.connect(sys.argv[1])
start, start_cpu = time.perf_counter(), time.process_time()
db.report(sessions=1000)
first, first_cpu = time.perf_counter() - start, time.process_time() - start_cpu
warm, cpu = [], []
for _ in range(int(sys.argv[2])):
    start, start_cpu = time.perf_counter(), time.process_time()
    db.report(sessions=1000)
    warm.append(time.perf_counter() - start)
    cpu.append(time.process_time() - start_cpu)
print(json.dumps({"first": first, "first_cpu": first_cpu, "warm": statistics.median(warm or [0.0]),
                  "warm_cpu": statistics.median(cpu or [0.0]),
                  "source": council_db.__file__}))
"""

PROFILE = """
import cProfile, pstats, sys
import council_db
db = council_db.connect(sys.argv[1])
db.report(sessions=1000)
profile = cProfile.Profile()
profile.enable()
for _ in range(5):
    db.report(sessions=1000)
profile.disable()
pstats.Stats(profile).sort_stats("cumulative").print_stats(r"council_db", 45)
"""


SECTIONS = """
import functools, importlib, inspect, sys, time
import council_db
db = council_db.connect(sys.argv[1])
db.report(sessions=1000)  # every module imported before any is wrapped
spent = {}

def wrap(module_name, name):
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):  # a part this tree does not have
        return
    label = module_name.removeprefix("council_db.") + "." + name

    def add(start):
        spent[label] = spent.get(label, 0.0) + time.thread_time() - start

    @functools.wraps(function)
    def timed(*args, **kwargs):
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            add(start)

    @functools.wraps(function)
    def timed_generator(*args, **kwargs):  # a generator's work is done as it is iterated
        items = function(*args, **kwargs)
        while True:
            start = time.thread_time()
            try:
                item = next(items)
            except StopIteration:
                add(start)
                return
            add(start)
            yield item

    if inspect.isgeneratorfunction(function):
        timed = timed_generator
    for other in list(sys.modules.values()):  # where it was imported by name, too
        if getattr(other, "__name__", "").startswith("council_db") and getattr(other, name, None) is function:
            setattr(other, name, timed)

for target in sys.argv[2:]:
    wrap(*target.rsplit(".", 1))
start, start_main = time.process_time(), time.thread_time()
for _ in range(10):
    db.report(sessions=1000)
print(f"a warm report: {(time.process_time() - start) * 100:.0f} ms CPU in all threads, "
      f"{(time.thread_time() - start_main) * 100:.0f} ms in the main one; thread CPU of each part:")
for label, seconds in sorted(spent.items(), key=lambda item: -item[1]):
    print(f"  {label:<50} {seconds * 100:6.1f} ms")
"""
PARTS = ["council_db.analysis.loading.window.load_for_report", "council_db.report.builder.build",
         "council_db.analysis.joint.joint_model.fit", "council_db.analysis.sessions.anomalies.sessions",
         "council_db.analysis.drift.changepoints.search", "council_db.analysis.drift.trends.slopes",
         "council_db.report.position_section.position", "council_db.report.builder._length",
         "council_db.report.builder._agreement", "council_db.report.sections._pairs",
         "council_db.analysis.drift.version_drift.load_config_versions",
         "council_db.analysis.stats.bootstrap.session_weights", "council_db.analysis.drift.trends._choice_variance",
         "council_db.analysis.stats.effective_df.effective_df",
         "council_db.analysis.position.reviewer_position.by_reviewer"]


def tree_env(tree: Path) -> dict[str, str]:
    """The environment running ``tree``'s council_db rather than the installed one."""
    return {**ENV, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), ENV.get("PYTHONPATH", "")]))}


# What report() imports on its first call (council_db itself loads nothing until asked): the
# issue's "first call in a fresh process after imports" is timed with these loaded beforehand.
REPORT_MODULES = ["numpy", "council_db.api", "council_db.report.for_window", "council_db.report.builder",
                  "council_db.analysis.loading.window", "council_db.analysis.sessions.anomalies",
                  "council_db.analysis.drift.version_drift"]


def in_process(tree: Path, db: Path, repeats: int, preload: list[str] = ()) -> dict[str, float]:
    """A fresh interpreter's first report (``preload`` imported before it, untimed) and the
    median wall and CPU seconds of ``repeats`` warm ones (CPU, all threads: the steadier figure
    on a shared machine)."""
    answer = subprocess.run([sys.executable, "-c", IN_PROCESS, str(db), str(repeats), *preload],
                            env=tree_env(tree), cwd=tree, check=True, capture_output=True, text=True)
    figures = json.loads(answer.stdout)
    if not figures.pop("source").startswith(str(tree)):
        raise SystemExit(f"{tree}: the fresh process imported another council_db")
    return figures


def whole_process(tree: Path, command: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process running ``command`` (``council-db``
    in ``tree`` when it starts with "council-db")."""
    if command[0] == "council-db":
        command = [sys.executable, "-m", "council_db", *command[1:]]
    start = time.perf_counter()
    process = subprocess.Popen(command, env=tree_env(tree), cwd=tree, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime


def latest(store: Path) -> list[str]:
    return ["council-db", "--db", str(store), "bias-report", "--sessions", "1000"]


def small_store(work: Path, sessions: int) -> Path:
    """A simulated store of ``sessions`` sessions in ``work`` (made once, then reused)."""
    db = work / f"latency-{sessions}.db"
    if not db.exists():
        jsonl = work / f"latency-{sessions}.jsonl"
        council = [sys.executable, "-m", "council_db"]
        subprocess.run([*council, "simulate", "-o", str(jsonl), "--sessions", str(sessions)], check=True,
                       stderr=subprocess.DEVNULL)
        subprocess.run([*council, "--db", str(db), "import", "-q", str(jsonl)], check=True, stderr=subprocess.DEVNULL)
    return db


def size(db: Path) -> str:
    """A store's sessions and records, read through a read-only connection."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        sessions = connection.execute("SELECT count(*) FROM sessions").fetchone()[0]
        records = connection.execute("SELECT count(*) FROM scores").fetchone()[0]
    return f"{sessions:,} sessions, {records:,} records"


def measure(trees: dict[str, Path], db: Path, stores: list[Path], repeats: int,
            llm_council: str | None) -> dict[str, dict[str, float]]:
    """Every figure per tree, old and new measured alternately; medians over ``repeats``. With
    ``llm_council``, also each tree's whole-window report of ``db`` over llm-council's own
    bias-report of the same sessions' JSONL (beside ``db``), timed in the same repeat."""
    rows: dict[str, dict[str, list[float]]] = {}

    def add(row: str, name: str, value: float) -> None:
        rows.setdefault(row, {}).setdefault(name, []).append(value)

    jsonl = db.with_suffix(".jsonl")
    for name, tree in trees.items():  # once unmeasured: bytecode and file caches
        in_process(tree, db, 1)
        for store in [db, *stores]:
            whole_process(tree, latest(store))
    for _ in range(repeats):
        upstream = whole_process(HERE, [llm_council, "bias-report", "--input", str(jsonl)]) if llm_council else None
        for name, tree in trees.items():
            figures = in_process(tree, db, WARM)
            add("report(sessions=1000), warm", name, figures["warm"])
            add("report(sessions=1000), warm, CPU", name, figures["warm_cpu"])
            add("report(sessions=1000), first in a process", name, figures["first"])
            add("report(sessions=1000), first in a process, CPU", name, figures["first_cpu"])
            after = in_process(tree, db, 0, REPORT_MODULES)
            add("report(sessions=1000), first after imports", name, after["first"])
            add("report(sessions=1000), first after imports, CPU", name, after["first_cpu"])
            for store in [db, *stores]:
                wall, cpu = whole_process(tree, latest(store))
                add(f"bias-report --sessions 1000, {store.name}", name, wall)
                add(f"bias-report --sessions 1000, {store.name}, CPU", name, cpu)
            if upstream is not None:
                wall, cpu = whole_process(tree, ["council-db", "--db", str(db), "bias-report"])
                add(f"bias-report, {db.name}, CPU / llm-council's", name, cpu / upstream[1])
                add(f"bias-report, {db.name}, wall / llm-council's", name, wall / upstream[0])
    return {row: {name: statistics.median(times) for name, times in by_tree.items()} for row, by_tree in rows.items()}


WINDOWS = [[], ["--sessions", "1000"], ["--sessions", "100"]]  # the windows whose reports must agree
TOLERANCE = 1e-9  # relative, field by field (absolute below 1e-12)


def differences(old: object, new: object, where: str = "report") -> tuple[float, str]:
    """The largest relative difference between two reports' JSON and where it is; a field
    missing, a length or any non-number value that differs is an error (generated_at aside)."""
    if isinstance(old, dict) and isinstance(new, dict):
        if old.keys() != new.keys():
            raise SystemExit(f"{where}: fields {sorted(old.keys() ^ new.keys())} in one report only")
        pairs = [(old[key], new[key], f"{where}.{key}") for key in old if key != "generated_at"]
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            raise SystemExit(f"{where}: {len(old)} items against {len(new)}")
        pairs = [(a, b, f"{where}[{i}]") for i, (a, b) in enumerate(zip(old, new))]
    elif isinstance(old, float) and isinstance(new, (int, float)) and old != new:
        return abs(old - new) / max(abs(old), 1e-12), where
    elif old != new:
        raise SystemExit(f"{where}: {old!r} against {new!r}")
    else:
        return 0.0, where
    return max((differences(a, b, at) for a, b, at in pairs), default=(0.0, where))


def compare_reports(trees: dict[str, Path], db: Path) -> None:
    """Each window's `bias-report --json` from the baseline and this tree, field by field."""
    for window in WINDOWS:
        reports = [json.loads(subprocess.run([sys.executable, "-m", "council_db", "--db", str(db), "bias-report",
                                              "--json", *window], env=tree_env(tree), cwd=tree, check=True,
                                             capture_output=True, text=True).stdout) for tree in trees.values()]
        worst, where = differences(*reports)
        said = f"{' '.join(window) or 'every session'}: largest relative difference {worst:.1e}" + \
            (f" ({where})" if worst else "")
        if worst > TOLERANCE:
            raise SystemExit(f"the reports differ: {said}")
        print(f"same report as the baseline, {said}", flush=True)


def profile(db: Path, trees: dict[str, Path]) -> None:
    """Where a warm report's time goes: cProfile's cumulative times (which inflate code made
    of many small Python calls several times over), then each part's thread CPU time in each
    tree, measured by a wrapper around that part alone (nearly free: the figures a change
    should be judged by)."""
    subprocess.run([sys.executable, "-c", PROFILE, str(db)], env=tree_env(HERE), cwd=HERE, check=True)
    for name, tree in trees.items():
        print(f"{name}:", flush=True)
        subprocess.run([sys.executable, "-c", SECTIONS, str(db), *PARTS], env=tree_env(tree), cwd=tree, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="a store to time report() on (default: a simulated one)")
    parser.add_argument("--sessions", type=int, default=2000, help="sessions of the simulated store (default 2000)")
    parser.add_argument("--store", type=Path, action="append", default=[],
                        help="another store for the whole-process figure (read only; repeatable)")
    parser.add_argument("--baseline", type=Path, help="a worktree of main, measured beside this one")
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes of each figure; medians (default 5)")
    parser.add_argument("--profile", action="store_true", help="print where a warm report's time goes")
    parser.add_argument("--llm-council", metavar="PATH",
                        help="llm-council's executable: its bias-report of the store's JSONL (FILE.jsonl beside "
                             "--db, or the simulated one) against each tree's whole-window bias-report")
    parser.add_argument("--work", type=Path, help="where the simulated store is kept (default: a temporary folder)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    options = parser.parse_args()
    compile_council_db()
    with tempfile.TemporaryDirectory() as scratch:
        work = options.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        db = (options.db or small_store(work, options.sessions)).resolve()
        trees = {"main": options.baseline.resolve()} if options.baseline else {}
        trees["this tree"] = HERE
        if options.baseline:
            compare_reports(trees, db)
        if options.profile:
            profile(db, trees)
        figures = measure(trees, db, options.store, options.repeats, options.llm_council)
        print_and_write(options, db, trees, figures)  # the simulated store's size is read before it goes


def print_and_write(options: argparse.Namespace, db: Path, trees: dict[str, Path],
                    figures: dict[str, dict[str, float]]) -> None:
    load = os.getloadavg()
    stores = "; ".join(f"{store.name}: {size(store)}" for store in [db, *options.store])
    said = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load "
            f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; {stores}; median of {options.repeats}")
    print(said)
    names = list(trees)
    print(f"{'figure':<58}" + "".join(f"{name:>12}" for name in names) + ("   new / old" if len(names) == 2 else ""))
    rows = []
    for row, by_tree in figures.items():
        cells = [f"{by_tree[name]:.2f}" if "llm-council" in row else f"{by_tree[name] * 1000:.0f} ms" for name in names]
        ratio = [f"{by_tree[names[1]] / by_tree[names[0]]:.2f}"] if len(names) == 2 else []
        print(f"{row:<58}" + "".join(f"{cell:>12}" for cell in cells) + (f"{ratio[0]:>12}" if ratio else ""))
        rows.append([row, *cells, *ratio])
    if options.write_docs:
        header = ["figure", *names, *(["new / old"] if len(names) == 2 else [])]
        table = markdown_table(header, rows, right=set(range(1, len(header))))
        write_table("latency", table, f"{machine()}, load {load[0]:.1f}; {stores}; median of {options.repeats}")


if __name__ == "__main__":
    main()
