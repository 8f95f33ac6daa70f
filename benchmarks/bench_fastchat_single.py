"""fastchat-single import rate, on the published MT-bench grading and on larger generated
files laid out as llm_judge writes them: model after model, each grading every question's
turns, so each session (a question's turn) gains records all through the file.

    python benchmarks/bench_fastchat_single.py [--lines 50000 100000 200000] [--sessions 160]

An import whose cost per batch grows with what its sessions already hold shows here as a
rate that falls as the file grows (issue 27, item 19); a linear one keeps its rate.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.database import open_database

ROOT = Path(__file__).resolve().parents[1]
MT_BENCH = ROOT / "tests" / "data" / "realdata" / "mt-bench-orpo"


def generated(path: Path, lines: int, sessions: int) -> Path:
    """``lines`` gradings over ``sessions`` question turns, model after model as llm_judge appends them."""
    with path.open("w", encoding="utf-8") as out:
        for number in range(lines):
            model, question = divmod(number, sessions)
            out.write(json.dumps({
                "question_id": question // 2 + 81, "model": f"model-{model}", "judge": ["gpt-4", "single-v1"],
                "user_prompt": "[Question] ... [The Start of Assistant's Answer] ..." * 20,
                "judgment": "The answer is helpful. Rating: [[7]]" * 10, "score": number % 10 + 1,
                "turn": question % 2 + 1, "tstamp": 1.7e9 + number}) + "\n")
    return path


def timed(template: Path, work: Path, source: Path, options: FormatOptions) -> tuple[float, int]:
    """Seconds and records of one import into a fresh copy of a migrated database."""
    db_file = work / "council.db"
    shutil.copy(template, db_file)
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    start = time.perf_counter()
    inserted = import_files(db, [str(source)], options=options).total("inserted")
    elapsed = time.perf_counter() - start
    db.engine.dispose()
    db_file.unlink()
    return elapsed, inserted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[50_000, 100_000, 200_000])
    parser.add_argument("--sessions", type=int, default=160, help="question turns (MT-bench: 80 questions x 2)")
    parser.add_argument("--repeats", type=int, default=3, help="imports per file; the fastest is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        template = work / "template.db"
        open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
        runs = [("MT-bench ORPO (published)", MT_BENCH / "model_judgment" / "gpt-4_single.jsonl",
                 FormatOptions("fastchat-single", answers=MT_BENCH / "model_answer"))]
        runs += [(f"generated, {lines:,} gradings / {args.sessions} sessions",
                  generated(work / f"single-{lines}.jsonl", lines, args.sessions), FormatOptions("fastchat-single"))
                 for lines in args.lines]
        print(f"{'file':<42} {'MB':>7} {'records':>9} {'seconds':>8} {'records/s':>10}")
        for name, source, options in runs:
            elapsed, inserted = min(timed(template, work, source, options) for _ in range(args.repeats))
            print(f"{name:<42} {source.stat().st_size / 1e6:>7.1f} {inserted:>9,} {elapsed:>8.2f} "
                  f"{inserted / elapsed:>10,.0f}")


if __name__ == "__main__":
    main()
