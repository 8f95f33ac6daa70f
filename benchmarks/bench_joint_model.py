"""Joint-model benchmark: do the 95% CIs cover the planted effects, and how often does clean
data give p < 0.05?

    python benchmarks/bench_joint_model.py [--datasets 200] [--sessions 300] [--workers 2]

Planted data sets (every effect at once, longer answers from better models): the share of 95%
CIs that cover the planted value, per estimator, next to the mean planted value (the length
effect per log unit varies a little between data sets: verbosity / the population SD of log
length, which depends on the drawn model lengths), the mean estimate, the SD of the estimation
error and the mean SE (they should agree) (target >= 93%; with 200 data sets one share
has a Monte-Carlo SE of about 1.5 points). Null data sets (no effect at all): the rejection
rate at p < 0.05 per test (should be about 5%) and the share of data sets where any effect
has p < 0.05 uncorrected - informational, the report layer controls the FDR with
Benjamini-Hochberg.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
SHORT = ["gpt-4o", "claude", "gemini", "llama"]
PLANTED = dict(
    reviewer_offsets=dict(zip(MODELS, [-0.8, 0.0, 0.6, 0.2])),
    position_effects=[0.3, 0.0, -0.1, 0.1],
    self_preference=0.5,
    verbosity=0.3,
    length_quality_corr=0.8,
    model_quality=dict(zip(MODELS, [1.0, 0.4, -0.3, -1.1])),
)


def centred(values) -> list[float]:
    values = np.asarray(values, dtype=float)
    return (values - values.mean()).tolist()


def run(job: tuple[int, int, bool]) -> dict:
    """One data set: estimates, CIs and p-values per estimator, keyed by estimator name."""
    seed, sessions, null = job
    config = SimulationConfig(sessions=sessions, seed=seed, models=MODELS, **({} if null else PLANTED))
    out = io.StringIO()
    truth = write_jsonl(config, out)
    data = from_records(json.loads(line) for line in out.getvalue().splitlines())
    start = time.perf_counter()
    fit = joint_model.fit(data)
    seconds = time.perf_counter() - start

    planted: dict[str, float] = {}
    effects: dict[str, joint_model.Effect] = {}
    for short, name, value in zip(SHORT, MODELS, centred([truth["reviewer_offsets"][m] for m in MODELS])):
        planted[f"severity {short}"], effects[f"severity {short}"] = value, fit.severity[name]
    for slot, value in enumerate(centred(truth["position_effects"])):
        planted[f"slot {slot}"], effects[f"slot {slot}"] = value, fit.slot_effects[slot]
    planted["self-preference (pooled)"], effects["self-preference (pooled)"] = \
        truth["self_preference"], fit.self_preference
    planted["length per log unit"], effects["length per log unit"] = \
        truth["verbosity"] / truth["log_length_sd"], fit.length_per_log
    for short, name, value in zip(SHORT, MODELS, centred([truth["model_quality"][m] for m in MODELS])):
        planted[f"quality {short}"], effects[f"quality {short}"] = value, fit.quality[name]
    return {
        "rows": {key: (planted[key], e.estimate, e.se, e.ci_low, e.ci_high, e.p_value) for key, e in effects.items()},
        "position_p": fit.position_test.p_value, "records": data.n_records, "seconds": seconds,
        "warnings": fit.warnings,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200, help="data sets per arm (planted, null)")
    parser.add_argument("--sessions", type=int, default=300, help="sessions per data set")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args()

    jobs = [(seed, args.sessions, False) for seed in range(args.datasets)]
    jobs += [(100_000 + seed, args.sessions, True) for seed in range(args.datasets)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(run, jobs, chunksize=8))
    elapsed = time.perf_counter() - start
    planted, null = results[: args.datasets], results[args.datasets:]

    records = planted[0]["records"]
    fit_ms = 1000 * np.median([r["seconds"] for r in results])
    print(f"joint model benchmark - {args.datasets} planted + {args.datasets} null data sets, "
          f"{args.sessions} sessions x 16 records = {records:,} records each")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {args.workers} workers; "
          f"median fit {fit_ms:.1f} ms, wall {elapsed:.0f} s")
    warned = sum(bool(r["warnings"]) for r in results)
    if warned:
        print(f"!! {warned} data sets raised warnings, e.g. {next(r['warnings'] for r in results if r['warnings'])}")

    keys = list(planted[0]["rows"])
    print()
    print("PLANTED  (coverage target >= 93%)")
    print(f"{'estimator':26} {'planted':>8} {'mean est':>9} {'SD err':>7} {'mean SE':>8} {'coverage':>9}")
    coverages = []
    for key in keys:
        rows = np.array([r["rows"][key] for r in planted])
        truth, estimate, se, low, high = rows.T[:5]  # the planted value can differ by data set (length)
        coverage = float(np.mean((low <= truth) & (truth <= high)))
        coverages.append(coverage)
        mark = "" if coverage >= 0.93 else "  << below target"
        print(f"{key:26} {truth.mean():+8.3f} {estimate.mean():+9.3f} {(estimate - truth).std(ddof=1):7.3f} "
              f"{se.mean():8.3f} "
              f"{coverage:9.1%}{mark}")
    position_power = np.mean([r["position_p"] < 0.05 for r in planted])
    print(f"{'position test power':26} {'':8} {'':9} {'':7} {'':8} {position_power:9.1%}  (share p < 0.05)")
    print(f"lowest coverage {min(coverages):.1%}, mean {np.mean(coverages):.1%}")

    print()
    print("NULL  (every effect zero; per-test rejection rate at p < 0.05 should be ~5%)")
    print(f"{'estimator':26} {'p < 0.05':>9}")
    p = np.array([[r["rows"][key][5] for key in keys] for r in null])
    for column, key in enumerate(keys):
        print(f"{key:26} {np.mean(p[:, column] < 0.05):9.1%}")
    position = np.array([r["position_p"] for r in null])
    print(f"{'position test (F)':26} {np.mean(position < 0.05):9.1%}")
    per_test = np.mean(np.column_stack([p, position]) < 0.05)
    print(f"mean per-test rejection rate {per_test:.1%} over {len(keys) + 1} tests")
    print(f"data sets with any of the {len(keys)} effects at p < 0.05 (uncorrected): "
          f"{np.mean((p < 0.05).any(axis=1)):.1%}; including the position test: "
          f"{np.mean((np.column_stack([p, position]) < 0.05).any(axis=1)):.1%}")


if __name__ == "__main__":
    main()
