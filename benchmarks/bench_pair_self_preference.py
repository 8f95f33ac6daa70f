"""Self-preference on pairs (issue 29): the Mantel-Haenszel log odds that a judge picks its own
answer, against third judges on the same pair in the same order
(``council_db.analysis.self_preference.on_pairs``), on simulated peer review: four models
giving pairwise verdicts (1 / 0.5 / 0) on each other's answers in both orders, two candidates
per session, so every pair has two judges with a stake and two third judges.

    python benchmarks/bench_pair_self_preference.py [--datasets 200] [--reports 100] [--sessions 120] [--planted 1.0]

Printed:

* the truth: the pooled log odds ratio on one data set of 20,000 sessions with the planted
  self-preference (the simulator plants it in score points on its latent scale, so its
  log-odds size is measured, not derived);
* coverage: the share of data sets (seeds 1,000+) whose pooled 95% CI holds that truth, and of
  judge figures holding it (every judge's is the same truth: the models are alike);
* calm: on data sets with nothing planted (seeds 0..N-1), the share with any judge flagged
  (Benjamini-Hochberg over the four judges at 0.05) and the share of judge p-values below 0.05;
  then the full report (``build``) on the first --reports of them: the share with a
  self-preference flag and with any flag at all (the report's one family);
* grouping: the pooled figure and the joint model's points on one data set grouped three ways
  (one session per game, per judge, per pair with every judge in it): the first is the same
  every way, the second is not.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import time

import numpy as np

from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import from_records
from council_db.analysis.self_preference.on_pairs import self_preference_on_pairs
from council_db.analysis.stats import benjamini_hochberg
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl

RESAMPLES = 50  # bootstrap CIs of the length and agreement figures: no part of the flags studied here
PEERS = dict(candidates_per_session=2, swap_orders=True, pairwise=True, per_reviewer_shuffle=True)


def records(seed: int, sessions: int, planted: float) -> list[dict]:
    out = io.StringIO()
    write_jsonl(SimulationConfig(sessions=sessions, seed=seed, self_preference=planted, **PEERS), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def regrouped(lines: list[dict], by: str) -> list[dict]:
    """The same judgments in other sessions: one per game (a judge's call on one order), one per
    judge (its two orders), or as simulated (every judge's calls on the pair)."""
    if by == "pair":
        return lines
    first = {}
    for line in lines:
        if line["position"] == 0:
            first.setdefault((line["session_id"], line["reviewer_id"]), []).append(line["model_id"])
    out = []
    for line in lines:
        key = f"{line['session_id']}/{line['reviewer_id']}"
        if by == "game":
            shown_first = first[(line["session_id"], line["reviewer_id"])]
            game = line["model_id"] if line["position"] == 0 else next(m for m in shown_first if m != line["model_id"])
            key += f"/{game}"
        out.append({**line, "session_id": key})
    return out


def pooled(figures) -> float:
    return next(f.estimate for f in figures if f.judge is None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--reports", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=120)
    parser.add_argument("--planted", type=float, default=1.0)
    args = parser.parse_args()
    started = time.perf_counter()
    truth = pooled(self_preference_on_pairs(from_records(records(99, 20_000, args.planted)))).estimate
    pooled_hits, judge_hits, judge_total = 0, 0, 0
    for seed in range(1_000, 1_000 + args.datasets):
        found = self_preference_on_pairs(from_records(records(seed, args.sessions, args.planted)))
        pooled_hits += pooled(found).covers(truth)
        judges = [f.estimate for f in found if f.judge is not None]
        judge_hits += sum(e.covers(truth) for e in judges)
        judge_total += len(judges)
    flagged, small, tests = 0, 0, 0
    for seed in range(args.datasets):
        found = self_preference_on_pairs(from_records(records(seed, args.sessions, 0.0)))
        p = np.array([f.estimate.p_value for f in found if f.judge is not None])
        flagged += bool((benjamini_hochberg(p) <= 0.05).any())
        small += int((p < 0.05).sum())
        tests += len(p)
    kinds = [{f.kind for f in build(from_records(records(seed, args.sessions, 0.0)), resamples=RESAMPLES).flags}
             for seed in range(args.reports)]
    lines = records(5, args.sessions, args.planted)
    grouping = {}
    for by in ("game", "judge", "pair"):
        data = from_records(regrouped(lines, by))
        grouping[by] = (pooled(self_preference_on_pairs(data)).estimate, joint_model.fit(data).self_preference.estimate)
    print(f"{args.datasets} data sets of {args.sessions} sessions per arm (4 models judging each other in pairs, "
          f"both orders), planted self-preference {args.planted} points on the latent scale; "
          f"{platform.machine()}, {time.perf_counter() - started:.0f} s")
    print(f"truth (20,000 sessions): pooled log odds ratio {truth:+.3f}")
    print(f"coverage of the 95% CI: pooled {pooled_hits / args.datasets:.3f}, per judge "
          f"{judge_hits / judge_total:.3f} ({judge_total} judge figures)")
    print(f"nothing planted: {flagged / args.datasets:.3f} of data sets flag a judge (BH 0.05 over 4 judges); "
          f"{small / tests:.3f} of {tests} judge p-values < 0.05")
    print(f"nothing planted, the full report: {sum('self_preference' in k for k in kinds) / args.reports:.3f} of "
          f"{args.reports} reports flag self-preference, {sum(bool(k) for k in kinds) / args.reports:.3f} flag anything")
    for by, (odds, points) in grouping.items():
        print(f"grouped one session per {by:<5}: on pairs {odds:+.6f} log odds; joint model {points:+.3f} points")


if __name__ == "__main__":
    main()
