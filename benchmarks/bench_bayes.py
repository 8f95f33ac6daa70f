"""Hierarchical-model benchmark (issue 33): on histories of 10, 20, 30 and 50 sessions, does
the empirical Bayes joint model (`bias-report --method bayes`) do better than the
frequentist joint model it sits beside?

    python benchmarks/bench_bayes.py [--sets 200] [--null-sets 400] [--null-sizes 10 20 30 50] [--workers 2]
                                     [--write-docs]
    python benchmarks/bench_bayes.py --speed [--write-docs]

Each planted set is one history of 50 sessions (4 judges scoring 4 candidates, 16 records a
session) whose judges are drawn from a population, as the model assumes (`council-db
simulate --reviewer-spread 0.5 --reviewer-position-spread 0.15 --reviewer-verbosity-spread
0.1`; candidate quality drawn with SD 0.7; slot effects 0.2, 0, -0.1, 0; verbosity 0.2
points per SD of log length; self-preference 0.3), read after its first 10, 15, ..., 50
sessions, as a user's history grows. Each null set is the same without any bias (quality
still differs), read after 10, 20, 30 and 50 sessions. Per size it prints:

- coverage: the share of 95% intervals (credible for Bayes, confidence for the joint model)
  that hold the planted value, for the severities, candidate qualities, the panel's slot
  effects, the length effect and the pooled self-preference (target >= 93%);
- root mean squared error of the severities and qualities against the planted values;
- the seed's stability metric: a judge's largest move of severity after session 20 (to the
  last size), in SDs of the population's severities (0.5), mean over judges, and the share of
  judges that stayed within 0.5 SD (the seed's "< 0.5 SD drift after 20+ sessions");
- detecting the length effect (0.2 points per SD, a realistic size): the share of histories
  where each method flags it (Bayes by its rule, the frequentist by the report's own flags:
  `report.builder.build`), and where the joint model's own p < 0.05 (the seed's "p < 0.05
  achievable at 30+ sessions");
- false flags under the null, on two kinds of null history (no bias at all; and each answer
  with its own quality, SD 0.5, shared by every judge, as real answers have): the share of
  null sets with any flag, Bayes by its rule (Benjamini-Hochberg over 2 x (1 - P) of its
  statements) and the frequentist report's own flags of the same kinds (reviewer severity,
  position, verbosity, self-preference: what `bias-report` raises, Benjamini-Hochberg over its
  whole family), paired on the same histories: the difference with its 95% CI; and which
  kinds the Bayes flags were.

With --speed it measures what the model costs a report instead: `council-db bias-report` with
and without `--method bayes` on a store of 2,000 simulated sessions (each as a process, median
of 5, alternating), and the fit alone (time and tracemalloc peak) on 5,000 sessions, the most
a report reads record by record at any window size (above it, a sample of 5,000 sessions).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from council_db.analysis.hierarchical import hierarchical_model
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import ScoreData, from_records, keep_sessions, log_length_sd
from council_db.report.builder import build
from council_db.report.hierarchical_section import hierarchical
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["openai/gpt-4o", "anthropic/claude-3-5-sonnet", "google/gemini-1.5-pro", "meta-llama/llama-3.1-70b"]
SIZES = [10, 20, 30, 50]
CUTS = [10, 15, 20, 25, 30, 35, 40, 45, 50]  # the history read after each of these sessions
POPULATION_SD = 0.5  # of the judges' severities: the stability metric's unit
PLANTED = dict(reviewer_spread=POPULATION_SD, reviewer_position_spread=0.15, reviewer_verbosity_spread=0.1,
               position_effects=[0.2, 0.0, -0.1, 0.0], verbosity=0.2, self_preference=0.3)
FAMILIES = ["severity", "quality", "slot", "length", "self"]
KINDS = ["reviewer_severity", "position", "verbosity", "self_preference"]  # the flags compared
NULLS = {"null": 0.0, "null, answer quality SD 0.5": 0.5}  # null design -> each answer's own quality SD
RESAMPLES = 100  # the report's bootstraps (no flag compared here reads them): fewer keep the study short


def centred(values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values - values.mean()


def history(seed: int, null: bool, answer_sd: float = 0.0, **changes) -> tuple[ScoreData, dict]:
    """A history of the planted design (with ``changes``) or the null one."""
    quality = np.random.default_rng([seed, 7]).normal(0.0, 0.7, len(MODELS))
    config = SimulationConfig(sessions=max(CUTS), seed=seed, models=MODELS, answer_sd=answer_sd,
                              model_quality=dict(zip(MODELS, quality.tolist())),
                              **({} if null else {**PLANTED, **changes}))
    out = io.StringIO()
    truth = write_jsonl(config, out)
    return from_records(json.loads(line) for line in out.getvalue().splitlines()), truth


def planted_values(truth: dict) -> dict[str, np.ndarray]:
    """Each family's planted values as the figures state them (relative to the panel's average).
    A judge's own slot effects are drawn one per slot, not summing to zero: their mean moves all
    its scores (every session shows every slot), so it is part of its severity, as the rest of
    them, averaged over judges, is part of the slot effects."""
    own_slots = np.mean([truth["reviewer_position_effects"][r] for r in MODELS], axis=0)
    own_level = [np.mean(truth["reviewer_position_effects"][r]) for r in MODELS]
    return {"severity": centred(np.add([truth["reviewer_offsets"][r] for r in MODELS], own_level)),
            "quality": centred([truth["model_quality"][m] for m in MODELS]),
            "slot": centred(np.asarray(truth["position_effects"]) + own_slots),
            "length": np.array([np.mean([truth["reviewer_verbosity"][r] for r in MODELS]) / truth["log_length_sd"]]),
            "self": np.array([truth["self_preference"]])}


def bayes_figures(data: ScoreData) -> tuple[dict[str, np.ndarray], set[str]]:
    """(family -> rows of estimate, low, high), the kinds flagged."""
    part = hierarchical(data, "moderate")
    sd = log_length_sd(data)

    def rows(metrics, scale: float = 1.0) -> np.ndarray:
        return np.array([[m.estimate * scale, m.ci_low * scale, m.ci_high * scale] for m in metrics])

    by_name = {r.reviewer_id: r for r in part.reviewers}
    models = {m.model_id: m for m in part.models}
    figures = {"severity": rows([by_name[r].severity for r in MODELS]),
               "quality": rows([models[m].quality for m in MODELS]),
               "slot": rows(sorted(part.position, key=lambda s: s.position)),
               "length": rows([part.length], 1.0 / sd), "self": rows([part.self_preference])}
    return figures, {f.kind for f in part.flags}


def joint_figures(data: ScoreData) -> tuple[dict[str, np.ndarray], bool]:
    """(family -> rows), whether the length effect's p < 0.05."""
    fit = joint_model.fit(data)

    def rows(effects) -> np.ndarray:
        return np.array([[e.estimate, e.ci_low, e.ci_high] for e in effects])

    figures = {"severity": rows([fit.severity[r] for r in MODELS]), "quality": rows([fit.quality[m] for m in MODELS]),
               "slot": rows([fit.slot_effects[s] for s in sorted(fit.slot_effects)]),
               "length": rows([fit.length_per_log]), "self": rows([fit.self_preference])}
    return figures, bool(fit.length_per_log.p_value < 0.05)


