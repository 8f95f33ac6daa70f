"""openai-evals import rate: generated run logs of a model-graded eval laid out as oaieval
writes them, imported into an empty SQLite database.

    python benchmarks/bench_openai_evals.py [--records 1000000] [--runs 10] [--repeats 1] [--reading]
        [--reading-only] [--baseline DIR]

``--runs`` logs joined with ``cat`` (one candidate each, graded by one grader, over the same
samples: records / runs sessions), each sample's events as classify.py records them (its
raw_sample, the answer's sampling, the grader's, the metrics) and interleaved as evals' threads
write them. It prints the file's size, the records, the wall time, records/s and the CPU per
record of the import (this process, which writes, and its reading process: a large run log is
read start to end by one worker, its first line saying whose run the rest is).

``--reading`` adds what that one reading process spends a record, read here without a
database as pipeline._work reads it: the lines' split, the reader (lines to records or
columns), the normaliser (to rows) and each chunk pickled, apart. Reading bounds the rate: its
CPU per record, in one process, is what one worker can give. ``--reading-only`` skips the
import; ``--baseline DIR`` reads the same log with another checkout's council_db (e.g. ``git
archive main council_db | tar -x -C DIR``), each in a fresh process, alternating ``--repeats``
times, and prints each side's medians. ``--reading-of LOG`` reads one log and prints its
figures as JSON (what ``--baseline`` runs; under ``valgrind --tool=callgrind`` it gives the
reading's instructions, steady on a loaded machine).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from council_db.ingest.formats.options import FormatOptions
from council_db.ingest.formats.readers import reader
from council_db.ingest.importer import import_files
from council_db.ingest.lines import read_batches
from council_db.ingest.normalise import Normaliser
from council_db.ingest.pipeline import Chunk
from council_db.ingest.sources import resolve_sources
from council_db.store.database import open_database

THREADS = 10  # EVALS_THREADS' default: how many samples' events interleave
CHOICES = (("A", 0.5), ("B", 0.75), ("C", 1.0), ("D", 0.0), ("E", 0.75))
GRADING = ("You are comparing a submitted answer to an expert answer on a given question. Here is the data:\n"
           "[BEGIN DATA]\n************\n[Question]: {q}\n************\n[Expert]: {ideal}\n************\n"
           "[Submission]: {answer}\n************\n[END DATA]\n\nCompare the factual content of the submitted answer "
           "with the expert answer. ...")


def spec(run: int, candidate: str) -> dict:
    functions = [candidate, "gpt-4"]
    return {"spec": {"completion_fns": functions, "eval_name": "fact.dev.v0", "base_eval": "fact", "split": "dev",
                     "run_config": {"completion_fns": functions, "eval_spec": {
                         "cls": "evals.elsuite.modelgraded.classify:ModelBasedClassify",
                         "args": {"samples_jsonl": "fact/samples.jsonl", "eval_type": "cot_classify",
                                  "modelgraded_spec": "fact", "eval_kwargs": {"temperature": 0, "seed": 7}},
                         "key": "fact.dev.v0", "group": "fact"}, "seed": 20220722},
                     "created_by": "", "run_id": f"2405021015{run:02d}BENCHRUN", "created_at": "2024-05-02 10:15:00"}}


def sample_events(sample: int, answer_words: int, choice: tuple[str, float]) -> list[tuple[str, str, dict]]:
    sid, question = f"fact.dev.{sample}", f"Question {sample}: what is the capital of country {sample}?"
    answer = " ".join(["The capital is a city of that country."] * answer_words)
    return [(sid, "raw_sample", {"input": [{"role": "user", "content": question}], "ideal": "A city."}),
            (sid, "sampling", {"prompt": [{"role": "user", "content": question}], "sampled": [answer]}),
            (sid, "sampling", {"prompt": [{"role": "user", "content": GRADING.format(q=question, ideal="A city.",
                                                                                        answer=answer)}],
                               "sampled": [f"The submission ...\n{choice[0]}\n{choice[0]}"]}),
            (sid, "metrics", {"choice": choice[0], "score": choice[1]})]


def write_log(path: Path, records: int, runs: int) -> Path:
    """``runs`` run logs joined, each grading records // runs samples, THREADS samples' events interleaved."""
    samples = records // runs
    with path.open("w", encoding="utf-8") as out:
        for run in range(runs):
            run_id = spec(run, f"model-{run}")["spec"]["run_id"]
            out.write(json.dumps(spec(run, f"model-{run}")) + "\n")
            event_id = 0
            for first in range(0, samples, THREADS):
                group = [sample_events(sample, 1 + (sample * 7 + run) % 9, CHOICES[(sample + run) % 5])
                         for sample in range(first, min(first + THREADS, samples))]
                for step in range(4):  # the threads' k-th events, one sample after another
                    for events in group:
                        sid, kind, data = events[step]
                        out.write(json.dumps({"run_id": run_id, "event_id": event_id, "sample_id": sid, "type": kind,
                                              "data": data, "created_by": "",
                                              "created_at": f"2024-05-02 10:{15 + run:02d}:00.{event_id % 10**6:06d}"
                                                            "+00:00"}) + "\n")
                        event_id += 1
            out.write(json.dumps({"final_report": {"score": 0.6}}) + "\n")
    return path


