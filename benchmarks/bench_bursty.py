"""False alarms on the designs of real judge runs (issue 27): the FULL report
(`council_db.report.builder.build`) on null data sets shaped as judge runs are, and the planted
drift still found on them.

    python benchmarks/bench_bursty.py [--datasets 100] [--detection 40] [--workers 2] [--designs a,b,...]

Null designs, nothing planted (seeds 0..N-1):

* batches: 240 sessions over 60 days stamped in batches of 30 (8 instants);
* straggler: 14 sessions within 8 minutes and one two days later (tests/data/fastchat-pair's
  shape), 4 x 4 councils on the 1-10 scale;
* batches-straggler: 240 sessions in batches of 20 over 30 days, the last one 30 days later;
* late-reviewer: 240 sessions over 60 days, one reviewer joining for the last 20%;
* pairwise: 200 sessions, three judges (not candidates) giving pairwise verdicts (1/0.5/0) on
  two of four models in both orders, orders shuffled per judge;
* pairwise-peers: the same with the four models judging each other (self-reviews);
* pairwise-straggler: 15 pairwise sessions, three judges, the last two days after the rest.

Printed per design: the share of reports with a trend or change-point flag (target <= 5%),
with any flag at all (the pairwise designs: the target of item 4), and per kind.

Detection (seeds 10,000+): a reviewer drifting +1 point over the span, planted on the batches
and late-reviewer designs (there: a reviewer present all along): how often its trend is
flagged, and how often another subject's is.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl

JUDGES = ["judge-a", "judge-b", "judge-c"]
PAIRWISE = dict(candidates_per_session=2, swap_orders=True, pairwise=True, per_reviewer_shuffle=True)
DESIGNS = {
    "batches": dict(sessions=240, days=60, batch_size=30),
    "straggler": dict(sessions=15, days=8 / 1440, straggler_days=2.0),
    "batches-straggler": dict(sessions=240, days=30, batch_size=20, straggler_days=30.0),
    "late-reviewer": dict(sessions=240, days=60, late_reviewers={"openai/gpt-4o": 0.8}),
    "pairwise": dict(sessions=200, reviewers=JUDGES, **PAIRWISE),
    "pairwise-peers": dict(sessions=200, **PAIRWISE),
    "pairwise-straggler": dict(sessions=15, days=8 / 1440, straggler_days=2.0, reviewers=JUDGES, **PAIRWISE),
}
# design -> the reviewer drifting +1 point over the span (in late-reviewer, one there all along)
DRIFTERS = {"batches": "openai/gpt-4o", "late-reviewer": "google/gemini-1.5-pro"}
TIME_KINDS = {"trend", "change_point"}
RESAMPLES = 50  # bootstrap CIs of the length and agreement metrics; no part of any test here
TARGET = 0.05


def run(design: str, seed: int, planted: bool) -> dict:
    config = {**DESIGNS[design], **({"drift": {DRIFTERS[design]: 1.0}} if planted else {})}
    out = io.StringIO()
    write_jsonl(SimulationConfig(seed=seed, **config), out)
    data = from_records(json.loads(line) for line in out.getvalue().splitlines())
    report = build(data, resamples=RESAMPLES)
    return {"kinds": [f.kind for f in report.flags],
            "time_subjects": sorted({f.subject for f in report.flags if f.kind in TIME_KINDS}),
            "records": data.n_records, "sessions": data.n_sessions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--detection", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--designs", default=",".join(DESIGNS))
    args = parser.parse_args()
    designs = args.designs.split(",")
    jobs = [(d, seed, False) for d in designs for seed in range(args.datasets)]
    jobs += [(d, 10_000 + seed, True) for d in designs if d in DRIFTERS for seed in range(args.detection)]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        done = list(pool.map(run, *zip(*jobs)))
    print(f"bench_bursty: {args.datasets} null data sets per design, {args.detection} with a planted drift; "
          f"{time.perf_counter() - started:.0f} s on {args.workers} workers, Python {platform.python_version()}")
    for design in designs:
        null = [r for (d, _, planted), r in zip(jobs, done) if d == design and not planted]
        n = len(null)
        timed = sum(bool(TIME_KINDS & set(r["kinds"])) for r in null) / n
        flagged = sum(bool(r["kinds"]) for r in null) / n
        kinds = ", ".join(f"{k} {c / n:.1%}" for k, c in Counter(k for r in null for k in set(r["kinds"])).items())
        error = (timed * (1 - timed) / n) ** 0.5
        print(f"{design} ({null[0]['sessions']} sessions, {null[0]['records']:,} records): null reports with a "
              f"trend or change flag {timed:.1%} (target <= {TARGET:.0%}; MC SE {error:.1%}), with any flag "
              f"{flagged:.1%}; per kind {kinds or 'none'}")
        planted = [r for (d, _, p), r in zip(jobs, done) if d == design and p]
        if planted:
            drifter = f"reviewer {DRIFTERS[design]}"
            found = sum(drifter in r["time_subjects"] for r in planted) / len(planted)
            others = sum(bool(set(r["time_subjects"]) - {drifter}) for r in planted) / len(planted)
            print(f"  planted drift of {drifter} (+1 point over the span): its trend flagged in {found:.1%} of "
                  f"{len(planted)} reports; another subject with a time flag in {others:.1%}")


if __name__ == "__main__":
    main()
