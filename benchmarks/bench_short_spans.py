"""Trends beside a short run: 300 sessions over 90 days, and 80 sessions of four other models
within 23 minutes a week before the end (a judge run imported beside months of other data).

    python benchmarks/bench_short_spans.py [--datasets 300] [--workers 1] [--arms null,drift,shortdrift]

Arms: null (nothing drifts), drift (a reviewer of the 90 days drifts +1 over them), shortdrift
(a reviewer of the short run drifts +3 over its 23 minutes). Printed per arm: the share of
reports with any trend or change-point flag, how often the drifter and another subject are
flagged, and per kind of slope (the drifter, the others of the 90 days, the others of the
short run) the coverage of the planted contrast by its 95% CI (per 30 days for the 90 days;
across its own span, `change_over_subject_span`, for the short run) and the share at p < 0.05.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta, timezone

import numpy as np

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl

END = datetime(2024, 6, 30, tzinfo=timezone.utc)
LONG_DRIFTER, SHORT_DRIFTER = "google/gemini-1.5-pro", "short/model-0"
FIRST_SEED = {"null": 0, "drift": 10_000, "shortdrift": 20_000}


def records(**config) -> list[dict]:
    out = io.StringIO()
    write_jsonl(SimulationConfig(**config), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def run(seed: int, arm: str) -> dict:
    long_run = records(sessions=300, seed=seed, end=END, **({"drift": {LONG_DRIFTER: 1.0}} if arm == "drift" else {}))
    short_run = records(sessions=80, seed=seed + 100_000, end=END - timedelta(days=7), days=23 / 1440,
                        models=[f"short/model-{i}" for i in range(4)],
                        **({"drift": {SHORT_DRIFTER: 3.0}} if arm == "shortdrift" else {}))
    report = build(from_records(long_run + short_run), resamples=50)
    drifter = {"drift": LONG_DRIFTER, "shortdrift": SHORT_DRIFTER}.get(arm)
    slopes = []
    for t in report.trends:
        planted = t.kind == "reviewer" and t.subject == drifter
        shown, truth = ((t.change_over_subject_span, 3.0 if planted else 0.0) if t.short_span
                        else (t.slope_per_30d, 30 / 90 if planted else 0.0))
        kind = "drifter" if planted else "short-run others" if t.short_span else "90-day others"
        slopes.append((kind, shown.ci_low <= truth <= shown.ci_high, t.slope_per_30d.p_value))
    return {"flags": sorted({f.subject for f in report.flags if f.kind in ("trend", "change_point")}),
            "slopes": slopes, "drifter": None if drifter is None else f"reviewer {drifter}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=300)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--arms", default="null,drift,shortdrift")
    args = parser.parse_args()
    for arm in args.arms.split(","):
        started = time.perf_counter()
        seeds = range(FIRST_SEED[arm], FIRST_SEED[arm] + args.datasets)
        with ProcessPoolExecutor(args.workers) as pool:
            runs = list(pool.map(run, seeds, [arm] * len(seeds)))
        print(f"{arm}: {args.datasets} data sets, any time flag in {np.mean([bool(r['flags']) for r in runs]):.1%}")
        drifter = runs[0]["drifter"]
        if drifter:
            print(f"  drifter flagged in {np.mean([drifter in r['flags'] for r in runs]):.1%}, another subject in "
                  f"{np.mean([bool(set(r['flags']) - {drifter}) for r in runs]):.1%}")
        for kind in ("drifter", "90-day others", "short-run others"):
            rows = [(covered, p) for r in runs for k, covered, p in r["slopes"] if k == kind]
            if rows:
                covered, p = np.array(rows).T
                print(f"  {kind}: {len(rows)} slopes, 95% CI covers the planted contrast in {covered.mean():.1%}, "
                      f"p < 0.05 in {(p < 0.05).mean():.1%}")
        print(f"  {time.perf_counter() - started:.0f} s wall on {args.workers} worker(s)")


if __name__ == "__main__":
    main()
