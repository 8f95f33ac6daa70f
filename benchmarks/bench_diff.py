"""`council-db diff`: its false "changed" verdicts on data with nothing planted, a planted judge
upgrade found at its size, and its time and memory on a large store.

    python benchmarks/bench_diff.py [--datasets 200] [--sessions 200] [--workers 1] [--store 100000] [--write-docs]

Null: --datasets simulated sets of --sessions sessions (seeds 0..N-1; four reviewers of equal
severity, nothing planted, nothing drifting). In each, two figures of diff: the windows before
and after the middle of the span, each one's report built as `diff --changed-at` builds it and
compared figure by figure (one Benjamini-Hochberg family); and two reviewers on the answers both
scored (`diff --reviewer A --against B`: the mean and the candidates, one family). Printed: the
share of sets called changed, with its 95% Wilson interval.

Planted: the same sets with one reviewer's severity stepping up by 1 point at the middle of
the span: the share of sets where its severity is called changed, and the share whose change
CI covers the planted 0.75 (1 point vs the average of four reviewers).

Scale: a SQLite store of --store sessions (simulated, imported; 0 skips it): the wall time and
peak memory (max RSS) of `council-db diff --reviewer A --against B` and of `diff --changed-at`
as processes.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

from council_db.analysis.loading.score_data import from_records, keep_sessions
from council_db.analysis.versions.pairing import pair_items
from council_db.analysis.versions.same_items import compare
from council_db.report.builder import build
from council_db.report.figure_changes import compare_reports
from council_db.simulate import SimulationConfig, write_jsonl

HARSH = SimulationConfig().models[0]
STEP = 1.0
PLANTED = STEP * 3 / 4  # one of four reviewers: its severity vs the average moves by 3/4 of the step


def one_set(seed: int, sessions: int, step: float) -> dict[str, bool]:
    """One simulated set's verdicts: windows changed, reviewers changed, and (planted) the step's."""
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=sessions, seed=seed, drift={HARSH: step} if step else {},
                                 drift_at=0.5), out)
    data = from_records([json.loads(line) for line in out.getvalue().splitlines()])
    times = data.session_ts_us
    middle = times.min() + (times.max() - times.min()) // 2
    before, after = (build(keep_sessions(data, mask), seed=seed) for mask in (times < middle, times >= middle))
    changes, _ = compare_reports(before, after)
    mine = next(c for c in changes if c.figure == f"severity {HARSH}")
    second = data.reviewer == 1
    items = pair_items(data.session, data.model, data.score, data.reviewer == 0, second, data.models, data.scale)
    return {"windows": any(c.changed() for c in changes), "reviewers": compare(items, n_boot=0).changed(),
            "found": mine.changed(), "covered": mine.ci_low <= PLANTED <= mine.ci_high}


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's 95% score interval of the share k/n."""
    p, denominator = k / n, 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def share(k: int, n: int) -> str:
    low, high = wilson(k, n)
    return f"{k / n:.1%} [{low:.1%}, {high:.1%}] ({k} of {n})"


def studies(datasets: int, sessions: int, workers: int) -> list[list[str]]:
    with ProcessPoolExecutor(workers) as pool:
        null = list(pool.map(one_set, range(datasets), [sessions] * datasets, [0.0] * datasets))
        planted = list(pool.map(one_set, range(datasets), [sessions] * datasets, [STEP] * datasets))
    rows = [["nothing planted: `--changed-at` (the middle) called changed", share(sum(s["windows"] for s in null),
                                                                              datasets)],
            ["nothing planted: `--reviewer A --against B` called changed",
             share(sum(s["reviewers"] for s in null), datasets)],
            [f"severity step of {STEP:g} at the middle: its severity called changed",
             share(sum(s["found"] for s in planted), datasets)],
            [f"... its change's 95% CI covers the planted {PLANTED:g}", share(sum(s["covered"] for s in planted),
                                                                               datasets)]]
    for name, value in rows:
        print(f"{name}: {value}")
    return rows


def timed(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one council-db process."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "council_db", *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"council-db {' '.join(args)} failed")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def scale(store: int) -> list[list[str]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        records, db = Path(tmp) / "records.jsonl", Path(tmp) / "store.db"
        truth = Path(tmp) / "truth.json"
        subprocess.run([sys.executable, "-m", "council_db", "simulate", "-o", str(records), "--sessions", str(store),
                        "--days", "365", "--truth", str(truth), "--drift", f"{HARSH}=1", "--drift-at", "0.5"],
                       check=True)
        seconds, _ = timed(["--db", str(db), "import", str(records)])
        print(f"imported {store:,} sessions in {seconds:.0f} s")
        end = datetime.fromisoformat(json.loads(truth.read_text())["end"])
        middle = (end - timedelta(days=365 / 2)).isoformat()
        second = SimulationConfig().models[1]
        for name, args in ((f"--reviewer {HARSH} --against {second}", ["--reviewer", HARSH, "--against", second]),
                           (f"--changed-at {middle}", ["--changed-at", middle])):
            seconds, peak = timed(["--db", str(db), "diff", *args, "--json"])
            print(f"diff {name}: {seconds:.1f} s, peak {peak:.0f} MB ({store:,} sessions)")
            rows.append([f"`diff {name.split(' ')[0]} ...`", f"{store:,}", f"{seconds:.1f} s", f"{peak:.0f} MB"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--store", type=int, default=100_000)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    rows = studies(args.datasets, args.sessions, args.workers)
    sized = scale(args.store) if args.store else []
    if args.write_docs:
        from doc_tables import machine, markdown_table, write_table

        write_table("diff-null", markdown_table(["simulated sets", "share [95% CI]"], rows),
                    f"{machine()}, {args.datasets} sets of {args.sessions} sessions each")
        if sized:
            write_table("diff-scale", markdown_table(["command", "sessions", "wall", "peak memory"], sized, (1, 2, 3)),
                        f"{machine()}, a store of {args.store:,} simulated sessions")


if __name__ == "__main__":
    main()
