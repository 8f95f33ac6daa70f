"""Where an import's CPU goes, process by process, paired against another checkout.

    python benchmarks/bench_import_cpu.py [--records 200000] [--format llm-council] [--runs 3]
        [--baseline DIR] [--profile]

One generated file (bench_importers.py's generator for the format) is imported by the whole
CLI (`council-db import`, in-process in a fresh interpreter) into a fresh migrated SQLite
file, once per run and checkout, alternating with ``--baseline`` (another checkout's
council_db on PYTHONPATH, e.g. a worktree of main), so both meet the same load. Printed per
checkout, medians of the runs: CPU us a record of the importing process (the writer, the
pipe drains and start-up) and of its reading processes (user + system of the reaped worker
processes), their sum, the wall rate, and each side's busy share: its CPU over the import's
wall time (the writer's of one core, the readers' of the worker processes' cores). A writer
well under 1 waits for the readers; readers under 1 each wait for the writer or for a core.
On a shared machine the CPU figures are the steadier ones; the load average is printed.
``--profile`` adds one run of this checkout under cProfile: the importing process and each
reading process, their top functions by own time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_importers import FORMATS  # benchmarks/ is on the path when run as a script
from doc_tables import machine

from council_db.ingest.pipeline import MAX_WORKERS, PARALLEL_MIN_BYTES
from council_db.store.database import open_database

# Run in a fresh interpreter: the CLI in-process, then the process's and its reaped
# children's CPU. With a profile folder, each reading process is profiled as well, by CPU time
# (a wall-clock profile on a shared machine counts the time other processes held the core).
_RUN = r"""
import cProfile, json, os, resource, runpy, sys, time
import council_db.ingest.importer as importer
out, profiles, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
marks = {"waited": 0.0}
merged = importer.merged
def timed(*args, **kwargs):
    # the writer's phases (CPU of this thread and wall, from the start), and the wall time it
    # spent waiting for the readers' next chunk beyond the CPU it spent getting it
    marks["reading"] = (time.thread_time(), time.perf_counter() - start)
    found = merged(*args, **kwargs)
    while True:
        cpu, wall = time.thread_time(), time.perf_counter()
        chunk = next(found, None)
        marks["waited"] += (time.perf_counter() - wall) - (time.thread_time() - cpu)
        if chunk is None:
            break
        yield chunk
    marks["read"] = (time.thread_time(), time.perf_counter() - start)
importer.merged = timed
if profiles:
    import council_db.ingest.pipeline as pipeline
    work = pipeline._work
    def profiled(*args, **kwargs):
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        try:
            work(*args, **kwargs)
        finally:
            profile.disable()
            profile.dump_stats(os.path.join(profiles, f"reader-{os.getpid()}.prof"))
    pipeline._work = profiled
    main_profile = cProfile.Profile(time.thread_time)  # the pipe-draining threads' CPU apart
    main_profile.enable()
sys.argv = ["council-db", *argv]
start = time.perf_counter()
try:
    runpy.run_module("council_db", run_name="__main__")
except SystemExit as end:
    if end.code:
        raise
wall = time.perf_counter() - start
if profiles:
    main_profile.disable()
    main_profile.dump_stats(os.path.join(profiles, "writer.prof"))
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as found:
    json.dump({"wall": wall, "writer": own.ru_utime + own.ru_stime, "main_thread": time.thread_time(),
               "readers": children.ru_utime + children.ru_stime, **marks}, found)
"""


def one_run(checkout: Path | None, folder: Path, template: Path, source: Path, options: tuple[str, ...],
            format_name: str, profiles: Path | None = None) -> dict:
    """The CPU and wall seconds of one import in a fresh process; ``checkout``'s council_db
    first on PYTHONPATH when given."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout), *filter(None, [env.get("PYTHONPATH")])])
    db_file, out = folder / "run.db", folder / "run.json"
    shutil.copyfile(template, db_file)
    command = [sys.executable, "-c", _RUN, str(out), str(profiles or ""), "--db", f"sqlite:///{db_file}", "import",
               "--from", format_name, str(source), *options]
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=folder)
    if done.returncode:
        raise SystemExit(f"import failed ({done.returncode}): {done.stderr}")
    found = json.loads(out.read_text())
    with sqlite3.connect(db_file) as stored:
        found["records"] = stored.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
    for made in folder.glob("run.db*"):
        made.unlink()
    return found