def report_flags(data: ScoreData) -> set[str]:
    """The kinds among KINDS that the frequentist report (as `bias-report` builds it) flags (for_rules:
    without the agreement alpha, which no flag reads)."""
    return {f.kind for f in build(data, resamples=RESAMPLES, for_rules=True).flags} & set(KINDS)


def run(job: tuple[int, str, list[int]]) -> dict:
    seed, design, null_sizes = job
    null = design in NULLS
    data, truth = history(seed, null, NULLS.get(design, 0.0))
    out: dict = {"records": data.n_records, "cuts": {}}
    start = time.perf_counter()
    for cut in CUTS if not null else null_sizes:
        prefix = keep_sessions(data, np.arange(data.n_sessions) < cut)
        bayes, bayes_kinds = bayes_figures(prefix)
        figures = dict(bayes_kinds=bayes_kinds)
        if not null:
            figures["bayes"] = bayes
            figures["joint"], figures["joint_p"] = joint_figures(prefix)
        if null or cut in SIZES:
            figures["report_kinds"] = report_flags(prefix)
        out["cuts"][cut] = figures
    out["truth"] = planted_values(truth)
    out["seconds"] = time.perf_counter() - start
    return out


def coverage(results: list[dict], size: int, method: str, family: str) -> float:
    hits = [(rows[:, 1] <= truth) & (truth <= rows[:, 2]) for r in results
            for rows, truth in [(r["cuts"][size][method][family], r["truth"][family])]]
    return float(np.mean(np.concatenate(hits)))


