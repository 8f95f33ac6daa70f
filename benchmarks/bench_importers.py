"""Every line format's import rate: N generated records per format, imported into a fresh
SQLite file by the CLI in a subprocess, as a user runs it.

    python benchmarks/bench_importers.py [--records 20000] [--formats fastchat-single csv] [--write-docs]

Target (issue 30): >= 100,000 records/s at 1,000,000 records for every line format. Each
file is laid out as its tool writes it, from a real line of the format in tests/data (its
long texts kept, so the bytes a reader skips are realistic) with the keys varied:
fastchat-single by bench_fastchat_single.py's generator, csv and jsonl by bench_csv.py's,
llm-council by the simulator. A format added later is one entry in FORMATS.

Printed per format: the file's size, its lines and records, the wall seconds and records/s
of the `council-db import` process (start-up and the commit included; the database is
migrated beforehand), its CPU (user + system, the reading processes included) per record,
and its peak RSS (the largest of the importer and its reading
processes). On a machine shared with other work the wall rate is what the load leaves: the
load average is printed beside the figures, and the CPU per record is the steadier
figure: on two idle cores, reading and writing overlapping, about 2,000,000 / (CPU us/record)
records/s at best.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from itertools import cycle, islice
from pathlib import Path
from typing import Callable, Iterator

from bench_csv import NESTED, ROLES, write_csv, write_jsonl  # benchmarks/ is on the path when run as a script
from bench_fastchat_single import generated
from bench_openai_evals import write_log as write_openai_evals_log
from doc_tables import machine, markdown_table, write_table

from council_db.simulate import SimulationConfig
from council_db.simulate import write_jsonl as simulated_jsonl
from council_db.store.database import open_database

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
VICUNA = DATA / "realdata" / "fastchat-vicuna80"
PAIR = DATA / "fastchat-pair" / "mt_bench" / "model_judgment" / "gpt-4_pair.jsonl"
REVIEW = VICUNA / "review" / "vicuna-13b-20230322-clean-lang" / "review_alpaca-13b_vicuna-13b-20230322-clean-lang.jsonl"
ARENA_HARD = DATA / "arena-hard" / "arena-hard-v2.0" / "model_judgment" / "gpt-4.1" / "qwen3-32b.jsonl"
JUDGEBENCH = next((DATA / "judgebench" / "outputs").glob("*judge_name=arena_hard*.jsonl"))
MODELS = 40  # candidate models a generated file grades
TARGET = 100_000  # records/s at 1M records (issue 30)


@dataclass(frozen=True)
class Format:
    """How to write ``records`` records of one format into a folder: the file to import and
    the import's options."""

    write: Callable[[Path, int], Path]
    options: tuple[str, ...] = ()


def template(path: Path) -> dict:
    """The first line of a real file of the format."""
    with path.open(encoding="utf-8") as lines:
        return json.loads(lines.readline())


def write_lines(path: Path, lines: Iterator[dict]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)
    return path


