"""Why the pooled self-preference's intervals covered less than 95% in bench_bayes's design
(issue 33): the coverage of the planted self-preference and severities, Bayes and joint, on
fresh histories of that design and of the same design without the judges' own verbosity spread.

    python benchmarks/bench_bayes_self.py [--sets 150] [--first-seed 1000] [--write-docs]

bench_bayes's judges each have their own length effect (SD 0.1 points per SD of log length)
and its candidates their own mean length. A judge's own length effect then moves its scores
of its own answers as a self-preference would: the confound, per history, is the mean over
judges of (its length effect - the panel's) x (its own model's mean z - the other models').
With one length effect for the panel, the joint model's self-preference carried the confound;
the hierarchical model has one per judge (partially pooled), and so, since issue 33's last
gap, has the joint model (one per reviewer, unpooled). Per design, method and size it prints
the coverage of the planted 0.3 (95% Wilson interval of that share), the SD of z = (estimate -
0.3) / SE (1 when the interval is honest), and at the last size the slope of the error on the
confound (1: the error is the confound; 0: free of it); and the severities' coverage (four a
history, vs the average judge) and z SD.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from bench_bayes import MODELS, SIZES, history, planted_values

from council_db.analysis.hierarchical import hierarchical_model
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import keep_sessions

DESIGNS = {"bench_bayes's": {}, "without own verbosity spread": {"reviewer_verbosity_spread": 0.0}}
Z95 = 1.959964


def confound(truth: dict) -> float:
    """The self-preference a common length effect leaves in the joint model's estimate."""
    z = np.array([(truth["model_log_length_means"][m] - truth["log_length_mean"]) / truth["log_length_sd"]
                  for m in MODELS])
    own = np.array([truth["reviewer_verbosity"][m] for m in MODELS])
    own = own - own.mean()
    return float(np.mean([own[r] * (z[r] - np.delete(z, r).mean()) for r in range(len(MODELS))]))


def errors(seed: int, design: dict) -> tuple[np.ndarray, float]:
    """Per size and figure (the self-preference, then each judge's severity): (Bayes error,
    Bayes CI half width, joint error, joint CI half width); the history's confound."""
    data, truth = history(seed, False, **design)
    planted = np.r_[truth["self_preference"], planted_values(truth)["severity"]]
    rows = []
    for size in SIZES:
        prefix = keep_sessions(data, np.arange(data.n_sessions) < size)
        bayes, joint = hierarchical_model.fit(prefix), joint_model.fit(prefix)
        b = [bayes.self_preference] + [bayes.severity[r] for r in MODELS]
        j = [joint.self_preference] + [joint.severity[r] for r in MODELS]
        rows.append([[be.mean - value, (be.ci_high - be.ci_low) / 2, je.estimate - value, (je.ci_high - je.ci_low) / 2]
                     for be, je, value in zip(b, j, planted)])
    return np.array(rows), confound(truth)


def wilson(hits: int, n: int) -> str:
    share = hits / n
    centre = (share + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    return f"{share:.1%} [{centre - half:.1%}, {centre + half:.1%}]"


def rows_of(name: str, results: list[tuple[np.ndarray, float]]) -> list[list[str]]:
    """Coverage (interval half widths as the methods state them) and z's SD per size; the
    error's slope on the confound at the last size."""
    e = np.array([r for r, _ in results])  # sets x sizes x figures x 4
    c = np.array([c for _, c in results])
    out = []
    for figure, at in (("self-preference", slice(0, 1)), ("severity", slice(1, None))):
        for method, (err, half) in (("Bayes", (0, 1)), ("joint", (2, 3))):
            error, width = e[:, :, at, err], e[:, :, at, half]
            covered = np.abs(error) <= width
            z = error / (width / Z95)
            n = covered.shape[0] * covered.shape[2]
            slope = f"{np.polyfit(c, error[:, -1, 0], 1)[0]:+.2f}" if c.std() > 0 and figure != "severity" \
                else "n/a" if figure == "severity" else "n/a (no confound)"
            out.append([f"{name}, {figure}, {method}: coverage; z SD"] + [
                f"{wilson(int(covered[:, i].sum()), n)}; {z[:, i].std():.2f}" for i in range(len(SIZES))]
                + [slope])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=150, help="histories of each design (default 150)")
    parser.add_argument("--first-seed", type=int, default=1000,
                        help="seeds from here (bench_bayes's planted histories are 0 to --sets - 1)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = []
    for name, design in DESIGNS.items():
        results = [errors(seed, design) for seed in range(args.first_seed, args.first_seed + args.sets)]
        rows += rows_of(name, results)
    header = ["design, method"] + [f"{s} sessions" for s in SIZES] + [f"error on confound, {SIZES[-1]}"]
    measured = (f"{args.sets} histories of each design from seed {args.first_seed}, read at "
                f"{', '.join(map(str, SIZES))} of their 50 sessions (16 records a session); load "
                f"{os.getloadavg()[0]:.1f}, {time.perf_counter() - start:.0f} s")
    print(f"pooled self-preference coverage - {measured}")
    for row in [header, *rows]:
        print(" | ".join(row))
    if args.write_docs:
        from doc_tables import machine, markdown_table, write_table

        write_table("bayes-self", markdown_table(header, rows, right=range(1, len(header))), f"{machine()}; {measured}")


if __name__ == "__main__":
    main()