def rmse(results: list[dict], size: int, method: str, family: str) -> float:
    errors = np.concatenate([r["cuts"][size][method][family][:, 0] - r["truth"][family] for r in results])
    return float(np.sqrt(np.mean(errors ** 2)))


def movement(results: list[dict], size: int, method: str) -> tuple[float, float]:
    """Each judge's largest move of severity after session 20 up to ``size``, in population SDs:
    the mean over judges and sets, and the share within 0.5 SD."""
    later = [c for c in CUTS if 20 <= c <= size]
    moves = np.concatenate([np.max(np.abs(np.array([r["cuts"][c][method]["severity"][:, 0] for c in later])
                                          - r["cuts"][size][method]["severity"][:, 0]), axis=0) for r in results])
    moves = moves / POPULATION_SD
    return float(moves.mean()), float(np.mean(moves < 0.5))


def paired(results: list[dict], size: int) -> str:
    """Both methods' share of null sets with any flag, and their paired difference with its
    95% CI (normal on the per-set differences)."""
    bayes = np.array([bool(r["cuts"][size]["bayes_kinds"]) for r in results], dtype=float)
    report = np.array([bool(r["cuts"][size]["report_kinds"]) for r in results], dtype=float)
    difference = bayes - report
    half = 1.959964 * difference.std(ddof=1) / np.sqrt(len(difference)) if len(difference) > 1 else np.nan
    mean = difference.mean()
    return f"{bayes.mean():.1%} / {report.mean():.1%}; {mean:+.1%} [{mean - half:+.1%}, {mean + half:+.1%}]"


def table(planted: list[dict], null: dict[str, list[dict]], null_sizes: list[int]) -> tuple[list[str], list[list[str]]]:
    header = ["figure"] + [f"{size} sessions" for size in SIZES]
    rows = _planted_rows(planted) if planted else []
    for design, results in null.items():
        rows.append([f"{design}: sets with any flag, Bayes / report; paired difference [95% CI]"]
                    + [paired(results, s) if s in null_sizes else "n/a" for s in SIZES])
        rows.append([f"{design}: Bayes flags by kind (severity, position, verbosity, self)"] + [
            ", ".join(str(sum(kind in r["cuts"][s]["bayes_kinds"] for r in results)) for kind in KINDS)
            if s in null_sizes else "n/a" for s in SIZES])
    return header, rows


