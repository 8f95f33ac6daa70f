"""Small-tier calibration of the frequentist report (issue 33, item 0): over many simulated
data sets at 10, 20, 30 and 50 sessions (and 300 to check nothing is lost there), how often a
null report flags anything, how often each test rejects under the null, and how often each
95% CI covers the truth, null and planted; every rate with its Wilson 95% interval.

    python benchmarks/bench_small_tiers.py [--sizes 10 20 30 50 300] [--null 150] [--planted 100]
        [--seed 0] [--write-docs]

Each set is `council-db simulate`'s generator (SimulationConfig: 4 models that review each
other, one shuffle per session) read in process and reported by `report.builder.build`, the
report every command shows. Null sets plant nothing (every effect's truth is 0; model
quality varies). Planted sets plant reviewer offsets, a first-slot effect, self-preference
and verbosity; coverage is of each planted figure's truth (slots and severities relative to
their average, as the report states them).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import platform
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from doc_tables import machine, markdown_table, write_table

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from council_db.simulate import SimulationConfig
from council_db.simulate.jsonl import write_jsonl

PLANTED = {"reviewer_offsets": {"openai/gpt-4o": -0.4, "google/gemini-1.5-pro": 0.3},
           "position_effects": [0.3, 0.0, 0.0, 0.0], "self_preference": 0.4, "verbosity": 0.3}
RESAMPLES = 100  # the report's bootstraps (figures no test here reads): fewer keep the study short


@dataclass
class Tally:
    """Hits out of trials per name (a rejection or a covering interval)."""

    hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    trials: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, name: str, hit: bool) -> None:
        self.trials[name] += 1
        self.hits[name] += int(hit)


def wilson(hits: int, n: int) -> tuple[float, float]:
    """Wilson 95% interval of a binomial share."""
    if n == 0:
        return math.nan, math.nan
    z, p = 1.959964, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def simulated_report(sessions: int, seed: int, planted: bool):
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(sessions=sessions, seed=seed, **(PLANTED if planted else {})), out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    return build(from_records(lines), resamples=RESAMPLES), truth


def covers(metric, truth: float) -> bool | None:
    if metric is None or metric.ci_low is None or not math.isfinite(metric.ci_low):
        return None
    return metric.ci_low <= truth <= metric.ci_high


def tally_report(report, truth: dict, planted: bool, rejected: Tally, covered: Tally) -> None:
    """Every test's rejection (p <= 0.05, null sets only) and every CI's coverage of the truth."""

    def check(name: str, metric, true_value: float, p_value: float | None = None) -> None:
        hit = covers(metric, true_value)
        if hit is not None:
            covered.add(name, hit)
        p = metric.p_value if p_value is None and metric is not None else p_value
        if not planted and p is not None and math.isfinite(p):
            rejected.add(name, p <= 0.05)

    offsets = truth["reviewer_offsets"]
    mean_offset = sum(offsets.values()) / len(offsets)
    for profile in report.reviewers:
        check("severity", profile.severity, offsets[profile.reviewer_id] - mean_offset)
        check("self-preference (reviewer)", profile.self_preference, truth["self_preference"])
    check("self-preference (pooled)", report.self_preference, truth["self_preference"])
    if report.position is not None:
        slots = np.asarray(truth["position_effects"], dtype=float)
        for slot in report.position.slot_effects:
            check("slot effect", slot, float(slots[slot.position] - slots.mean()), p_value=math.nan)
        if report.position.test is not None and not planted:
            rejected.add("position (Wald)", report.position.test.p_value <= 0.05)
    if report.length is not None:
        check("verbosity per SD", report.length.adjusted_effect, truth["verbosity"])
    for cell in report.affinity:
        if cell.mirror_of is None:
            check("affinity", cell.residual_mean, 0.0)
    for anchor in report.anchoring:
        check("anchoring (pooled)" if anchor.reviewer_id is None else "anchoring (reviewer)", anchor.effect, 0.0)
    if not planted:
        rejected.add("any flag", bool(report.flags))
        for kind in {flag.kind for flag in report.flags}:
            rejected.hits[f"flag: {kind}"] += 1  # its trials are the null reports (set below)
            rejected.trials[f"flag: {kind}"] += 0


def rate(tally: Tally, name: str) -> str:
    """The share in percent with its Wilson 95% interval and n."""
    n, hits = tally.trials.get(name, 0), tally.hits.get(name, 0)
    if n == 0:
        return "-"
    low, high = wilson(hits, n)
    return f"{100 * hits / n:.1f}% ({100 * low:.0f}-{100 * high:.0f}; {n})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 50, 300])
    parser.add_argument("--null", type=int, default=150, help="null sets per size (default 150)")
    parser.add_argument("--planted", type=int, default=100, help="planted sets per size (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="first set's seed")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    options = parser.parse_args()
    cells: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    started, records = time.perf_counter(), 0
    for size in options.sizes:
        rejected, covered = Tally(), Tally()
        for planted, count in ((False, options.null), (True, options.planted)):
            for i in range(count):
                report, truth = simulated_report(size, options.seed + i + (100_000 if planted else 0), planted)
                records += truth["records"]
                tally_report(report, truth, planted, rejected, covered)
        for name in rejected.trials:
            if name.startswith("flag: "):  # counted per null report
                rejected.trials[name] = options.null
            what = "null reports with" if name.startswith(("any", "flag")) else "null: p <= 0.05"
            cells[(what, name)][size] = rate(rejected, name)
        for name in covered.trials:
            cells[("95% CI covers", name)][size] = rate(covered, name)
        print(f"{size} sessions: {options.null} null + {options.planted} planted sets, "
              f"{time.perf_counter() - started:.0f} s so far", flush=True)
    order = {"null reports with": 0, "null: p <= 0.05": 1, "95% CI covers": 2}
    rows = [[what, name, *(cells[(what, name)].get(size, "-") for size in options.sizes)]
            for what, name in sorted(cells, key=lambda k: (order[k[0]], k[0] == "null reports with" and k[1] != "any flag",
                                                           k[1]))]
    table = markdown_table(["", "figure", *(f"{size} sessions" for size in options.sizes)], rows,
                           right=set(range(2, 2 + len(options.sizes))))
    print(table)
    print(f"{records:,} records in all")
    if options.write_docs:
        write_table("small-tiers", table,
                    f"{machine()}; {options.null} null and {options.planted} planted simulated sets per size "
                    f"({records:,} records in all, seeds from {options.seed}); each cell: the rate, its Wilson "
                    f"95% CI and n; report bootstraps {RESAMPLES}; load {os.getloadavg()[0]:.1f}; "
                    f"Python {platform.python_version()}")


if __name__ == "__main__":
    main()
