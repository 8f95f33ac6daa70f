"""Panel benchmark: the report commands on stores with many reviewers or many candidates, each
a real `council-db` process, timed with its peak memory; paired with an older checkout.

    python benchmarks/bench_panels.py [--shapes reviewers,candidates,mixed] [--scale 1.0]
                                      [--baseline PATH] [--work DIR] [--write-docs]

Shapes (issue 32, "Many judges and candidates"), each session 3 records, each record a
reviewer drawn at random scoring a candidate drawn at random, so every reviewer and candidate
is linked to the others through shared sessions (the joint model can place them all):

* reviewers: 50,000 reviewers, 4 candidates, 50,000 sessions (150,000 records);
* candidates: 4 reviewers, 50,000 candidates, 50,000 sessions;
* mixed: 500 reviewers, 5,000 candidates, 100,000 sessions (300,000 records).

``--scale`` multiplies the panel and session counts (0.1: 5,000 reviewers, to see the growth
before running the big ones). ``--baseline PATH``: a checkout of an older council-db (e.g. a
detached worktree of main) run with the same interpreter, on the same store, command by
command (old, then new). Targets: the report's 3 s / 300 MB for `mixed`; <= 30 s / <= 500 MB
for `reviewers` and `candidates`. Each command gets --timeout seconds (default 600) and --memory
MB of resident memory (default 4,000): one that runs past either is killed, and reported so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from compiled import ENV, compile_council_db  # benchmarks/ is on the path when run as a script
from doc_tables import machine, markdown_table, write_table

COMMANDS = {"bias-report": ["bias-report", "--format", "json"], "trends": ["trends"],
            "anomalies": ["anomalies"], "leaderboard": ["leaderboard"]}
RECORDS_PER_SESSION = 3


@dataclass(frozen=True)
class Shape:
    """An adversarial store: how many reviewers, candidates and sessions."""

    name: str
    reviewers: int
    candidates: int
    sessions: int

    def scaled(self, factor: float) -> Shape:
        def grow(n: int) -> int:
            return n if n <= 4 else max(4, round(n * factor))

        return Shape(self.name, grow(self.reviewers), grow(self.candidates), grow(self.sessions))


SHAPES = {shape.name: shape for shape in (Shape("reviewers", 50_000, 4, 50_000),
                                          Shape("candidates", 4, 50_000, 50_000),
                                          Shape("mixed", 500, 5_000, 100_000))}


def write_store_jsonl(shape: Shape, path: Path, seed: int = 32) -> int:
    """The shape's records as llm-council JSONL: reviewer severity and candidate quality drawn
    N(0, 0.5), noise SD 1; every reviewer and candidate gets at least one record when the
    sessions allow. Returns the number of records."""
    rng = np.random.default_rng(seed)
    n = shape.sessions * RECORDS_PER_SESSION
    reviewer = rng.permutation(np.resize(np.arange(shape.reviewers), n))
    candidate = rng.permutation(np.resize(np.arange(shape.candidates), n))
    severity, quality = rng.normal(0, 0.5, shape.reviewers), rng.normal(0, 0.5, shape.candidates)
    score = np.clip(6 + severity[reviewer] + quality[candidate] + rng.normal(0, 1, n), 1, 10).round(1)
    length = rng.integers(200, 3000, n)
    start = 1_760_000_000
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            session = i // RECORDS_PER_SESSION
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + session * 60))
            out.write(json.dumps({
                "schema_version": "1.2.0", "session_id": f"s{session:07d}", "timestamp": stamp,
                "consent_level": 1, "reviewer_id": f"r/{reviewer[i]}", "model_id": f"m/{candidate[i]}",
                "position": i % RECORDS_PER_SESSION, "response_length_chars": int(length[i]),
                "score_value": float(score[i]), "score_scale": "1-10"}) + "\n")
    return n


def run(checkout: Path | None, db: str, args: list[str], timeout: float,
        memory_mb: float) -> tuple[float, float, float] | str:
    """Wall seconds, CPU seconds and peak RSS (MB) of one `council-db` process (``checkout``'s
    code when given), or why it was killed: past ``timeout`` seconds, or past ``memory_mb`` of
    resident memory (polled every 0.2 s, so a wide panel's dense design cannot take a shared
    machine's memory)."""
    env = dict(ENV, PYTHONPATH=str(checkout)) if checkout else ENV
    start = time.perf_counter()
    # run beside the store: `python -m` puts its working directory first on the path, so from a
    # checkout's root the baseline would import that checkout's code instead of ``checkout``'s
    process = subprocess.Popen([sys.executable, "-m", "council_db", "--db", db, *args], cwd=Path(db).parent,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    killed: list[str] = []

    def watch() -> None:
        while process.poll() is None:
            if time.perf_counter() - start > timeout:
                killed.append(f"killed at {timeout:.0f} s")
            elif _rss_mb(process.pid) > memory_mb:
                killed.append(f"killed at {memory_mb:.0f} MB after {time.perf_counter() - start:.0f} s")
            if killed:
                process.kill()
                return
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    watcher.join()
    elapsed = time.perf_counter() - start
    if killed:
        return killed[0]
    if process.returncode != 0:
        raise SystemExit(f"council-db {' '.join(args)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _rss_mb(pid: int) -> float:
    """A live process's resident memory in MB (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="reviewers,candidates,mixed", help=f"of {', '.join(SHAPES)}")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply panel and session counts")
    parser.add_argument("--commands", default=",".join(COMMANDS), help=f"of {', '.join(COMMANDS)}")
    parser.add_argument("--baseline", type=Path, help="an older checkout to time first, on the same stores")
    parser.add_argument("--work", type=Path, help="where the stores are built (default: a temporary folder)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a command may run")
    parser.add_argument("--memory", type=float, default=4000.0, help="MB of resident memory a command may hold")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md (panels)")
    options = parser.parse_args()
    shapes = [SHAPES[name].scaled(options.scale) for name in options.shapes.split(",")]
    commands = options.commands.split(",")
    compile_council_db()
    print(machine())
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        work = options.work or Path(scratch)
        for shape in shapes:
            stem = work / f"panel-{shape.name}-{shape.reviewers}-{shape.candidates}-{shape.sessions}"
            db = str(stem.with_suffix(".db").resolve())
            if not Path(db).exists():
                records = write_store_jsonl(shape, stem.with_suffix(".jsonl"))
                began = time.perf_counter()
                subprocess.run([sys.executable, "-m", "council_db", "--db", db, "import", "-q",
                                str(stem.with_suffix(".jsonl"))], check=True, stdout=subprocess.DEVNULL, env=ENV)
                print(f"built {shape.name}: {records:,} records in {time.perf_counter() - began:.1f} s")
            size = (f"{shape.reviewers:,} reviewers x {shape.candidates:,} candidates, "
                    f"{shape.sessions:,} sessions, {shape.sessions * RECORDS_PER_SESSION:,} records")
            print(size, flush=True)
            for name in commands:
                cells = []
                for label, checkout in ([("old", options.baseline)] if options.baseline else []) + [("new", None)]:
                    result = run(checkout, db, COMMANDS[name], options.timeout, options.memory)
                    shown = (result if isinstance(result, str)
                             else f"{result[0]:.1f} s ({result[1]:.1f} s CPU), {result[2]:.0f} MB")
                    print(f"  {name:<12} {label}: {shown}", flush=True)
                    cells.append(shown)
                rows.append([shape.name, size, f"`{name}`", *cells])
    if options.write_docs:
        header = ["shape", "store", "command", *(["old (main)"] if options.baseline else []), "new"]
        table = markdown_table(header, rows)
        write_table("panels", table, f"{machine()}; wall time (CPU time) and peak RSS of one process each")


if __name__ == "__main__":
    main()
