"""import --from csv and --from jsonl rates on generated tables of scores: each prompt judged
by 4 judges on 4 candidates (16 rows a session), with a display slot, a time, a category and
a quoted explanation holding a comma (and, in every 10th row, a line break).

    python benchmarks/bench_csv.py [--rows 1000000] [--repeats 1]

Target (issue 30): >= 100,000 records/s at 1M rows. Prints each file's size, records, wall
rate, and the CPU seconds of this process (which writes) and of the worker processes (which
read): on a machine shared with other work the wall rate is what the load leaves, and the
CPU figures say what the import itself costs (llm-council's own lines cost about 8.5 us a
record to write and 8 to read, measured the same way).
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.database import open_database

ROLES = (("candidate", "model"), ("category", "category"), ("position", "slot"), ("reviewer", "judge"),
         ("score", "rating"), ("session", "prompt_id"), ("time", "judged_at"))
NESTED = {"candidate": "model", "category": "meta.category", "position": "slot", "reviewer": "grader.model",
          "score": "grader.score", "session": "prompt_id", "time": "judged_at"}


def rows(count: int):
    """The generated rows as dicts, one session's 16 rows after another."""
    for number in range(count):
        session, within = divmod(number, 16)
        judge, candidate = divmod(within, 4)
        why = "clear, correct" + ("\nand complete" if number % 10 == 0 else "")
        yield {"prompt_id": f"p{session}", "model": f"model-{candidate}", "judge": f"judge-{judge}",
               "rating": (session + candidate * 3 + judge) % 10 + 1, "slot": (candidate + session) % 4,
               "judged_at": f"2025-0{session % 9 + 1}-1{judge}T10:00:00Z", "category": ("math", "coding")[session % 2],
               "why": why}


def write_csv(path: Path, count: int) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(next(rows(1))))
        writer.writeheader()
        writer.writerows(rows(count))
    return path


def write_jsonl(path: Path, count: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for row in rows(count):
            out.write(json.dumps({"prompt_id": row["prompt_id"], "model": row["model"], "slot": row["slot"],
                                  "judged_at": row["judged_at"], "meta": {"category": row["category"]},
                                  "grader": {"model": row["judge"], "score": row["rating"], "why": row["why"]}})
                      + "\n")
    return path


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds so far of this process and of its ended children (the worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def timed(template: Path, work: Path, source: Path, options: FormatOptions) -> tuple[float, int, float, float]:
    """Seconds, records, and CPU seconds (importing process, workers) of one import into a
    fresh copy of a migrated database."""
    db_file = work / "council.db"
    shutil.copy(template, db_file)
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    own, children = cpu_seconds()
    start = time.perf_counter()
    inserted = import_files(db, [str(source)], options=options).total("inserted")
    elapsed = time.perf_counter() - start
    own_after, children_after = cpu_seconds()
    db.engine.dispose()
    db_file.unlink()
    return elapsed, inserted, own_after - own, children_after - children


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--repeats", type=int, default=1, help="imports per file; the fastest is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        template = work / "template.db"
        open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
        print(f"{'file':<34} {'MB':>7} {'records':>10} {'seconds':>8} {'records/s':>10} {'us/rec writing':>15} "
              f"{'us/rec reading':>15}")
        for count in args.rows:
            runs = [(f"csv, {count:,} rows", write_csv(work / "scores.csv", count),
                     FormatOptions("csv", mapping=ROLES, scale="1-10")),
                    (f"jsonl (nested), {count:,} lines", write_jsonl(work / "scores.jsonl", count),
                     FormatOptions("jsonl", mapping=tuple(sorted(NESTED.items())), scale="1-10"))]
            for name, source, options in runs:
                elapsed, inserted, own, workers = min(timed(template, work, source, options)
                                                      for _ in range(args.repeats))
                print(f"{name:<34} {source.stat().st_size / 1e6:>7.1f} {inserted:>10,} {elapsed:>8.2f} "
                      f"{inserted / elapsed:>10,.0f} {own / inserted * 1e6:>15.1f} {workers / inserted * 1e6:>15.1f}")
                source.unlink()


if __name__ == "__main__":
    main()
