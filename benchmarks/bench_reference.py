"""Agreement with the reference (issue 28): do the intervals cover the agreement the simulator
plants, how often is a judge as good as a person called below the human ceiling, how often is
a worse one caught, how does the alternative annotator test decide, and what does the analysis
cost beside the report it will join?

    python benchmarks/bench_reference.py [--datasets 400] [--sessions 100,400] [--timing-sessions 5000]
                                         [--reference-share 0.1] [--timing-runs 5] [--first-seed 0]

Design (each data set, seeds F..F+N-1): two answers a session from four models; judges "judge"
(half the humans' noise), "twin" (planted exactly like the humans) and "noisy" (four times their
noise); five humans, three of them rating each session; whole scores 1..10, so ties are common.
The truth is ``simulate.implied.implied_agreement`` over 400,000 fresh sessions of the same plan
(Monte-Carlo SE about 0.001). Per estimate: the share of 95% CIs covering the truth (target
>= 93%; Monte-Carlo SE about 1.1 points at 400 data sets; the one-sided binomial p says how
surprising the share would be from a true 95% interval). Flags: the share of data sets where each
judge's one-sided "below the ceiling" p <= 0.05 (the twin's is the false-flag rate, target <= 5%;
the noisy judge's the power). The alternative annotator test: the share of data sets each judge
passes (epsilon 0.2, Benjamini-Yekutieli at 0.05).
Timing: the default council (four models judging each other, four answers a session) with three
of five humans rating a share ``--reference-share`` of the sessions, ``--timing-sessions``
sessions (the report's sample size above 5,000 sessions: at 1,000,000 sessions the report reads
a sample of this size), median of ``--timing-runs``: ``reference_summary`` beside the report's
``build`` on the same ScoreData (target: <= 10% of it).
"""

from __future__ import annotations

import argparse
import io
import math
import platform
import statistics
import time
from collections import defaultdict

import msgspec
from msgspec.structs import replace

from council_db.analysis.loading.score_data import ScoreData, from_records, judges_only
from council_db.analysis.reference.summary import reference_summary
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl
from council_db.simulate.implied import implied_agreement

DESIGN = dict(models=["a", "b", "c", "d"], reviewers=["judge", "twin", "noisy"], candidates_per_session=2,
              humans=["h1", "h2", "h3", "h4", "h5"], humans_per_session=3, answer_sd=1.0, noise_sd=0.5,
              reviewer_noise_sd={"noisy": 2.0, "judge": 0.3}, integer_scale=True)
TRUTH_SESSIONS = 400_000


def score_data(config: SimulationConfig) -> tuple[ScoreData, dict]:
    out = io.StringIO()
    truth = write_jsonl(config, out)
    return from_records(msgspec.json.decode(f"[{','.join(out.getvalue().splitlines())}]")), truth