def cpu_seconds() -> float:
    """CPU seconds of this process and of its ended children (the reading process)."""
    return sum(usage.ru_utime + usage.ru_stime for usage in (resource.getrusage(resource.RUSAGE_SELF),
                                                             resource.getrusage(resource.RUSAGE_CHILDREN)))


def timed(template: Path, work: Path, source: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (the reading process's included) and the records of one
    import into a fresh database."""
    db_file = work / "council.db"
    shutil.copy(template, db_file)
    db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
    cpu, start = cpu_seconds(), time.perf_counter()
    inserted = import_files(db, [str(source)], options=FormatOptions("openai-evals")).total("inserted")
    elapsed, used = time.perf_counter() - start, cpu_seconds() - cpu
    db.engine.dispose()
    db_file.unlink()
    return elapsed, used, inserted


def reading(path: Path) -> dict[str, float]:
    """CPU seconds of each step of reading the log as one worker reads it (pipeline._work):
    the lines' split, the reader, the normaliser and each chunk pickled; and the records."""
    source = resolve_sources([str(path)])[0]
    parse = reader(FormatOptions("openai-evals"), source)
    steps = {"split": 0.0, "reader": 0.0, "normaliser": 0.0, "pickle": 0.0}
    records = 0
    normaliser = Normaliser(lambda part: timed_step(steps, "reader", parse, part))
    with path.open("rb") as stream:
        batches = read_batches(stream)
        while True:
            start = time.process_time()
            batch = next(batches, None)
            steps["split"] += time.process_time() - start
            if batch is None:
                break
            start, reader_before = time.process_time(), steps["reader"]
            normalised = normaliser.normalise(batch)
            middle = time.process_time()
            steps["normaliser"] += middle - start - (steps["reader"] - reader_before)
            pickle.dumps(Chunk(batch.end_offset, 0, len(batch.lines), 0, normalised), protocol=pickle.HIGHEST_PROTOCOL)
            steps["pickle"] += time.process_time() - middle
            records += len(normalised.rows)
    return {**steps, "records": records}


def timed_step(steps: dict[str, float], name: str, step, *args):
    """``step(*args)``, its CPU seconds added to ``steps[name]``."""
    start = time.process_time()
    try:
        return step(*args)
    finally:
        steps[name] += time.process_time() - start


def reading_line(name: str, found: list[dict[str, float]]) -> str:
    """Medians of the reading runs, us CPU a record per step and in all."""
    records = found[0]["records"]
    parts = {step: statistics.median(run[step] for run in found) / records * 1e6
             for step in ("split", "reader", "normaliser", "pickle")}
    total = statistics.median(sum(run[step] for step in parts) for run in found) / records * 1e6
    return (f"{name}: reading, one process, us CPU a record (median of {len(found)}): "
            + ", ".join(f"{step} {value:.1f}" for step, value in parts.items())
            + f"; in all {total:.1f} ({records:,} records)")


def read_in(checkout: Path | None, path: Path) -> dict[str, float]:
    """``reading`` of the log in a fresh process, with ``checkout``'s council_db first when given."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, __file__, "--reading-of", str(path)], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=40_000, help="metrics events in all (1,000,000 for the target)")
    parser.add_argument("--runs", type=int, default=4, help="candidates, one run log each, over the same samples")
    parser.add_argument("--repeats", type=int, default=1, help="imports of the file; the fastest is shown")
    parser.add_argument("--reading", action="store_true", help="also the reading process's CPU a record, apart")
    parser.add_argument("--reading-only", action="store_true", help="the reading figures alone, no import")
    parser.add_argument("--baseline", type=Path, help="another checkout, read paired with this one (alternating)")
    parser.add_argument("--reading-of", type=Path, help=argparse.SUPPRESS)  # one reading of a log, as JSON
    args = parser.parse_args()
    if args.reading_of is not None:
        print(json.dumps(reading(args.reading_of)))
        return
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = write_log(work / "runs.jsonl", args.records, args.runs)
        lines = sum(1 for _ in source.open("rb"))
        print(f"{args.runs} runs of fact, cot_classify, joined: {source.stat().st_size / 1e6:.1f} MB, {lines:,} lines, "
              f"{args.records // args.runs:,} sessions; load {os.getloadavg()[0]:.1f}")
        if not args.reading_only:
            template = work / "template.db"
            open_database(f"sqlite:///{template}", notify=lambda _: None).engine.dispose()
            elapsed, cpu, inserted = min(timed(template, work, source) for _ in range(args.repeats))
            print(f"import: {inserted:,} records, {elapsed:.2f} s, {inserted / elapsed:,.0f} records/s, "
                  f"{cpu / max(inserted, 1) * 1e6:.1f} us CPU a record")
        if args.reading or args.reading_only or args.baseline:
            sides = {"this checkout": None, **({f"baseline ({args.baseline})": args.baseline} if args.baseline else {})}
            found: dict[str, list] = {name: [] for name in sides}
            for _ in range(args.repeats):
                for name, checkout in sides.items():
                    found[name].append(read_in(checkout, source))
            for name, runs in found.items():
                print(reading_line(name, runs))


if __name__ == "__main__":
    main()
