"""Rubric dimensions benchmark (issue 30): what a record's named scores cost on disk and at import.

    python benchmarks/bench_dimensions.py [--sessions 20000] [--dimensions 4] [--integer-scale] [--postgres URL]

The same simulated 4x4 llm-council sessions are imported into new databases twice: without
dimensions, and with every scored record carrying --dimensions named scores (llm-council's
rubric names, simulate --dimensions). Printed: bytes per session of each on SQLite (the budget
is 1 KB a session for llm-council's data), the extra bytes per named score, and the import rate
of each (records a second, the whole import command's time), with the data size. With
--integer-scale every score is whole (as llm-council's rubric asks for 1-10), which SQLite
stores in one byte instead of a float's eight. --postgres
also imports both into that (empty) database's fresh schemas, one after the other.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

from bench_store import bytes_per_session  # benchmarks/ is on the path when run as a script

from council_db.ingest.importer import import_files
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.simulate.dimensions import RUBRIC
from council_db.store.database import open_database


def simulated(path: Path, sessions: int, dimensions: int, integer_scale: bool) -> None:
    buffer = io.StringIO()
    write_jsonl(SimulationConfig(sessions=sessions, seed=30, dimensions=list(RUBRIC[:dimensions]),
                                 integer_scale=integer_scale), buffer)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def imported(url: str, source: Path) -> tuple[int, float]:
    """Records stored and their import's rate (records a second)."""
    db = open_database(url, notify=lambda _: None)
    start = time.perf_counter()
    summary = import_files(db, [str(source)])
    seconds = time.perf_counter() - start
    db.engine.dispose()
    return summary.total("inserted"), summary.total("inserted") / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--dimensions", type=int, default=4, choices=range(1, len(RUBRIC) + 1))
    parser.add_argument("--integer-scale", action="store_true", help="whole scores 1..10 (llm-council's rubric)")
    parser.add_argument("--postgres", metavar="URL", help="an empty PostgreSQL database to import into as well")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for name, count in (("no dimensions", 0), (f"{args.dimensions} dimensions", args.dimensions)):
            source = work / f"{count}.jsonl"
            simulated(source, args.sessions, count, args.integer_scale)
            records, rate = imported(f"sqlite:///{work / f'{count}.db'}", source)
            row = {"name": name, "records": records, "rate": rate, "bytes": bytes_per_session(work / f"{count}.db",
                                                                                               args.sessions)}
            if args.postgres:
                from sqlalchemy import create_engine

                engine = create_engine(args.postgres.replace("postgresql://", "postgresql+psycopg://", 1))
                with engine.begin() as connection:  # each run on an empty schema
                    connection.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
                engine.dispose()
                row["pg_rate"] = imported(args.postgres, source)[1]
            rows.append(row)
    records = rows[0]["records"]
    print(f"{args.sessions:,} simulated 4x4 sessions, {records:,} records; named scores: "
          f"{records * args.dimensions:,} ({args.dimensions} a record); "
          + ("whole scores" if args.integer_scale else "scores in tenths"))
    print("| data | bytes/session (SQLite) | import rec/s (SQLite) |" + (" import rec/s (PostgreSQL) |" if args.postgres
                                                                        else ""))
    print("|---|---:|---:|" + ("---:|" if args.postgres else ""))
    for row in rows:
        print(f"| {row['name']} | {row['bytes']:,.0f} | {row['rate']:,.0f} |"
              + (f" {row['pg_rate']:,.0f} |" if args.postgres else ""))
    extra = (rows[1]["bytes"] - rows[0]["bytes"]) * args.sessions / (records * args.dimensions)
    print(f"a named score costs {extra:.1f} bytes (score_dimensions)")


if __name__ == "__main__":
    main()
