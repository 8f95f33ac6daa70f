"""Leaderboard benchmark: which aggregation method recovers the planted model ranking when
reviewers see different candidates, and do the rank intervals hold the planted ranks?

    python benchmarks/bench_leaderboard.py [--datasets 100] [--sessions 300]

Each data set: 6 models of planted quality 0.9 .. -0.6 (0.3 apart), 4 of them per session;
4 reviewers: a harsh one (-1.5) scoring every answer of the 3 strong models and 15% of the
others, a generous one (+1.5) the other way round, and two fair ones scoring everything;
noise SD 1. Per method: mean Kendall tau between the planted and the recovered ranking, the
share of data sets ranked exactly right, and the share of (model, data set) rank intervals
holding the planted rank. Under a balanced design (every reviewer scores everything) all
methods should agree; the unbalanced arm is where calibration matters.
"""

from __future__ import annotations

import argparse
import io
import json

import numpy as np
from scipy.stats import kendalltau

from council_db.analysis.aggregation import Method, calibrate, consensus, leaderboard
from council_db.analysis.aggregation.quality import quality_standings
from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records
from council_db.simulate import SimulationConfig, write_jsonl

MODELS = ["m/a", "m/b", "m/c", "m/d", "m/e", "m/f"]  # best first
REVIEWERS = ["r/harsh", "r/generous", "r/fair-1", "r/fair-2"]
QUALITY = dict(zip(MODELS, [0.9, 0.6, 0.3, 0.0, -0.3, -0.6]))
UNBALANCED = {"r/harsh": {m: 1.0 if i < 3 else 0.15 for i, m in enumerate(MODELS)},
              "r/generous": {m: 0.15 if i < 3 else 1.0 for i, m in enumerate(MODELS)}}


def one(seed: int, sessions: int, share: dict) -> tuple[dict, int]:
    config = SimulationConfig(sessions=sessions, seed=seed, models=MODELS, reviewers=REVIEWERS,
                              candidates_per_session=4, model_quality=QUALITY,
                              reviewer_offsets={"r/harsh": -1.5, "r/generous": 1.5}, scoring_share=share)
    out = io.StringIO()
    truth = write_jsonl(config, out)
    data = from_records(json.loads(line) for line in out.getvalue().splitlines())
    results = {}
    for method in Method:
        if method is Method.quality:
            standings = quality_standings(data, joint_model.fit(data))
        else:
            calibration = calibrate(method, data, weights={}, offsets={}, include_self=False)
            standings = leaderboard(consensus(data, method, calibration), n_boot=500, seed=seed)
        planted = [MODELS.index(s.model) for s in standings]
        covered = [s.rank_low <= MODELS.index(s.model) + 1 <= s.rank_high for s in standings]
        results[method.value] = (float(kendalltau(planted, range(len(planted))).statistic),
                                 planted == sorted(planted), float(np.mean(covered)))
    return results, truth["records"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=300)
    args = parser.parse_args()
    for arm, share in (("unbalanced", UNBALANCED), ("balanced", {})):
        runs = [one(seed, args.sessions, share) for seed in range(args.datasets)]
        records = np.mean([r for _, r in runs])
        print(f"\n{arm}: {args.datasets} data sets x {args.sessions} sessions (mean {records:,.0f} records each)")
        print(f"{'method':<15}{'mean tau':>10}{'exact order':>13}{'rank CI holds':>15}")
        for method in Method:
            taus, exact, covered = zip(*(r[method.value] for r, _ in runs))
            print(f"{method.value:<15}{np.mean(taus):>10.3f}{np.mean(exact):>12.0%}{np.mean(covered):>15.1%}")


if __name__ == "__main__":
    main()
