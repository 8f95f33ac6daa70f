"""The import's writer alone: prepared batches written from memory, so the readers' cost is
out of the figure.

    python benchmarks/bench_writer.py [--records 200000] [--format llm-council] [--runs 3] [--baseline DIR]
        [--profile] [--write-docs]

The batches are what the importer hands store/writer.py (contract.score_batch.ScoreBatch, as
the readers' merged chunks), captured once by a real import (`council-db import --from
FORMAT`) whose writer only keeps them: of a simulated llm-council file (16 records a session),
or of bench_importers.py's generated file of another line format (``--format``). Each run then writes them into a
fresh migrated SQLite file as FileImport does: ScoreWriter on ``bulk_writer()``, statistics
settled and a commit every COMMIT_EVERY_LINES records, each run in a fresh process. Printed:
the writer's CPU time (process user + system: the steadier figure on a shared machine) per
record, the best and the median of the runs, and the wall rate. ``--baseline DIR`` runs
another checkout (its council_db on PYTHONPATH) on the same batches, alternating with this
one: a paired old/new comparison. ``--batches FILE`` keeps the captured batches (pickled,
with their format's name) for the next run. Target (issue 32): the writer at <= 2.5 us a
record, so that it keeps up with two reading processes at 200,000 records/s.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pickle
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_importers import FORMATS  # benchmarks/ is on the path when run as a script
from doc_tables import machine, markdown_table, write_table

import council_db.ingest.importer as importer
from council_db.cli.app import app
from council_db.ingest.importer import COMMIT_EVERY_LINES, now_utc
from council_db.simulate import SimulationConfig
from council_db.simulate import write_jsonl as simulated_jsonl
from council_db.store.database import open_database
from council_db.store.writer import BATCH_RECORDS, ScoreWriter

TARGET_US = 2.5


class _Keeper:
    """Stands in for ScoreWriter during the capture: keeps each batch, stores nothing."""

    kept: list = []

    def __init__(self, connection, **_options) -> None:
        self.batch_records, self.remarked = BATCH_RECORDS, []

    def write(self, batch, import_id) -> int:
        _Keeper.kept.append(batch)
        return len(batch)

    def settle(self) -> None: ...


def captured(records: int, folder: Path, format_name: str) -> list:
    """The batches the importer's readers give for ``records`` records of the format (llm-council's
    simulated, as the table's figures were taken; another format's as bench_importers.py makes it)."""
    spec = FORMATS[format_name]
    if format_name == "llm-council":
        source = folder / "bias_metrics.jsonl"
        with source.open("wb") as out:
            simulated_jsonl(SimulationConfig(sessions=max(1, records // 16), seed=1), out)
    else:
        source = spec.write(folder, records)
    _Keeper.kept = []
    importer.ScoreWriter = _Keeper  # type: ignore[misc, assignment]
    try:
        app(["--db", f"sqlite:///{folder / 'capture.db'}", "import", "--from", format_name, str(source),
             *spec.options], standalone_mode=False)
    finally:
        importer.ScoreWriter = ScoreWriter  # type: ignore[misc]
    source.unlink()
    return _Keeper.kept


def written(batches: list, template: Path, target: Path, profile: cProfile.Profile | None) -> tuple[float, float]:
    """CPU and wall seconds of the writer storing ``batches`` into a copy of ``template``."""
    from council_db.store import database

    shutil.copyfile(template, target)
    opener = getattr(database, "open_writer", open_database)  # as an import opens it (a baseline may lack it)
    db = opener(f"sqlite:///{target}", notify=lambda _: None)
    with db.bulk_writer() as connection:
        import_id = connection.exec_driver_sql(
            "INSERT INTO imports (source, source_kind, mode, start_offset, end_offset, start_line, end_line, inserted, "
            "duplicates, rejected, skipped, status, started_at, council_db_version) VALUES ('bench', 'file', 'full', "
            "0, 0, 0, 0, 0, 0, 0, 0, 'running', ?, 'bench')", (now_utc().isoformat(" "),)).lastrowid
        connection.commit()
        gc.disable()  # as the importer runs (importer._paused_gc)
        cpu, wall = time.process_time(), time.perf_counter()
        if profile is not None:
            profile.enable()
        writer, since_commit = ScoreWriter(connection, stats_at_commit=True), 0
        for batch in batches:
            writer.write(batch, import_id)
            since_commit += len(batch)
            if since_commit >= COMMIT_EVERY_LINES:
                writer.settle()
                connection.commit()
                since_commit = 0
        writer.settle()
        connection.commit()
        if profile is not None:
            profile.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        gc.enable()
    db.dispose()
    target.unlink()
    return cpu, wall


def _described(format_name: str) -> str:
    if format_name == "llm-council":
        return "llm-council's simulated records (16 a session)"
    return f"{format_name}'s records as bench_importers.py generates them"


def one_run(batch_file: Path, folder: Path, checkout: Path | None) -> tuple[float, float]:
    """CPU and wall seconds of one run in a fresh process: this checkout's council_db, or
    ``checkout``'s (on PYTHONPATH), writing the same pickled batches."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout), *filter(None, [env.get("PYTHONPATH")])])
    found = subprocess.run([sys.executable, __file__, "--batches", str(batch_file), "--work", str(folder), "--one-run"],
                           env=env, capture_output=True, text=True, check=True).stdout.split()
    return float(found[0]), float(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--format", choices=list(FORMATS), default="llm-council", help="the line format captured")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout, alternating")
    parser.add_argument("--batches", type=Path, help="pickled batches: read if present, else captured and kept")
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. a worktree of main), run paired")
    parser.add_argument("--work", type=Path, help="folder for the databases (default: a temporary one)")
    parser.add_argument("--profile", action="store_true", help="print the writer's cProfile (one more run)")
    parser.add_argument("--write-docs", action="store_true", help="put the figures into docs/benchmarks.md")
    parser.add_argument("--one-run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-writer-", dir=args.work))
    try:
        if args.one_run:
            batches = pickle.loads(args.batches.read_bytes())["batches"]
            template = folder / "empty.db"
            open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
            print(*written(batches, template, folder / "run.db", None))
            return
        batch_file = args.batches or folder / "batches.pickle"
        if not batch_file.exists():
            kept = {"format": args.format, "batches": captured(args.records, folder, args.format)}
            batch_file.write_bytes(pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
        kept = pickle.loads(batch_file.read_bytes())
        args.format, batches = kept["format"], kept["batches"]
        records, load = sum(map(len, batches)), os.getloadavg()[0]
        checkouts = {"this checkout": None, **({f"baseline ({args.baseline})": args.baseline} if args.baseline else {})}
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
        for _ in range(args.runs):
            for name, checkout in checkouts.items():
                runs[name].append(one_run(batch_file, folder, checkout))
        rows = []
        for name, found in runs.items():
            per_record = sorted(cpu / records * 1e6 for cpu, _ in found)
            best_wall = min(wall for _, wall in found)
            rows.append([name, f"{records:,}", f"{per_record[0]:.2f}", f"{statistics.median(per_record):.2f}",
                         f"{records / best_wall:,.0f}"])
            print(f"{name}: {records:,} {args.format} records in {len(batches)} batches; writer CPU us/record: best "
                  f"{per_record[0]:.2f}, median {statistics.median(per_record):.2f} (target {TARGET_US}); wall "
                  f"{records / best_wall:,.0f} records/s (best of {args.runs})")
        print(f"load average at the start: {load:.1f}")
        if args.profile:
            template = folder / "empty.db"
            open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
            profile = cProfile.Profile()
            written(batches, template, folder / "run.db", profile)
            pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        if args.write_docs:
            table = markdown_table(["council_db", "records", "CPU us/record (best)", "CPU us/record (median)",
                                    "records/s (wall, best)"], rows, right=range(1, 5))
            write_table("writer-sqlite", table, f"{machine()}; {_described(args.format)} in "
                        f"{len(batches)} batches; {args.runs} runs each, alternating; load {load:.1f} at the start")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