def _planted_rows(planted: list[dict]) -> list[list[str]]:
    rows = []
    for family in FAMILIES:
        rows.append([f"coverage, {family} (Bayes / joint)"] + [
            f"{coverage(planted, s, 'bayes', family):.1%} / {coverage(planted, s, 'joint', family):.1%}"
            for s in SIZES])
    for family in ("severity", "quality"):
        rows.append([f"RMSE, {family} (Bayes / joint)"] + [
            f"{rmse(planted, s, 'bayes', family):.3f} / {rmse(planted, s, 'joint', family):.3f}" for s in SIZES])
    for method, label in (("bayes", "Bayes"), ("joint", "joint")):
        rows.append([f"severity move after session 20, SDs ({label}): mean; share < 0.5"] + [
            "n/a" if s < 30 else "{:.2f}; {:.0%}".format(*movement(planted, s, method)) for s in SIZES])
    rows.append(["length flagged (Bayes / report), and the joint model's p < 0.05"] + [
        f"{np.mean([('verbosity' in r['cuts'][s]['bayes_kinds']) for r in planted]):.0%} / "
        f"{np.mean([('verbosity' in r['cuts'][s]['report_kinds']) for r in planted]):.0%}; "
        f"{np.mean([r['cuts'][s]['joint_p'] for r in planted]):.0%}" for s in SIZES])
    return rows


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def speed() -> tuple[list[str], list[list[str]], str]:
    """bias-report's wall time with and without --method bayes at 2,000 sessions; the fit's
    time and peak memory at 5,000."""
    with tempfile.TemporaryDirectory() as work:
        jsonl, db = Path(work) / "s.jsonl", Path(work) / "s.db"
        council = [sys.executable, "-m", "council_db"]
        subprocess.run([*council, "simulate", "-o", str(jsonl), "--sessions", "2000", "--reviewer-spread", "0.5",
                        "--verbosity", "0.2", "--self-preference", "0.3"], check=True, stderr=subprocess.DEVNULL)
        subprocess.run([*council, "--db", str(db), "import", "-q", str(jsonl)], check=True, stderr=subprocess.DEVNULL)
        report = [*council, "--db", str(db), "bias-report", "--json"]
        plain, bayes = [], []
        for _ in range(5):
            plain.append(timed(report))
            bayes.append(timed([*report, "--method", "bayes"]))
    rows = [["`bias-report`, 2,000 sessions (32,000 records)", f"{statistics.median(plain):.2f} s", ""],
            ["`bias-report --method bayes`, the same", f"{statistics.median(bayes):.2f} s",
             f"{statistics.median(bayes) / statistics.median(plain) - 1:+.0%}"]]
    data, _ = history_of(5000)
    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        hierarchical_model.fit(data)
        seconds.append(time.perf_counter() - start)
    tracemalloc.start()  # apart from the timing: tracing slows every allocation
    hierarchical_model.fit(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rows.append([f"the fit alone, 5,000 sessions ({data.n_records:,} records: a report's most), median of 3",
                 f"{statistics.median(seconds):.2f} s",
                 f"peak {peak / 2**20:.0f} MB"])
    return ["measured", "wall", "beside it"], rows, "stores and sample simulated with council-db simulate"


def history_of(sessions: int) -> tuple[ScoreData, dict]:
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(sessions=sessions, seed=1, models=MODELS, **PLANTED), out)
    return from_records(json.loads(line) for line in out.getvalue().splitlines()), truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=200, help="planted histories (default 200)")
    parser.add_argument("--null-sets", type=int, default=400, help="null histories of each null design (default 400)")
    parser.add_argument("--null-sizes", type=int, nargs="+", default=SIZES, choices=SIZES,
                        help="the sizes the null histories are read at (default all)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    parser.add_argument("--speed", action="store_true", help="what the model costs a report, not its accuracy")
    args = parser.parse_args()
    if args.speed:
        header, rows, what = speed()
        for row in rows:
            print(" | ".join(row))
        if args.write_docs:
            from doc_tables import machine, markdown_table, write_table

            write_table("bayes-speed", markdown_table(header, rows, right=(1,)), f"{machine()}; {what}")
        return

    # the null designs share their seeds: the same histories, with and without answer quality
    jobs = [(seed, "planted", []) for seed in range(args.sets)] + [
        (500_000 + seed, design, args.null_sizes) for design in NULLS for seed in range(args.null_sets)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(run, jobs, chunksize=4))
    elapsed = time.perf_counter() - start
    planted = results[: args.sets]
    null = {design: results[args.sets + n * args.null_sets: args.sets + (n + 1) * args.null_sets]
            for n, design in enumerate(NULLS)}
    header, rows = table(planted, null, args.null_sizes)
    records = results[0]["records"]
    measured = (f"{args.sets} planted histories and {args.null_sets} null histories of each null design, "
                f"{max(CUTS)} sessions ({records:,} records each, 16 a session), planted read at "
                f"{', '.join(map(str, CUTS))} sessions, null at {', '.join(map(str, args.null_sizes))}; "
                f"report bootstraps "
                f"{RESAMPLES}; python {platform.python_version()}, numpy {np.__version__}, {args.workers} workers, "
                f"load {os.getloadavg()[0]:.1f}, {elapsed:.0f} s")
    print(f"hierarchical model benchmark - {measured}")
    width = max(len(row[0]) for row in rows)
    print(f"{'':{width}}  " + "  ".join(f"{h:>17}" for h in header[1:]))
    for row in rows:
        print(f"{row[0]:{width}}  " + "  ".join(f"{cell:>17}" for cell in row[1:]))
    if args.write_docs:
        from doc_tables import machine, markdown_table, write_table

        write_table("bayes", markdown_table(header, rows, right=range(1, len(header))),
                    f"{machine()}; {measured}")


if __name__ == "__main__":
    main()
