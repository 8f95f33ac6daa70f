"""--from promptfoo import rate, on promptfoo's own export and on a generated results.json laid
out as promptfoo writes it (JSON.stringify with 2 spaces): tests x providers results, each graded
by cost, contains and one llm-rubric assertion (a record each; the others are no judge's).

    python benchmarks/bench_promptfoo.py [--records 20000] [--providers 4]

Prints each file's size, the records stored, the import's seconds and records/s (wall clock,
and per second of this process's CPU, steadier on a shared machine), and the process's peak
resident memory: the results list is read one result at a time, so the peak
stays near the interpreter's and the batch's, not the file's (--records 1000000 for 1M).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import textwrap
import time
from pathlib import Path

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.database import open_database

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "promptfoo" / "sample-export.json"
RUBRIC = {"type": "llm-rubric", "value": "Answers the question without apologising",
          "provider": {"id": "openai:gpt-4.1", "config": {"temperature": 0}}}


def result(test: int, column: int) -> dict:
    """One EvaluateResult with three assertions, one of them model-graded."""
    score = round(((test * 7 + column * 13) % 100) / 100, 2)
    components = [{"pass": True, "score": 1, "reason": "Assertion passed", "assertion": {"type": "cost",
                                                                                        "threshold": 0.002}},
                  {"pass": True, "score": 1, "reason": "Assertion passed", "assertion": {"type": "contains",
                                                                                        "value": "the"}},
                  {"pass": score >= 0.5, "score": score, "reason": "The output answers the question plainly.",
                   "namedScores": {"clarity": score}, "assertion": RUBRIC}]
    return {"cost": 0.0004, "gradingResult": {"pass": score >= 0.5, "score": score, "reason": "ok",
                                              "namedScores": {}, "componentResults": components},
            "id": f"{test:08d}-{column}", "latencyMs": 900, "namedScores": {},
            "prompt": {"raw": f"Answer question {test}", "label": "Answer: {{question}}"},
            "promptId": "a1b2c3", "promptIdx": column, "provider": {"id": f"provider-{column}", "label": ""},
            "response": {"output": "The answer is a sentence or two long. " * (1 + test % 4), "cached": False},
            "score": score, "success": score >= 0.5,
            "testCase": {"vars": {"question": f"Question number {test}?"}, "assert": [RUBRIC], "options": {}},
            "testIdx": test, "vars": {"question": f"Question number {test}?"}, "failureReason": 0}


def generated(path: Path, records: int, providers: int) -> Path:
    """A results.json of ``records`` results, written one at a time (never held whole)."""
    with path.open("w", encoding="utf-8") as out:
        out.write('{\n  "evalId": "eval-bench",\n  "results": {\n    "version": 3,\n'
                  '    "timestamp": "2025-11-02T10:00:00.000Z",\n    "prompts": [],\n    "results": [\n')
        for number in range(records):
            test, column = divmod(number, providers)
            text = textwrap.indent(json.dumps(result(test, column), indent=2), "      ")
            out.write(text + (",\n" if number < records - 1 else "\n"))
        out.write('    ],\n    "stats": {}\n  },\n  "config": {"defaultTest": {"options": {}}},\n'
                  '  "shareableUrl": null\n}\n')
    return path


def timed(template: Path, work: Path, source: Path) -> tuple[float, float, int]:
    """Seconds (wall and this process's CPU: a document is read in one process) and records of
    one import into a fresh copy of a migrated database."""
    db_file = work / "council.db"
    shutil.copy(template, db_file)
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    start, cpu = time.perf_counter(), time.process_time()
    inserted = import_files(db, [str(source)], options=FormatOptions("promptfoo")).total("inserted")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    db.engine.dispose()
    db_file.unlink()
    return elapsed, cpu, inserted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=20_000, help="results (one record each) in the generated file")
    parser.add_argument("--providers", type=int, default=4, help="providers per test (candidates per session)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        template = work / "template.db"
        open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
        runs = [("promptfoo's sample-export.json", SAMPLE),
                (f"generated, {args.records:,} results x {args.providers} providers",
                 generated(work / "results.json", args.records, args.providers))]
        print(f"{'file':<48} {'MB':>8} {'records':>10} {'seconds':>8} {'records/s':>10} {'CPU s':>7} "
              f"{'per CPU s':>10}")
        for name, source in runs:
            elapsed, cpu, inserted = timed(template, work, source)
            print(f"{name:<48} {source.stat().st_size / 1e6:>8.1f} {inserted:>10,} {elapsed:>8.2f} "
                  f"{inserted / elapsed:>10,.0f} {cpu:>7.2f} {inserted / cpu:>10,.0f}")
        print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