def llm_council(folder: Path, records: int) -> Path:
    """The simulator's 4 judges x 4 candidates sessions (16 records each)."""
    path = folder / "bias_metrics.jsonl"
    with path.open("wb") as out:
        simulated_jsonl(SimulationConfig(sessions=max(1, records // 16), seed=1), out)
    return path


def fastchat_single(folder: Path, records: int) -> Path:
    return generated(folder / "gpt-4_single.jsonl", records, 160)


def fastchat_pair(folder: Path, records: int) -> Path:
    """llm_judge's pairwise lines (4 records: two games of two answers), one pair of models
    per line on each of MT-bench's 160 question turns."""
    line, winners = template(PAIR), cycle(("model_1", "model_2", "tie"))
    return write_lines(folder / "gpt-4_pair.jsonl", (
        dict(line, question_id=81 + number % 80, turn=number // 80 % 2 + 1, model_1=f"model-{number // 160 % MODELS}",
             model_2="gpt-3.5-turbo", g1_winner=next(winners), g2_winner=next(winners), tstamp=1.7e9 + number)
        for number in range(-(-records // 4))))


def fastchat_review(folder: Path, records: int) -> Path:
    """Vicuna-80 review lines (2 records), naming the published answers (--answers)."""
    line = template(REVIEW)
    ids = [json.loads(answer)["answer_id"] for path in sorted((VICUNA / "answer").glob("*.jsonl"))
           for answer in path.read_text(encoding="utf-8").splitlines()]
    pairs = zip(cycle(ids), islice(cycle(ids), 1, None))
    return write_lines(folder / "review_generated.jsonl", (
        dict(line, review_id=f"r{number}", question_id=number % 80 + 1, answer1_id=first, answer2_id=second,
             score=[number % 10 + 1, (number + 3) % 10 + 1])
        for number, (first, second) in zip(range(-(-records // 2)), pairs)))


def judgebench(folder: Path, records: int) -> Path:
    """JudgeBench outputs (6 records: the gold label's two, and two judgments of two)."""
    line = template(JUDGEBENCH)
    return write_lines(folder / "judgebench.jsonl", (dict(line, pair_id=f"pair-{number}")
                                                      for number in range(-(-records // 6))))


def arena_hard(folder: Path, records: int) -> Path:
    """arena-hard-auto v2 judgments (4 records: two games against the baseline), in
    model_judgment/<judge>/ as the tool lays them out."""
    line, scores = template(ARENA_HARD), cycle(("A>B", "B>A", "A=B", "A>>B", "B>>A"))
    judged = folder / "arena-hard-v2.0" / "model_judgment" / "gpt-4.1"
    judged.mkdir(parents=True, exist_ok=True)

    def games() -> list[dict]:
        return [dict(game, score=next(scores)) for game in line["games"]]

    return write_lines(judged / "generated.jsonl", (
        dict(line, uid=f"q{number % 500}", model=f"model-{number // 500}", games=games())
        for number in range(-(-records // 4))))


def csv_rows(folder: Path, records: int) -> Path:
    return write_csv(folder / "scores.csv", records)


def jsonl_nested(folder: Path, records: int) -> Path:
    return write_jsonl(folder / "scores.jsonl", records)


def openai_evals_log(folder: Path, records: int) -> Path:
    """bench_openai_evals.py's run logs (four lines a record: the sample, the answer's sampling,
    the grader's, the metrics), ten runs joined with cat."""
    return write_openai_evals_log(folder / "run.jsonl", records, runs=10)


def mapping(pairs) -> str:
    return ",".join(f"{role}={column}" for role, column in pairs)


FORMATS = {
    "llm-council": Format(llm_council),
    "fastchat-single": Format(fastchat_single),
    "fastchat-pair": Format(fastchat_pair),
    "fastchat-review": Format(fastchat_review, ("--answers", str(VICUNA / "answer"))),
    "judgebench": Format(judgebench),
    "arena-hard": Format(arena_hard),
    "csv": Format(csv_rows, ("--map", mapping(ROLES), "--scale", "1-10")),
    "jsonl": Format(jsonl_nested, ("--map", mapping(sorted(NESTED.items())), "--scale", "1-10")),
    "openai-evals": Format(openai_evals_log),
}


@dataclass
class Run:
    format: str
    megabytes: float
    lines: int
    records: int
    seconds: float
    cpu_seconds: float  # user + system, of the importer and its reading processes
    peak_mb: float
    load: float

    def cells(self) -> list[str]:
        return [self.format, f"{self.megabytes:,.0f}", f"{self.lines:,}", f"{self.records:,}", f"{self.seconds:.2f}",
                f"{self.records / self.seconds:,.0f}", f"{self.cpu_seconds / self.records * 1e6:.1f}",
                f"{self.peak_mb:,.0f}", f"{self.load:.1f}"]


HEADER = ["--from", "MB", "lines", "records", "seconds", "records/s", "CPU us/record", "peak RSS MB", "load"]


def imported(template_db: Path, folder: Path, name: str, source: Path) -> Run:
    """One `council-db import` of ``source`` into a fresh copy of the migrated database."""
    db_file = folder / "council.db"
    shutil.copy(template_db, db_file)
    command = [sys.executable, "-m", "council_db", "--db", f"sqlite:///{db_file}", "import", "--from", name,
               str(source), *FORMATS[name].options]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode() if process.stderr else ""
    if process.returncode != 0:
        raise SystemExit(f"{name}: import failed ({process.returncode}): {errors}")
    with sqlite3.connect(db_file) as db:
        records = db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
    with source.open("rb") as lines:
        count = sum(chunk.count(b"\n") for chunk in iter(lambda: lines.read(1 << 24), b""))
    for made in folder.glob("council.db*"):
        made.unlink()
    return Run(name, source.stat().st_size / 1e6, count, records, seconds, usage.ru_utime + usage.ru_stime,
               usage.ru_maxrss / 1024, load)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=20_000, help="records per format (1000000 for the target)")
    parser.add_argument("--formats", nargs="+", choices=list(FORMATS), default=list(FORMATS))
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        template_db = folder / "template.db"
        open_database(f"sqlite:///{template_db}", notify=lambda _: None).engine.dispose()
        print(f"{args.records:,} records a format; {machine()}")
        print(" | ".join(HEADER))
        for format_name in args.formats:
            made = folder / format_name
            made.mkdir()
            source = FORMATS[format_name].write(made, args.records)
            runs.append(imported(template_db, folder, format_name, source))
            print(" | ".join(runs[-1].cells()), flush=True)
            shutil.rmtree(made)
    if args.write_docs:
        table = markdown_table(HEADER, [run.cells() for run in runs], right=range(1, len(HEADER)))
        write_table("importers", table, f"{machine()}; {args.records:,} records a format, generated "
                                        "from a real line of each; load = the 1-minute load average at the start")


if __name__ == "__main__":
    main()
