"""Judge provenance benchmark (issue 30): what a reviewer's prompt, temperature and seed cost.

    python benchmarks/bench_provenance.py [--sessions 20000]

The same simulated 4x4 llm-council sessions are imported into new SQLite files three times: as
llm-council writes them (no provenance), with every record's judge stating one prompt and a
temperature (each judge one identity), and with each judge's prompt alternating between two
by session (each judge two identities: eight reviewers). Printed: bytes per session of each
(the budget is 1 KB a session for llm-council's data; an identity is a models row, so a record
costs no byte more), the reviewers stored, and the import rate of each. Data size is printed
with the figures.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from pathlib import Path

from bench_store import bytes_per_session  # benchmarks/ is on the path when run as a script

from council_db.ingest.importer import import_files
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.store.database import open_database


def with_provenance(source: Path, target: Path, prompts: int) -> None:
    """Every record of ``source`` whose judge states a prompt (one of ``prompts``, by session)
    and a temperature."""
    with source.open(encoding="utf-8") as lines, target.open("w", encoding="utf-8") as out:
        for line in lines:
            record = json.loads(line)
            prompt = sum(map(ord, record["session_id"])) % prompts
            record.update(reviewer_prompt=f"single-v{prompt + 1}", reviewer_temperature=0.0)
            out.write(json.dumps(record) + "\n")


def measured(source: Path, db_file: Path, sessions: int) -> dict[str, float]:
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    start = time.perf_counter()
    summary = import_files(db, [str(source)])
    imported = time.perf_counter() - start
    with db.engine.connect() as connection:
        reviewers = connection.exec_driver_sql("SELECT COUNT(DISTINCT reviewer_id) FROM scores").scalar_one()
    db.engine.dispose()
    return {"records": summary.total("inserted"), "rate": summary.total("inserted") / imported,
            "bytes": bytes_per_session(db_file, sessions), "reviewers": reviewers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        plain, one, two = work / "plain.jsonl", work / "one.jsonl", work / "two.jsonl"
        buffer = io.StringIO()
        write_jsonl(SimulationConfig(sessions=args.sessions, seed=30), buffer)
        plain.write_text(buffer.getvalue(), encoding="utf-8")
        with_provenance(plain, one, prompts=1)
        with_provenance(plain, two, prompts=2)
        rows = {name: measured(path, work / f"{number}.db", args.sessions) for number, (name, path) in enumerate(
            (("no provenance", plain), ("one prompt per judge", one), ("two prompts per judge", two)))}
    records = rows["no provenance"]["records"]
    print(f"{args.sessions:,} simulated 4x4 sessions, {records:,} records; SQLite")
    print("| data | bytes/session | reviewers | import rec/s |")
    print("|---|---:|---:|---:|")
    for name, row in rows.items():
        print(f"| {name} | {row['bytes']:,.0f} | {row['reviewers']} | {row['rate']:,.0f} |")


if __name__ == "__main__":
    main()
