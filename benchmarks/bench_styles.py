"""Style features benchmark (issue 29): what the answers' style costs on disk and in a window.

    python benchmarks/bench_styles.py [--sessions 10000]

The same simulated 4x4 llm-council sessions are imported twice into new SQLite files: as
llm-council writes them (no style), and with every record carrying response_tokens and the
three markdown counts (the worst case: arena-hard with --answers gives every record a style).
Printed: bytes per session of each (the budget is 1 KB a session for llm-council's data), the
extra bytes per styled record, the import rate of each, and the time to load the whole window
as ScoreData (load_sessions) with and without style. Data size is printed with the figures.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import tempfile
import time
from pathlib import Path

from bench_store import bytes_per_session  # benchmarks/ is on the path when run as a script

from council_db.analysis.loading.window import load_sessions
from council_db.ingest.importer import import_files
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.store.database import open_database


def styled_copy(source: Path, target: Path, seed: int) -> None:
    """Every record of ``source`` with a style: tokens about a quarter of its characters,
    markdown counts small."""
    rng = random.Random(seed)
    with source.open(encoding="utf-8") as lines, target.open("w", encoding="utf-8") as out:
        for line in lines:
            record = json.loads(line)
            record.update(response_tokens=record["response_length_chars"] // 4, markdown_headers=rng.randint(0, 4),
                          markdown_lists=rng.randint(0, 12), markdown_bold=rng.randint(0, 6))
            out.write(json.dumps(record) + "\n")


def measured(source: Path, db_file: Path, sessions: int) -> dict[str, float]:
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    start = time.perf_counter()
    summary = import_files(db, [str(source)])
    imported = time.perf_counter() - start
    loads = []
    for _ in range(3):
        start = time.perf_counter()
        data = load_sessions(db, "SELECT id FROM sessions", {})
        loads.append(time.perf_counter() - start)
    db.engine.dispose()
    return {"records": summary.total("inserted"), "rate": summary.total("inserted") / imported,
            "bytes": bytes_per_session(db_file, sessions), "load": min(loads),
            "styled": 0 if data.style is None else len(data.style)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        plain, styled = work / "plain.jsonl", work / "styled.jsonl"
        buffer = io.StringIO()
        write_jsonl(SimulationConfig(sessions=args.sessions, seed=29), buffer)
        plain.write_text(buffer.getvalue(), encoding="utf-8")
        styled_copy(plain, styled, seed=29)
        rows = {name: measured(path, work / f"{name}.db", args.sessions)
                for name, path in (("no style", plain), ("every record styled", styled))}
    records = rows["no style"]["records"]
    print(f"{args.sessions:,} simulated 4x4 sessions, {records:,} records; SQLite, best of 3 loads")
    print("| data | bytes/session | import rec/s | load s | records with a style |")
    print("|---|---:|---:|---:|---:|")
    for name, row in rows.items():
        print(f"| {name} | {row['bytes']:,.0f} | {row['rate']:,.0f} | {row['load']:.3f} | {row['styled']:,} |")
    extra = (rows["every record styled"]["bytes"] - rows["no style"]["bytes"]) * args.sessions / records
    print(f"a styled record costs {extra:.1f} bytes more (answer_styles)")


if __name__ == "__main__":
    main()