def _median(runs: list[dict], key) -> float:
    return statistics.median(key(run) for run in runs)


def summary(name: str, runs: list[dict], workers: int) -> str:
    """Medians of the runs: CPU us a record per side, wall rate, busy shares."""
    records = runs[0]["records"]
    writer, thread, readers = (_median(runs, lambda r, side=side: r[side] / records * 1e6)
                               for side in ("writer", "main_thread", "readers"))
    total = _median(runs, lambda r: (r["writer"] + r["readers"]) / records * 1e6)
    each = ", ".join(f"{(r['writer'] + r['readers']) / records * 1e6:.1f}" for r in runs)
    return (f"{name}: CPU us/record writer {writer:.1f} (its main thread {thread:.1f}), readers {readers:.1f}, "
            f"total {total:.1f} (runs: {each}); "
            f"{_median(runs, lambda r: records / r['wall']):,.0f} records/s wall; busy: writer "
            f"{_median(runs, lambda r: r['writer'] / r['wall']):.2f}, each reader "
            f"{_median(runs, lambda r: r['readers'] / r['wall'] / workers):.2f}; {records:,} records")


def phases(runs: list[dict]) -> str:
    """Medians of the writer's phases: start-up, reading and writing (and its wait for chunks), the end."""
    def median(key) -> str:
        return f"{_median(runs, key):.2f}"

    return (f"  phases (median): start-up {median(lambda r: r['reading'][1])} s wall, "
            f"{median(lambda r: r['reading'][0])} s CPU; reading and writing "
            f"{median(lambda r: r['read'][1] - r['reading'][1])} s wall, "
            f"{median(lambda r: r['read'][0] - r['reading'][0])} s CPU of the writer's thread, of which it waited "
            f"for chunks {median(lambda r: r['waited'])} s; the end {median(lambda r: r['wall'] - r['read'][1])} s "
            f"wall, {median(lambda r: r['main_thread'] - r['read'][0])} s CPU")


def print_profiles(folder: Path, lines: int, sort: str) -> None:
    import pstats

    for made in sorted(folder.glob("*.prof")):
        print(f"\n=== {made.stem} ===")
        pstats.Stats(str(made), stream=sys.stdout).sort_stats(sort).print_stats(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--format", choices=list(FORMATS), default="llm-council")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout, alternating")
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. a worktree of main), run paired")
    parser.add_argument("--profile", action="store_true", help="one more run under cProfile, every process")
    parser.add_argument("--profile-lines", type=int, default=25)
    parser.add_argument("--profile-sort", default="tottime", help="pstats sort key (tottime, cumtime)")
    parser.add_argument("--source", type=Path, help="import this file of the format (default: one generated)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-import-cpu-"))
    try:
        template = folder / "empty.db"
        open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
        made = folder / "source"
        made.mkdir()
        spec = FORMATS[args.format]
        source = args.source or spec.write(made, args.records)
        size = source.stat().st_size
        workers = min(MAX_WORKERS, os.cpu_count() or 1) if size >= PARALLEL_MIN_BYTES else 1
        print(f"{args.format}: {source.name}, {size / 1e6:,.0f} MB; {machine()}; "
              f"load {os.getloadavg()[0]:.1f} at the start")
        checkouts = {"this checkout": None, **({f"baseline ({args.baseline})": args.baseline} if args.baseline else {})}
        runs: dict[str, list[dict]] = {name: [] for name in checkouts}
        for _ in range(args.runs):
            for name, checkout in checkouts.items():
                runs[name].append(one_run(checkout, folder, template, source, spec.options, args.format))
        with open(source, "rb") as lines:
            count = sum(chunk.count(b"\n") for chunk in iter(lambda: lines.read(1 << 24), b""))
        for name, found in runs.items():
            if found:
                print(summary(name, found, workers))
                print(phases(found))
        print(f"{count:,} lines; load {os.getloadavg()[0]:.1f} at the end")
        if args.profile:
            profiles = folder / "profiles"
            profiles.mkdir()
            one_run(None, folder, template, source, spec.options, args.format, profiles)
            print_profiles(profiles, args.profile_lines, args.profile_sort)
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
