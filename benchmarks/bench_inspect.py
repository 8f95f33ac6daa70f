"""import --from inspect rates on generated Inspect logs: each sample of a task graded by two
model-graded scorers (a panel: the model under test with model_graded_fact, another model with
model_graded_qa), each with its scorer span (span_begin, the grader's model event with its
config, the score event), so a sample gives two records; a .eval archive and the same run as
a .json log.

    python benchmarks/bench_inspect.py [--records 20000] [--layout eval json] [--repeats 1]

``write_log(path, records)`` is the generator hook: an Inspect log of about that many records
(rounded up to whole samples), laid out by the path's suffix. Prints each file's size, its
records, the wall rate and the CPU seconds of the import (a log is read in this process).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
import zipfile
from pathlib import Path

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.importer import import_files
from council_db.store.database import open_database

TASK, MODEL, PANELIST = "bench_task", "openai/gpt-4o-mini", "anthropic/claude-3-5-sonnet-latest"
SCORERS = (("model_graded_fact", MODEL, {}), ("model_graded_qa", PANELIST, {"temperature": 0.0, "seed": 42}))
GRADES = "CPI"


def spec() -> dict:
    return {"eval_id": "benchEvalId0000000000", "run_id": "benchRunId00000000000",
            "created": "2025-05-12T20:28:26-04:00", "task": TASK, "model": MODEL, "model_roles": {},
            "scorers": [{"name": name, "options": {"model": model} if model != MODEL else {}}
                        for name, model, _ in SCORERS]}


def sample(number: int) -> dict:
    """One sample: its answer, two model-graded scores and their scorer spans."""
    answer = "Use parameterized queries and prepared statements. " * (1 + number % 5)
    scores, events = {}, []
    for index, (name, model, config) in enumerate(SCORERS):
        grade = GRADES[(number + index) % 3]
        scores[name] = {"value": grade, "answer": answer, "explanation": f"Compared with the expert. GRADE: {grade}"}
        span, time = f"s{number}-{index}", f"2025-05-12T20:{number // 60 % 60:02d}:{number % 60:02d}-04:00"
        events += [{"span_id": span, "timestamp": time, "event": "span_begin", "id": span, "type": "scorer",
                    "name": name},
                   {"span_id": span, "timestamp": time, "event": "model", "model": model, "config": config,
                    "output": {"model": model, "usage": {"input_tokens": 250, "output_tokens": 40}}},
                   {"span_id": span, "timestamp": time, "event": "score", "score": scores[name]},
                   {"span_id": span, "timestamp": time, "event": "span_end", "id": span}]
    return {"id": number, "epoch": 1, "input": f"Question {number}?", "target": "the expert's answer",
            "output": {"model": MODEL, "choices": [{"message": {"role": "assistant", "content": answer}}],
                       "completion": answer},
            "scores": scores, "metadata": {}, "events": events}


def write_log(path: Path, records: int) -> Path:
    """An Inspect log of at least ``records`` records: a .eval archive, else a .json document."""
    samples = -(-records // len(SCORERS))
    header = {"version": 2, "status": "success", "eval": spec(), "plan": {"name": "plan", "steps": []},
              "stats": {"started_at": "2025-05-12T20:28:26-04:00"}}
    if path.suffix == ".eval":
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=5) as archive:
            start = {key: header[key] for key in ("version", "eval", "plan")}
            archive.writestr("_journal/start.json", json.dumps(start))
            for number in range(1, samples + 1):
                archive.writestr(f"samples/{number}_epoch_1.json", json.dumps(sample(number), indent=2))
            archive.writestr("header.json", json.dumps(header, indent=2))
        return path
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header, indent=2)[:-2] + ',\n  "samples": [\n')
        for number in range(1, samples + 1):
            out.write(("" if number == 1 else ",\n") + json.dumps(sample(number), indent=2))
        out.write("\n  ]\n}\n")
    return path


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(template: Path, work: Path, source: Path) -> tuple[float, int, float]:
    """Seconds, records and CPU seconds of one import into a fresh copy of a migrated database."""
    db_file = work / "council.db"
    shutil.copy(template, db_file)
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    cpu, start = cpu_seconds(), time.perf_counter()
    inserted = import_files(db, [str(source)], options=FormatOptions("inspect")).total("inserted")
    elapsed, used = time.perf_counter() - start, cpu_seconds() - cpu
    db.engine.dispose()
    db_file.unlink()
    return elapsed, inserted, used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="+", default=[20_000])
    parser.add_argument("--layout", nargs="+", choices=("eval", "json"), default=["eval", "json"])
    parser.add_argument("--repeats", type=int, default=1, help="imports per file; the fastest is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        template = work / "template.db"
        open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
        print("| log | MB | records | wall | records/s | CPU us/record |")
        print("|---|---|---|---|---|---|")
        for count in args.records:
            for layout in args.layout:
                source = write_log(work / f"run.{layout}", count)
                elapsed, inserted, used = min(timed(template, work, source) for _ in range(args.repeats))
                print(f"| .{layout}, {count:,} records | {source.stat().st_size / 1e6:.1f} | {inserted:,} | "
                      f"{elapsed:.1f} s | {inserted / elapsed:,.0f} | {used / inserted * 1e6:.1f} |")
                source.unlink()


if __name__ == "__main__":
    main()
