"""The people-calibrated leaderboard (`leaderboard --method ppi`, issue 28): do its intervals hold
the people's candidate means, where the judges' own do not, and how much narrower are they than
the rated sessions' alone?

    python benchmarks/bench_ppi.py [--datasets 200] [--sessions 1000] [--reference-share 0.1]
                                   [--designs scores,pairwise] [--truth-sessions 40000] [--first-seed 0]

Design (each data set, seeds F..F+N-1): four models of planted quality 0.6, 0.2, -0.2, -0.6; one
judge a point too generous (offset +1) that rewards length (0.5 points per SD of log length: a
bias per candidate, the models' answer lengths differing) with noise SD 0.5; three humans, two
rating a share ``--reference-share`` of the sessions, unbiased, noise SD 1; every answer its own
quality (SD 1) that all of them see. ``scores``: four answers a session, quality the mean score;
``pairwise``: two answers a session, quality the win rate. The truth: each model's mean human
score (or win rate) over ``--truth-sessions`` sessions all rated (by two humans), same plan (Monte-Carlo
SE about 0.005). Per estimate: the share of 95% CIs holding the truth (the one-sided binomial p
says how surprising it would be from a true 95% interval), and the mean width of PPI's CI over
the rated sessions' alone.
"""

from __future__ import annotations

import argparse
import io
import math
import platform
import time
from typing import Any

import msgspec
import numpy as np

from council_db.analysis.aggregation.calibrated_by_people import people_calibrated
from council_db.analysis.loading.score_data import ScoreData, from_records
from council_db.simulate import SimulationConfig, write_jsonl

QUALITY = {"a": 0.6, "b": 0.2, "c": -0.2, "d": -0.6}
DESIGN: dict[str, Any] = dict(
    models=list(QUALITY), model_quality=QUALITY, reviewers=["judge"], humans=["h1", "h2", "h3"],
    humans_per_session=2, base_score=5.5, answer_sd=1.0, noise_sd=1.0,
    reviewer_offsets={"judge": 1.0}, reviewer_verbosity={"judge": 0.5}, reviewer_noise_sd={"judge": 0.5})
ANSWERS = {"scores": 4, "pairwise": 2}


def score_data(**config: Any) -> tuple[ScoreData, dict]:
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(**config), out)
    return from_records(msgspec.json.decode(f"[{','.join(out.getvalue().splitlines())}]")), truth


def binomial_tail(hits: int, n: int, p: float = 0.95) -> float:
    """P(X <= hits) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(hits + 1))


def people_means(design: str, sessions: int, seed: int) -> dict[str, float]:
    """Each model's quality as the humans see it: the rated sessions' mean of one huge data set
    with every session rated (by two of the three humans, as in the study)."""
    data, truth = score_data(**DESIGN, candidates_per_session=ANSWERS[design], reference_share=1.0,
                             sessions=sessions, seed=seed)
    ranking = people_calibrated(data, truth["reviewer_kinds"])
    return {c.standing.model: c.labelled_only.estimate for c in ranking.candidates}


def study(design: str, datasets: int, sessions: int, share: float, first_seed: int, truth: dict[str, float]) -> None:
    hits = {"ppi": 0, "judges_only": 0, "labelled_only": 0}
    widths, lambdas, labelled, intervals, seconds, missing = [], [], [], 0, 0.0, 0
    records = 0
    for seed in range(first_seed, first_seed + datasets):
        data, planted = score_data(**DESIGN, candidates_per_session=ANSWERS[design], reference_share=share,
                                   sessions=sessions, seed=seed)
        records += data.n_records
        start = time.perf_counter()
        ranking = people_calibrated(data, planted["reviewer_kinds"])
        seconds += time.perf_counter() - start
        labelled.append(ranking.labelled_sessions)
        for found in ranking.candidates:
            value = truth[found.standing.model]
            intervals += 1
            hits["ppi"] += found.standing.score.covers(value)
            hits["judges_only"] += found.judges_only.covers(value)
            hits["labelled_only"] += found.labelled_only.covers(value)
            alone = found.labelled_only.ci_high - found.labelled_only.ci_low
            if found.standing.score.has_interval and alone > 0:
                widths.append((found.standing.score.ci_high - found.standing.score.ci_low) / alone)
            missing += not found.standing.score.has_interval
            lambdas.append(found.lam)
    print(f"\n{design}: {datasets} data sets x {sessions} sessions ({records / datasets:,.0f} records each), "
          f"{share:.0%} rated (mean {np.mean(labelled):.0f} labelled sessions); {intervals} intervals, "
          f"{missing} of them without an interval (no variation)")
    for name, count in hits.items():
        print(f"  {name:>13}: {count / intervals:6.1%} of 95% CIs hold the people's mean "
              f"(binomial p of so few from 95%: {binomial_tail(count, intervals):.2g})")
    print(f"  PPI's CI width / the rated sessions' alone: mean {np.mean(widths):.3f} (range {min(widths):.3f}-"
          f"{max(widths):.3f}); lambda mean {np.mean(lambdas):.2f}; people_calibrated "
          f"{1000 * seconds / datasets:.1f} ms a data set")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--reference-share", type=float, default=0.1)
    parser.add_argument("--designs", default="scores,pairwise")
    parser.add_argument("--truth-sessions", type=int, default=40_000)
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    print(f"bench_ppi on {platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    for design in args.designs.split(","):
        truth = people_means(design, args.truth_sessions, seed=10**6)
        print(f"\n{design}: the people's means over {args.truth_sessions:,} sessions, every one rated: "
              + ", ".join(f"{model} {value:.3f}" for model, value in sorted(truth.items())))
        study(design, args.datasets, args.sessions, args.reference_share, args.first_seed, truth)


if __name__ == "__main__":
    main()
