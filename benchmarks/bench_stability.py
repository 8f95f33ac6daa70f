"""Repeat stability (issue 31): does `check --stability-min` leave a stable judge alone and fail a
shaky one, do the figures' CIs cover what was planted, and what does the section cost the report?

    python benchmarks/bench_stability.py [--datasets 200] [--sessions 40] [--workers 1]
                                         [--store 100000] [--write-docs]

Study: --datasets simulated windows (seeds 0..N-1) of --sessions sessions, two judges scoring
every answer of 4 candidates 3 times (simulate --repeats 3; answers differ by an answer effect of
SD 1 around 5.5, so about half pass): a stable judge (repeat noise SD 0.4) and a shaky one (1.5).
The floor of stability-min is 0.15 below the stable judge's planted same-verdict share (0.75)
and above the shaky one's (0.40), judged on the CI's lower bound as `check` does. Printed: each
judge's share of windows failed, with its 95% Wilson interval, and each figure's CI coverage of
its planted value (the planted values: tests/analysis/test_repeat_stability.true_figures).

Time: SQLite stores of --store sessions (4 reviewers x 4 answers; with repeats, each answer
scored twice), imported; the window's report (report_for_window, what bias-report runs) with the
stability section (new) and with it left out (old), taking turns, median of 5 each: what the
section costs.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from doc_tables import machine, markdown_table, write_table  # noqa: E402

from council_db.analysis.effects.stability import repeat_stability  # noqa: E402
from council_db.analysis.loading.score_data import from_records  # noqa: E402
from council_db.simulate import SimulationConfig, write_jsonl  # noqa: E402
from tests.analysis.test_repeat_stability import NOISE, SHAKY, STABLE, planted, true_figures  # noqa: E402
from tests.conftest import simulated  # noqa: E402

FIGURES = ("same_verdict", "within_sd", "icc", "pass_k")


def one_window(seed: int, sessions: int) -> dict[str, tuple]:
    """Per judge: (its same-verdict CI's lower bound, and whether each figure's CI covers its truth)."""
    records, _ = simulated(**planted(sessions, seed))
    found = {j.reviewer: j.figures for j in repeat_stability(from_records(records), 1000, np.random.default_rng(seed))}
    out = {}
    for name, noise in NOISE.items():
        truth, f = true_figures(noise), found[name]
        out[name] = (f.same_verdict.ci_low,
                     tuple(getattr(f, key).ci_low <= truth[key] <= getattr(f, key).ci_high for key in FIGURES))
    return out


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    p = k / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half / (1 + z * z / n)), min(1.0, centre + half / (1 + z * z / n))


def study(datasets: int, sessions: int, workers: int) -> list[list[str]]:
    floor = true_figures(NOISE[STABLE])["same_verdict"] - 0.15
    with ProcessPoolExecutor(workers) as pool:
        windows = list(pool.map(one_window, range(datasets), [sessions] * datasets))
    print(f"{datasets} windows of {sessions} sessions ({sessions * 2 * 4 * 3:,} records each: 2 judges x 4 answers "
          f"x 3 repeats); stability-min floor {floor:.3f} on the CI")
    rows = []
    for name in (STABLE, SHAKY):
        failed = sum(w[name][0] < floor for w in windows)
        low, high = wilson(failed, datasets)
        coverage = [sum(w[name][1][i] for w in windows) / datasets for i in range(len(FIGURES))]
        planted_share = true_figures(NOISE[name])["same_verdict"]
        print(f"  {name} (noise SD {NOISE[name]}, same verdict {planted_share:.3f}): failed {failed}/{datasets} = "
              f"{failed / datasets:.1%} (95% CI {low:.1%} to {high:.1%}); CI coverage "
              + ", ".join(f"{key} {share:.1%}" for key, share in zip(FIGURES, coverage)))
        rows.append([f"{name} (SD {NOISE[name]})", f"{planted_share:.2f}", f"{failed}/{datasets}",
                     f"{low:.1%} to {high:.1%}", *(f"{share:.1%}" for share in coverage)])
    return rows


def _seconds(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _old_and_new(report, repeats: int = 5) -> tuple[float, float, float]:
    """Median seconds of the report without the stability section (old) and with it (new), the
    two taking turns after one warm-up run, so caches and the other engineers' load fall alike;
    and the section's own seconds within the new runs (a figure the load moves less)."""
    from council_db.report import stability_section

    section = stability_section.stability
    spent: list[float] = []

    def timed(*args):
        start = time.perf_counter()
        try:
            return section(*args)
        finally:
            spent.append(time.perf_counter() - start)

    report()
    old, new = [], []
    for _ in range(repeats):
        with mock.patch.object(stability_section, "stability", lambda *_: None):
            old.append(_seconds(report))
        with mock.patch.object(stability_section, "stability", timed):
            new.append(_seconds(report))
    return statistics.median(old), statistics.median(new), statistics.median(spent) if spent else 0.0


def timing(store_sessions: int) -> list[list[str]]:
    from council_db.analysis.loading.window import Window
    from council_db.report.for_window import report_for_window
    from council_db.store.database import open_database

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for repeats in (1, 2):
            log, db_path = Path(tmp) / f"log{repeats}.jsonl", Path(tmp) / f"council{repeats}.db"
            with log.open("w") as out:
                write_jsonl(SimulationConfig(sessions=store_sessions, seed=1, repeats=repeats), out)
            subprocess.run([sys.executable, "-m", "council_db", "--db", str(db_path), "import", str(log)],
                           capture_output=True, check=True)
            log.unlink()
            db = open_database(f"sqlite:///{db_path}", notify=lambda _: None)
            old, new, section = _old_and_new(lambda: report_for_window(db, Window(), {}))
            records = store_sessions * 16 * repeats
            print(f"report on {store_sessions:,} sessions ({records:,} records, {repeats} score(s) per answer), "
                  f"median of 5: without the stability section {old:.2f} s, with it {new:.2f} s "
                  f"({(new - old) / old:+.1%}); the section itself {section:.3f} s ({section / new:.1%} of the report)")
            rows.append([f"{store_sessions:,} sessions, {'2 scores' if repeats == 2 else '1 score'} per answer",
                         f"{records:,}", f"{old:.2f} s", f"{new:.2f} s", f"{(new - old) / old:+.1%}",
                         f"{section:.3f} s ({section / new:.1%})"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--store", type=int, default=100_000, help="sessions in the timed stores (0: no timing)")
    parser.add_argument("--write-docs", action="store_true", help="write the tables into docs/benchmarks.md")
    args = parser.parse_args()
    studied = study(args.datasets, args.sessions, args.workers)
    timed = timing(args.store) if args.store else []
    if args.write_docs:
        write_table("stability-study", markdown_table(
            ["judge", "planted same verdict", "failed", "95% CI", *(f"covers {key}" for key in FIGURES)], studied,
            right=(1, 2)), f"{machine()}; {args.datasets} windows of {args.sessions} sessions")
        if timed:
            write_table("stability-time", markdown_table(
                ["store", "records", "report, old", "report, new", "change", "the section"], timed,
                right=(1, 2, 3, 4, 5)), machine())


if __name__ == "__main__":
    main()
