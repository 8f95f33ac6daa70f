"""The import's writer alone: prepared batches written from memory, so the readers' cost is
out of the figure.

    python benchmarks/bench_writer.py [--records 200000] [--runs 3] [--profile] [--write-docs]

The batches are what the importer hands store/writer.py (contract.score_batch.ScoreBatch, as
the readers' merged chunks), captured once from a simulated llm-council file (16 records a
session) by a real import whose writer only keeps them. Each run then writes them into a
fresh migrated SQLite file as FileImport does: ScoreWriter on ``bulk_writer()``, statistics
settled and a commit every COMMIT_EVERY_LINES records. Printed: the writer's CPU time
(process user + system: the steadier figure on a shared machine) per record, the best and
the median of the runs, and the wall rate. ``--batches FILE`` keeps the captured batches
(pickled) so that another checkout, on PYTHONPATH, writes exactly the same ones: a paired
old/new comparison. Target (issue 32): the writer at <= 2.5 us a record, so that it keeps up
with two reading processes at 200,000 records/s.
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
import sys
import tempfile
import time
from pathlib import Path

from doc_tables import machine, markdown_table, write_table  # benchmarks/ is on the path when run as a script

import council_db.ingest.importer as importer
from council_db.ingest.importer import COMMIT_EVERY_LINES, import_files, now_utc
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


def captured(records: int, folder: Path) -> list:
    """The batches the importer's readers give for ``records`` simulated records."""
    source = folder / "bias_metrics.jsonl"
    with source.open("wb") as out:
        simulated_jsonl(SimulationConfig(sessions=max(1, records // 16), seed=1), out)
    _Keeper.kept = []
    importer.ScoreWriter = _Keeper  # type: ignore[misc, assignment]
    try:
        import_files(open_database(f"sqlite:///{folder / 'capture.db'}", notify=lambda _: None), [str(source)])
    finally:
        importer.ScoreWriter = ScoreWriter  # type: ignore[misc]
    source.unlink()
    return _Keeper.kept


def written(batches: list, template: Path, target: Path, profile: cProfile.Profile | None) -> tuple[float, float]:
    """CPU and wall seconds of the writer storing ``batches`` into a copy of ``template``."""
    from sqlalchemy import insert

    from council_db.store.models import Import

    shutil.copyfile(template, target)
    db = open_database(f"sqlite:///{target}", notify=lambda _: None)
    with db.bulk_writer() as connection:
        import_id = connection.execute(insert(Import.__table__).values(
            source="bench", source_kind="file", mode="full", start_offset=0, end_offset=0, start_line=0,
            end_line=0, inserted=0, duplicates=0, rejected=0, skipped=0, status="running",
            started_at=now_utc(), council_db_version="bench")).inserted_primary_key[0]
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
    db.engine.dispose()
    target.unlink()
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batches", type=Path, help="pickled batches: read if present, else captured and kept")
    parser.add_argument("--work", type=Path, help="folder for the databases (default: a temporary one)")
    parser.add_argument("--profile", action="store_true", help="print the writer's cProfile (one more run)")
    parser.add_argument("--write-docs", action="store_true", help="put the figures into docs/benchmarks.md")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-writer-", dir=args.work))
    try:
        if args.batches is not None and args.batches.exists():
            batches = pickle.loads(args.batches.read_bytes())
        else:
            batches = captured(args.records, folder)
            if args.batches is not None:
                args.batches.write_bytes(pickle.dumps(batches, protocol=pickle.HIGHEST_PROTOCOL))
        records = sum(map(len, batches))
        template = folder / "empty.db"
        open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
        runs = [written(batches, template, folder / "run.db", None) for _ in range(args.runs)]
        per_record = sorted(cpu / records * 1e6 for cpu, _ in runs)
        best_wall = min(wall for _, wall in runs)
        load = os.getloadavg()[0]
        import council_db

        print(f"{Path(council_db.__file__).parent.parent}: {records:,} records in {len(batches)} batches; load {load:.1f}; writer CPU us/record: "
              f"best {per_record[0]:.2f}, median {statistics.median(per_record):.2f} (target {TARGET_US}); "
              f"wall {records / best_wall:,.0f} records/s (best of {args.runs})")
        if args.profile:
            profile = cProfile.Profile()
            written(batches, template, folder / "run.db", profile)
            pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        if args.write_docs:
            row = [f"{records:,}", f"{per_record[0]:.2f}", f"{statistics.median(per_record):.2f}",
                   f"{records / best_wall:,.0f}", f"{load:.1f}"]
            table = markdown_table(["records", "CPU us/record (best)", "CPU us/record (median)", "records/s (wall)",
                                    "load"], [row], right=range(5))
            write_table("writer-sqlite", table, f"{machine()}; llm-council's simulated records, 16 a session, "
                        f"{args.runs} runs")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