def binomial_tail(hits: int, n: int, p: float = 0.95) -> float:
    """P(X <= hits) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(hits + 1))


def coverage(sessions: int, datasets: int, first_seed: int, truth: dict) -> None:
    covered: dict[str, int] = defaultdict(int)
    flagged: dict[str, int] = defaultdict(int)
    passed: dict[str, int] = defaultdict(int)
    reports: dict[str, int] = defaultdict(int)
    started = time.perf_counter()
    for seed in range(first_seed, first_seed + datasets):
        data, planted = score_data(SimulationConfig(sessions=sessions, seed=seed, **DESIGN))
        summary = reference_summary(data, planted["reviewer_kinds"])
        for name, hit in report_flags(data, planted["reviewer_kinds"]).items():
            reports[name] += hit
        for judge in summary.judges:
            family, true = judge.pairwise, truth["judges"][judge.judge]
            for name in ("agreement", "kappa", "agreement_without_ties", "kappa_without_ties"):
                covered[f"{judge.judge:6} vs majority  {name}"] += getattr(family.with_reference, name).covers(
                    true["reference"][name])
                covered[f"{judge.judge:6} vs one human {name}"] += getattr(family.with_raters, name).covers(
                    true["raters"][name])
            flagged[judge.judge] += family.below_ceiling.p_value <= 0.05
            passed[judge.judge] += bool(family.replacement and family.replacement.passed)
        for name in ("agreement", "kappa", "agreement_without_ties", "kappa_without_ties"):
            covered[f"humans among themselves {name}"] += getattr(summary.ceiling.pairwise, name).covers(
                truth["ceiling"][name])
    print(f"\n{sessions} sessions a data set, {datasets} data sets ({time.perf_counter() - started:.0f} s)")
    print(f"{'estimate':45} {'coverage':>9} {'P(<= | 95%)':>12}")
    for name, hits in covered.items():
        print(f"{name:45} {hits / datasets:9.1%} {binomial_tail(hits, datasets):12.3f}")
    print(f"{'judge':8} {'below the ceiling (p <= 0.05)':>30} {'passes the alt-test':>20}")
    for judge in ("judge", "twin", "noisy"):
        print(f"{judge:8} {flagged[judge] / datasets:30.1%} {passed[judge] / datasets:20.1%}")
    print("Whole reports (the one BH family at q <= 0.05; target <= 5% for a flag nothing planted):")
    for name, hits in reports.items():
        print(f"  {name:52} {hits / datasets:6.1%}  (P(>= {hits} | 5%) {1 - binomial_tail(hits - 1, datasets, 0.05):.3f})")


def report_flags(data: ScoreData, kinds: dict[str, str]) -> dict[str, bool]:
    """What the bias report flags on one data set: the twin below the ceiling (a false flag),
    any other flag of an effect nothing planted, and the noisy judge caught. Reviewer severity
    is left out of the false flags: whole scores clipped at 1 and 10 make the noisy judge's
    mean truly about 0.03 points lower than the others' (more of its scores hit 10 than 1), a
    real difference the report may find."""
    found = build(judges_only(replace(data, kinds=kinds)), with_reference=replace(data, kinds=kinds)).flags
    caught = [f for f in found if f.kind == "below_ceiling" and f.subject == "noisy"]
    unplanted = [f for f in found if f not in caught and f.kind != "reviewer_severity"]
    return {"twin below the ceiling (false flag)": any(f.kind == "below_ceiling" and f.subject == "twin"
                                                        for f in found),
            "any flag of an effect nothing planted (false flag)": bool(unplanted),
            "noisy below the ceiling (power)": bool(caught)}


def timing(sessions: int, share: float, runs: int) -> None:
    config = SimulationConfig(sessions=sessions, seed=1, humans=["h1", "h2", "h3", "h4", "h5"], humans_per_session=3,
                              reference_share=share, answer_sd=1.0)
    data, planted = score_data(config)
    kinds = planted["reviewer_kinds"]
    report, reference = [], []
    for _ in range(runs):
        started = time.perf_counter()
        build(data)
        report.append(time.perf_counter() - started)
        started = time.perf_counter()
        reference_summary(data, kinds)
        reference.append(time.perf_counter() - started)
    rated = len({int(s) for s, r in zip(data.session, data.reviewer) if data.reviewers[r] in kinds})
    print(f"\nTiming: {sessions} sessions, {data.n_records} records, {rated} sessions rated by humans "
          f"({share:.0%}), median of {runs}")
    print(f"  report build      {statistics.median(report):.3f} s")
    print(f"  reference summary {statistics.median(reference):.3f} s "
          f"({statistics.median(reference) / statistics.median(report):.1%} of the report)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=400)
    parser.add_argument("--sessions", default="100,400")
    parser.add_argument("--timing-sessions", type=int, default=5000)
    parser.add_argument("--reference-share", type=float, default=0.1)
    parser.add_argument("--timing-runs", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}")
    started = time.perf_counter()
    truth = implied_agreement(SimulationConfig(sessions=10, seed=0, **DESIGN), sessions=TRUTH_SESSIONS)
    print(f"Truth over {TRUTH_SESSIONS:,} sessions ({time.perf_counter() - started:.0f} s):")
    for judge, figures in truth["judges"].items():
        print(f"  {judge:6} vs majority {figures['reference']['agreement']:.3f} (kappa "
              f"{figures['reference']['kappa']:.3f}), vs one human {figures['raters']['agreement']:.3f}")
    print(f"  humans among themselves {truth['ceiling']['agreement']:.3f} (kappa {truth['ceiling']['kappa']:.3f})")
    for sessions in (int(s) for s in args.sessions.split(",")):
        coverage(sessions, args.datasets, args.first_seed, truth)
    timing(args.timing_sessions, args.reference_share, args.timing_runs)


if __name__ == "__main__":
    main()
