"""Correlation benchmark: does each length-score estimator's 95% CI cover the truth?

    python benchmarks/bench_correlation.py [--sessions 500] [--answers 4] [--replicates 1000]
                                           [--rho 0,0.3,0.5] [--n-boot 1000] [--session-sd 0.5]

Each replicate simulates sessions of ``--answers`` answers whose (log length, mean score) is
bivariate normal with within-session correlation rho, plus session-level shifts of both
(``--session-sd``, in within-session SDs: some queries call for long answers, some score low
everywhere). For each estimator it prints the mean estimate, the share of replicates whose
95% CI covers rho (Monte Carlo SE ~ sqrt(.95 x .05 / replicates)) and the mean CI width.

Estimators: llm-council's pooled r (one r over all rows: raw chars vs score, SE 1/sqrt(N-3);
here over answer rows, so on real records with R reviewers per answer its N is R times larger
and its CI narrower still), the ADR-018 write-up's mean Fisher z, fixed effect and
DerSimonian-Laird random effects on per-session Fisher z, and the headline within-session r
with a session-bootstrap CI (and its analytic cluster-robust variant, n_boot = 0).
Target (PRODUCT.md): the headline covers >= 93% at every rho.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

from council_db.analysis.stats import (
    Estimate,
    mean_fisher_z_r,
    meta_analysis,
    per_session_r,
    pooled_r_over_records,
    session_moments,
    within_session_correlation,
)

ESTIMATORS = (
    ("llm-council pooled r (rows)", "naive"),
    ("write-up mean Fisher z", "writeup"),
    ("fixed effect (Fisher z)", "fixed"),
    ("random effects (DL)", "random"),
    ("HEADLINE within-session, bootstrap", "headline"),
    ("within-session, analytic CR", "analytic"),
)


def simulate(rng: np.random.Generator, sessions: int, answers: int, rho: float,
             session_sd: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(session, log length, score) for one data set, one row per answer."""
    u = rng.standard_normal((sessions, answers))
    v = rho * u + math.sqrt(1.0 - rho * rho) * rng.standard_normal((sessions, answers))
    shift_x = session_sd * rng.standard_normal((sessions, 1))
    shift_y = session_sd * rng.standard_normal((sessions, 1))
    log_length = math.log(1200.0) + 0.5 * (shift_x + u)  # within-session SD 0.5, as the simulator
    score = 6.5 + 1.0 * (shift_y + v)
    session = np.repeat(np.arange(sessions), answers)
    return session, log_length.ravel(), score.ravel()


def estimates(session: np.ndarray, log_length: np.ndarray, score: np.ndarray, n_boot: int,
              rng: np.random.Generator) -> dict[str, Estimate]:
    moments = session_moments(session, log_length, score)
    r_s = per_session_r(moments)
    meta = meta_analysis(r_s, moments.n)
    return {
        "naive": pooled_r_over_records(np.exp(log_length), score),
        "writeup": mean_fisher_z_r(r_s),
        "fixed": meta.fixed,
        "random": meta.random,
        "headline": within_session_correlation(session, log_length, score, n_boot, rng),
        "analytic": within_session_correlation(session, log_length, score, 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--answers", type=int, default=4, help="answers per session")
    parser.add_argument("--replicates", type=int, default=1000, help="data sets per rho")
    parser.add_argument("--rho", default="0,0.3,0.5", help="within-session correlations, comma-separated")
    parser.add_argument("--n-boot", type=int, default=1000, help="session resamples for the headline CI")
    parser.add_argument("--session-sd", type=float, default=0.5, help="SD of session shifts, in within-SD units")
    parser.add_argument("--timing-sessions", type=int, default=100_000,
                        help="also time one headline call on this many sessions (0: skip)")
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    rhos = [float(r) for r in args.rho.split(",") if r.strip()]
    rng = np.random.default_rng(args.seed)

    print(f"# {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}")
    print(f"# {args.replicates} data sets per rho x {args.sessions} sessions x {args.answers} answers "
          f"(= {args.sessions * args.answers:,} answers per data set), session shift SD {args.session_sd}, "
          f"headline n_boot {args.n_boot}")
    mc_se = math.sqrt(0.95 * 0.05 / args.replicates)
    print(f"# coverage Monte Carlo SE at 95%: {100 * mc_se:.1f} points")
    print()
    print(f"{'rho':>4}  {'estimator':<36} {'mean est':>9} {'coverage':>9} {'mean CI width':>14}")
    started = time.perf_counter()
    headline_seconds = 0.0
    worst = 1.0
    for rho in rhos:
        results: dict[str, list[Estimate]] = {key: [] for _, key in ESTIMATORS}
        for _ in range(args.replicates):
            data = simulate(rng, args.sessions, args.answers, rho, args.session_sd)
            t0 = time.perf_counter()
            for key, estimate in estimates(*data, args.n_boot, rng).items():
                results[key].append(estimate)
            headline_seconds += time.perf_counter() - t0
        for label, key in ESTIMATORS:
            found = results[key]
            mean = float(np.nanmean([e.estimate for e in found]))
            coverage = float(np.mean([e.covers(rho) for e in found]))
            width = float(np.nanmean([e.ci_high - e.ci_low for e in found]))
            if key == "headline":
                worst = min(worst, coverage)
            print(f"{rho:>4.1f}  {label:<36} {mean:>9.3f} {100 * coverage:>8.1f}% {width:>14.3f}")
        print()
    elapsed = time.perf_counter() - started
    n_sets = args.replicates * len(rhos)
    print(f"# {n_sets} data sets in {elapsed:.1f} s ({1000 * headline_seconds / n_sets:.1f} ms per data set "
          f"for all six estimators)")
    print(f"# headline worst coverage {100 * worst:.1f}% (target >= 93%): {'PASS' if worst >= 0.93 else 'FAIL'}")

    if args.timing_sessions > 0:
        session, log_length, score = simulate(rng, args.timing_sessions, args.answers, 0.3, args.session_sd)
        t0 = time.perf_counter()
        within_session_correlation(session, log_length, score, args.n_boot, rng)
        boot = time.perf_counter() - t0
        t0 = time.perf_counter()
        within_session_correlation(session, log_length, score, 0)
        analytic = time.perf_counter() - t0
        print(f"# one headline call on {args.timing_sessions:,} sessions ({len(score):,} answers): "
              f"{boot:.2f} s with {args.n_boot} resamples, {1000 * analytic:.0f} ms analytic (n_boot=0)")


if __name__ == "__main__":
    main()
