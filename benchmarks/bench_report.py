"""Bias-report benchmark: the FULL report (`council_db.report.builder.build`) on simulated data with
known truth - do its 95% CIs cover the planted values, does it flag what was planted, does it
stay quiet on clean data, and how long does `council-db bias-report` take on 2,000 sessions?

    python benchmarks/bench_report.py [--datasets 200] [--sessions 300] [--workers 2]
                                      [--resamples 1000] [--timing-sessions 2000] [--timing-runs 5]
                                      [--arms plain,real-like] [--first-seed 0]

Planted data sets (seeds F..F+N-1, F = --first-seed; every effect at once, longer answers from
better models, so the length estimate must see through the confound): per estimator with a known
truth, the share of 95% CIs that cover it (target >= 93%; with 200 data sets one share has a
Monte-Carlo SE of about 1.5 points: a one-sided binomial p-value says how surprising the share
would be from a true 95% CI, and the summary compares the count of misses with the count that
noise alone gives), and the share of reports that flag / name each planted effect. Null data sets (same
sizes, every effect zero): the share of reports with ANY flag (target <= 5%: the flags are one
Benjamini-Hochberg family at q <= 0.05), per-kind flag rates, and the null coverage of each CI.
Real-like arms (the same seeds and effects, printed beside the plain ones): the data shaped as
real judge data is (issue 15): sessions stamped in batches of 30 (10 tied times over the span),
whole scores 1..10, and 15% of sessions where each reviewer scores every answer alike; the
truth is still the planted values (in a constant session they are not expressed, so a
within-session contrast there is 0).
Timing: simulate, import into a temporary SQLite database, then `council-db --db FILE bias-report
--format json` as a subprocess (start-up included) and `window.load` + `build` in process
(target: well under a second).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable

import numpy as np
from scipy.stats import binom

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import BOOTSTRAP_RESAMPLES, build
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
SHORT = dict(zip(MODELS, ["gpt-4o", "claude", "gemini", "llama"]))
PLANTED = dict(
    reviewer_offsets=dict(zip(MODELS, [-0.8, 0.6, 0.0, 0.2])),
    position_effects=[0.3, 0.0, 0.0, -0.2],
    self_preference=0.5,
    verbosity=0.3,
    length_quality_corr=0.5,
    model_quality=dict(zip(MODELS, [0.4, 0.2, -0.1, -0.5])),
)
# Real judge data's shape (issue 15): tied timestamps, a 1-10 integer scale, constant sessions.
REAL_LIKE = dict(batch_size=30, integer_scale=True, constant_share=0.15)
ARMS = ("plain", "real-like")
# (label, what the report should call the reviewer) for the planted severities
NAMED = {"openai/gpt-4o": "harsh", "anthropic/claude-3-5-sonnet": "generous", "meta-llama/llama-3.1-70b": "generous"}
FLAG_KINDS = ("reviewer_severity", "position", "self_preference", "verbosity")
COVERAGE_TARGET, NULL_FLAG_TARGET = 0.93, 0.05
WELL_UNDER_S = 0.5  # "well under a second", made checkable


def centred(values) -> list[float]:
    values = np.asarray(values, dtype=float)
    return (values - values.mean()).tolist()


def interval(metric) -> tuple[float, float, float]:
    """(estimate, ci_low, ci_high) of a report Metric; NaN where the report has no number."""
    if metric is None or metric.estimate is None:
        return (np.nan, np.nan, np.nan)
    low = np.nan if metric.ci_low is None else metric.ci_low
    high = np.nan if metric.ci_high is None else metric.ci_high
    return (metric.estimate, low, high)


def run(job: tuple[int, int, bool, int, str]) -> dict:
    """One data set through the full report: (planted, estimate, low, high) per estimator, flags."""
    seed, sessions, null, resamples, arm = job
    config = SimulationConfig(sessions=sessions, seed=seed, models=MODELS, **({} if null else PLANTED),
                              **(REAL_LIKE if arm == "real-like" else {}))
    out = io.StringIO()
    truth = write_jsonl(config, out)
    data = from_records(json.loads(line) for line in out.getvalue().splitlines())
    start = time.perf_counter()
    report = build(data, seed=seed, resamples=resamples)
    seconds = time.perf_counter() - start

    rows: dict[str, tuple[float, float, float, float]] = {}
    reviewers = {p.reviewer_id: p for p in report.reviewers}
    severity_truth = dict(zip(MODELS, centred([truth["reviewer_offsets"][m] for m in MODELS])))
    for name in MODELS:
        profile = reviewers.get(name)
        rows[f"severity {SHORT[name]}"] = (severity_truth[name], *interval(profile and profile.severity))
    slots = {s.position: s for s in (report.position.slot_effects if report.position else [])}
    for slot, value in enumerate(centred(truth["position_effects"])):
        rows[f"slot effect {slot}"] = (value, *interval(slots.get(slot)))
    rows["self-preference (pooled)"] = (truth["self_preference"], *interval(report.self_preference))
    for name in MODELS:
        profile = reviewers.get(name)
        rows[f"self-preference {SHORT[name]}"] = (truth["self_preference"],
                                                  *interval(profile and profile.self_preference))
    # The simulator plants verbosity per SD of log(chars) in its population; the report works on
    # log(chars + 1) (a difference of ~1e-3 at 1,200 chars) and its per-SD effect uses the sample SD.
    per_log = truth["verbosity"] / truth["log_length_sd"]
    length = report.length
    rows["length per log unit"] = (per_log, *interval(length and length.adjusted_effect_per_log_length))
    sample_sd = length.log_length_sd if length and length.log_length_sd else np.nan
    rows["length per SD (adjusted)"] = (per_log * sample_sd, *interval(length and length.adjusted_effect))
    quality = {m.model_id: m.quality for m in report.models}
    for name, value in zip(MODELS, centred([truth["model_quality"][m] for m in MODELS])):
        rows[f"quality {SHORT[name]}"] = (value, *interval(quality.get(name)))
    return {
        "rows": rows,
        "flags": [(f.kind, f.subject, f.estimate) for f in report.flags],
        "classes": {p.reviewer_id: p.classification for p in report.reviewers},
        "records": data.n_records, "seconds": seconds, "warnings": report.warnings,
        "disagreement": bool(length and length.disagreement),
        "clipped": float(np.mean((data.score <= 1.0) | (data.score >= 10.0))),
        "expressed": 1.0 - len(truth["constant_sessions"]) / truth["sessions"],
    }


def coverage_of(results: list[dict], key: str, expressed: bool = True) -> tuple[float, float, float, int]:
    """(coverage, mean truth, mean estimate, missing CIs) of one estimator over data sets.

    The truth is the effect the data carries: in a constant session no answer differs from
    another, so a contrast between answers (all but severities) is planted in the other
    sessions only; `expressed=False` compares with the planted value instead."""
    rows = np.array([r["rows"][key] for r in results], dtype=float)
    truth, estimate, low, high = rows.T
    if expressed and not key.startswith("severity"):
        truth = truth * np.array([r["expressed"] for r in results])
    missing = int(np.sum(np.isnan(low) | np.isnan(high)))
    covered = (low <= truth) & (truth <= high)  # a missing CI counts as not covering
    return float(np.mean(covered)), float(np.mean(truth)), float(np.nanmean(estimate)), missing


def below_95_p(coverage: float, n: int) -> float:
    """P(a true 95% CI covers this rarely or less in n data sets): small = a real shortfall."""
    return float(binom.cdf(round(coverage * n), n, 0.95))


def share(flags: list[bool]) -> str:
    return f"{np.mean(flags):7.1%}"


def council_db_command() -> list[str]:
    script = Path(sys.executable).with_name("council-db")
    return [str(script)] if script.exists() else [sys.executable, "-m", "council_db"]


def run_seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return time.perf_counter() - start


def timing(sessions: int, runs: int) -> list[str]:
    """Simulate, import through the real importer, time the CLI and the in-process report."""
    from council_db.analysis.loading import window
    from council_db.ingest.importer import import_files
    from council_db.store.database import open_database

    lines = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source, db_file = work / "bias_metrics.jsonl", work / "council.db"
        with source.open("wb") as out:
            truth = write_jsonl(SimulationConfig(sessions=sessions, seed=7, models=MODELS, **PLANTED), out)
        db = open_database(f"sqlite:///{db_file}", notify=lambda _: None)
        start = time.perf_counter()
        inserted = import_files(db, [str(source)]).total("inserted")
        imported_s = time.perf_counter() - start

        loads, builds = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            data = window.load(db, window.Window())
            t1 = time.perf_counter()
            report = build(data, seed=0)  # the CLI's defaults: seed 0, BOOTSTRAP_RESAMPLES
            t2 = time.perf_counter()
            loads.append(t1 - t0)
            builds.append(t2 - t1)
        db.engine.dispose()

        command = [*council_db_command(), "--db", str(db_file), "bias-report", "--format", "json"]
        cli = []
        for _ in range(runs):
            t0 = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            cli.append(time.perf_counter() - t0)
        parsed = json.loads(done.stdout)
        help_s = min(run_seconds([*council_db_command(), "--help"]) for _ in range(3))
        imports = ("import council_db.cli.app, council_db.report.builder, council_db.analysis.loading.window, "
                   "council_db.store.database, council_db.report.render")
        import_s = min(run_seconds([sys.executable, "-c", imports]) for _ in range(3))

    assert parsed["window"]["sessions"] == sessions, parsed["window"]
    in_process = [a + b for a, b in zip(loads, builds)]
    lines.append(f"data: {sessions:,} sessions x 16 = {truth['records']:,} records "
                 f"({inserted:,} imported in {imported_s:.2f} s); report: {parsed['window']['records']:,} records, "
                 f"{len(report.flags)} flags, bootstrap resamples {BOOTSTRAP_RESAMPLES} (CLI default)")
    lines.append(f"{'council-db --db FILE bias-report --format json (subprocess)':62} "
                 f"median {statistics.median(cli):6.3f} s  (min {min(cli):.3f}, {runs} runs)")
    lines.append(f"{'  start-up alone: council-db --help (min of 3)':62} {help_s:13.3f} s")
    lines.append(f"{'  python + importing the report stack (min of 3)':62} {import_s:13.3f} s")
    lines.append(f"{'in process: window.load + build':62} "
                 f"median {statistics.median(in_process):6.3f} s  (load {statistics.median(loads):.3f} + "
                 f"build {statistics.median(builds):.3f})")
    for label, seconds in (("CLI end to end", statistics.median(cli)),
                           ("in process (load + build)", statistics.median(in_process))):
        verdict = "PASS" if seconds <= WELL_UNDER_S else "under 1 s but not well under" if seconds < 1 else "FAIL"
        lines.append(f"target well under a second (read as <= {WELL_UNDER_S} s): {label:26} {seconds:.3f} s -> "
                     f"{verdict}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=200, help="data sets per arm (planted, null)")
    parser.add_argument("--sessions", type=int, default=300, help="sessions per data set (16 records each)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--resamples", type=int, default=BOOTSTRAP_RESAMPLES,
                        help="session-bootstrap resamples inside build (headline r, agreement)")
    parser.add_argument("--timing-sessions", type=int, default=2000, help="sessions for the timing (0: skip)")
    parser.add_argument("--timing-runs", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seed of the first data set (null: 100,000 more), to rerun a share on fresh data sets")
    parser.add_argument("--arms", default=",".join(ARMS),
                        help="comma-separated: plain (the simulator's defaults), real-like (REAL_LIKE added)")
    args = parser.parse_args()
    arms = [arm for arm in ARMS if arm in args.arms.split(",")]

    jobs = [(seed, args.sessions, null, args.resamples, arm) for arm in arms for null in (False, True)
            for seed in range(args.first_seed + 100_000 * null, args.first_seed + 100_000 * null + args.datasets)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(run, jobs, chunksize=8))
    elapsed = time.perf_counter() - start
    n = args.datasets
    planted = {arm: results[2 * i * n: (2 * i + 1) * n] for i, arm in enumerate(arms)}
    null = {arm: results[(2 * i + 1) * n: (2 * i + 2) * n] for i, arm in enumerate(arms)}

    build_ms = 1000 * np.median([r["seconds"] for r in results])
    first = args.first_seed
    print(f"bias-report benchmark - per arm ({', '.join(arms)}) {n} planted (seeds {first}..{first + n - 1}) + {n} "
          f"null data sets (seeds {100_000 + first}..), {args.sessions} sessions x 16 records = "
          f"{results[0]['records']:,} records each")
    print(f"real-like: {', '.join(f'{k}={v}' for k, v in REAL_LIKE.items())}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {args.workers} workers, "
          f"bootstrap resamples in build: {args.resamples}; median build {build_ms:.1f} ms, "
          f"wall {elapsed:.0f} s")
    for arm in arms:
        print(f"{arm}: scores at the clip limits (1.0 or 10.0): planted "
              f"{np.mean([r['clipped'] for r in planted[arm]]):.2%}, null "
              f"{np.mean([r['clipped'] for r in null[arm]]):.2%} of records")
    warnings = Counter((arm, w) for arm in arms for r in planted[arm] + null[arm] for w in r["warnings"])
    for (arm, text), count in warnings.most_common():
        print(f"{arm}: warning in {count}/{2 * n} reports: {text[:110]}")

    print()
    coverage_table(arms, planted, null, n)
    print()
    detection_table(arms, planted)
    print()
    null_flags(arms, null, n)

    if args.timing_sessions > 0:
        print()
        print("TIMING")
        for line in timing(args.timing_sessions, args.timing_runs):
            print(line)
    print()
    print(f"total wall time {time.perf_counter() - start:.0f} s")


def coverage_table(arms: list[str], planted: dict[str, list[dict]], null: dict[str, list[dict]], n: int) -> None:
    mc_se = np.sqrt(0.95 * 0.05 / n)
    print(f"COVERAGE of 95% CIs  (target >= {COVERAGE_TARGET:.0%}; Monte-Carlo SE ~{mc_se:.1%}; "
          f"cov: planted data; null: the same CI on null data, truth 0)")
    print(f"{'':37}" + "".join(f" {arm:-^41}" for arm in arms))
    columns = "".join(f" {'truth':>8} {'mean est':>9} {'cov':>7} {'p<95%':>6} {'null':>7}" for arm in arms)
    print(f"{'estimator':28} {'planted':>8}{columns}  target")
    misses, coverages = [], []
    for key in planted[arms[0]][0]["rows"]:
        cells, notes, ok = [], [], True
        planted_value = coverage_of(planted[arms[0]], key, expressed=False)[1]
        for arm in arms:
            coverage, truth, estimate, missing = coverage_of(planted[arm], key)
            null_coverage, _, _, null_missing = coverage_of(null[arm], key)
            coverages.append(coverage)
            cells.append(f" {truth:+8.3f} {estimate:+9.3f} {coverage:7.1%} {below_95_p(coverage, n):6.3f} "
                         f"{null_coverage:7.1%}")
            if missing or null_missing:
                notes.append(f"{arm}: {missing}+{null_missing} without CI")
            if not (coverage >= COVERAGE_TARGET and null_coverage >= COVERAGE_TARGET):
                ok = False
                misses.append(f"{key} ({arm})")
        note = f"  ({'; '.join(notes)})" if notes else ""
        print(f"{key:28} {planted_value:+8.3f}{''.join(cells)}  "
              f">= {COVERAGE_TARGET:.0%} {'ok' if ok else '<< MISS'}{note}")
    print(f"lowest planted coverage {min(coverages):.1%}, mean {np.mean(coverages):.1%}; "
          f"below target: {', '.join(misses) if misses else 'none'}")
    for arm in arms:
        raw = [coverage_of(planted[arm], key, expressed=False)[0] for key in planted[arm][0]["rows"]]
        print(f"{arm}: against the planted values (not the share the data carries): lowest coverage "
              f"{min(raw):.1%}, mean {np.mean(raw):.1%}")
    below = sum(c < COVERAGE_TARGET for c in coverages)
    by_chance = len(coverages) * binom.cdf(math.ceil(COVERAGE_TARGET * n) - 1, n, 0.95)
    print(f"{below} of {len(coverages)} planted shares below {COVERAGE_TARGET:.0%}; true 95% CIs would give "
          f"{by_chance:.1f} on average at {n} data sets. p<95%: one-sided binomial p of a share this low from a "
          f"true 95% CI (one of {len(coverages)}: expect a few under 0.05); rerun with another --first-seed or more "
          "--datasets to tell noise from a real shortfall")


def detection_table(arms: list[str], planted: dict[str, list[dict]]) -> None:
    print(f"{'DETECTION on planted data  (share of reports)':66}" + "".join(f" {arm:>10}" for arm in arms))
    gemini = "google/gemini-1.5-pro"
    checks: list[tuple[str, Callable[[dict], bool]]] = []
    for name, word in NAMED.items():
        checks.append((f"{SHORT[name]} named {word} (offset {PLANTED['reviewer_offsets'][name]:+.1f})",
                       lambda r, name=name, word=word: r["classes"].get(name) == word))
    checks.append(("gemini named harsh/generous (offset 0: a false naming)",
                   lambda r: r["classes"].get(gemini) in ("harsh", "generous")))
    checks.append(("any planted reviewer named the wrong way",
                   lambda r: any(r["classes"].get(n) not in (w, "neutral") for n, w in NAMED.items())))
    checks.append(("position flagged (slots +0.3, 0, 0, -0.2)", lambda r: any(f[0] == "position" for f in r["flags"])))
    for name in MODELS:
        checks.append((f"self-preference of {SHORT[name]} flagged (+0.5)",
                       lambda r, name=name: any(f[0] == "self_preference" and f[1] == name for f in r["flags"])))
    checks.append(("self-preference flagged for all 4 reviewers",
                   lambda r: sum(f[0] == "self_preference" for f in r["flags"]) == 4))
    checks.append(("verbosity flagged, positive (+0.3/SD, length-quality corr 0.5)",
                   lambda r: any(f[0] == "verbosity" and f[2] > 0 for f in r["flags"])))
    checks.append(("length disagreement note (headline vs joint model)", lambda r: r["disagreement"]))
    for label, check in checks:
        print(f"  {label:64}" + "".join(f" {share([check(r) for r in planted[arm]]):>10}" for arm in arms))


def null_flags(arms: list[str], null: dict[str, list[dict]], n: int) -> None:
    print(f"{'NULL data sets (every effect zero; share of reports)':66}" + "".join(f" {arm:>10}" for arm in arms))
    rates = {arm: np.mean([bool(r["flags"]) for r in null[arm]]) for arm in arms}
    verdicts = "".join(f" {rates[arm]:>9.1%}{' ' if rates[arm] <= NULL_FLAG_TARGET else '!'}" for arm in arms)
    print(f"  {f'ANY flag (target <= {NULL_FLAG_TARGET:.0%}; ! = over it)':64}{verdicts}")
    print(f"  (Monte-Carlo SE {np.sqrt(0.05 * 0.95 / n):.1%}; under the complete null one BH "
          f"family at q 0.05 is Simes' test, whose any-flag rate is ~5% by construction)")
    kinds = sorted({f[0] for arm in arms for r in null[arm] for f in r["flags"]} | set(FLAG_KINDS))
    for kind in kinds:
        print(f"  {kind + ' flagged':64}"
              + "".join(f" {share([any(f[0] == kind for f in r['flags']) for r in null[arm]]):>10}" for arm in arms))
    for arm in arms:
        named = np.mean([any(c in ("harsh", "generous") for c in r["classes"].values()) for r in null[arm]])
        print(f"  {arm}: any reviewer named harsh/generous {named:.1%}")


if __name__ == "__main__":
    main()
