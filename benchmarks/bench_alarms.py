"""False alarms and detection of the time and per-session checks in the FULL report
(`council_db.report.builder.build`): trends, change points, anomalous sessions (and, reported beside
them, affinity and anchoring).

    python benchmarks/bench_alarms.py [--datasets 200] [--static 100] [--detection 50]
                                      [--sessions 300] [--workers 2] [--arms plain,real-like]

Stationary data sets (seeds 0..N-1, --datasets): nothing planted, nothing changes over time, no
broken session. Printed: the share of reports raising ANY trend, change-point or anomaly flag
(target <= 5%: they are tests in the report's one Benjamini-Hochberg family at q <= 0.05, which
under the complete null is Simes' test), per-kind rates, the share with any flag at all.

Stationary data with static biases (seeds 5,000+, --static): harsh and generous reviewers, a
position effect, self-preference, verbosity, better models writing longer; nothing changes
over time. Benjamini-Hochberg controls the false discovery RATE: with about 10 true flags in
the family, a null test is allowed a larger p-value, so some time flag appears in more than 5%
of these reports; printed for what it is.

Detection data sets (seeds 10,000+, --detection): one reviewer drifting by +1 point over the 90
days and 1% broken sessions (the issue's "done when" data). Printed: how often the drifting
reviewer is flagged (and how often as a dated change point: its drift is linear, it has no step), its
mean estimated slope against the planted one, how often another
subject gets a trend or change flag, and the recall and precision of the anomalous sessions.

Each of the three is run plain and real-like (the same seeds with bench_report's REAL_LIKE:
sessions stamped in batches of 30, whole scores 1..10, 15% constant sessions, as real judge
data is; issue 15). A constant session is not a planted anomaly: flagging one counts against
precision, and on stationary data as a false alarm.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from bench_report import ARMS, PLANTED, REAL_LIKE  # benchmarks/ is on the path when run as a script

from council_db.analysis.loading.score_data import from_records
from council_db.report.builder import build
from council_db.simulate import SimulationConfig, write_jsonl

DRIFTER, DRIFT, DAYS = "google/gemini-1.5-pro", 1.0, 90.0
TIME_KINDS = ("trend", "change_point", "anomaly")
RESAMPLES = 200  # bootstrap CIs of the length and agreement metrics; no part of the time checks
TARGET = 0.05


def run(seed: int, sessions: int, arm: str, variant: str) -> dict:
    config = dict(sessions=sessions, seed=seed, days=DAYS, **(REAL_LIKE if variant == "real-like" else {}))
    if arm == "static":
        config.update(PLANTED)  # the report benchmark's static effects
    if arm == "detection":
        config.update(drift={DRIFTER: DRIFT}, anomaly_rate=0.01)
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(**config), out)
    report = build(from_records(json.loads(line) for line in out.getvalue().splitlines()), resamples=RESAMPLES)
    slope = next((t.slope_per_30d.estimate for t in report.trends
                  if t.kind == "reviewer" and t.subject == DRIFTER), None)
    return {
        "kinds": sorted({f.kind for f in report.flags}),
        "time_subjects": sorted({f.subject for f in report.flags if f.kind in ("trend", "change_point")}),
        "changed_subjects": sorted({f.subject for f in report.flags if f.kind == "change_point"}),
        "flagged_sessions": [a.session_id for a in report.anomalies],
        "planted_sessions": sorted(truth["anomalous_sessions"]),
        "slope": slope,
        "constant_sessions": truth["constant_sessions"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--static", type=int, default=100)
    parser.add_argument("--detection", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated: plain, real-like")
    args = parser.parse_args()
    variants = [v for v in ARMS if v in args.arms.split(",")]
    started = time.perf_counter()
    arms = {"stationary": (0, args.datasets), "static": (5_000, args.static), "detection": (10_000, args.detection)}
    jobs = [(seed, arm if arm != "stationary" else "null", variant)
            for variant in variants for arm, (first, n) in arms.items() for seed in range(first, first + n)]
    with ProcessPoolExecutor(args.workers) as pool:
        done = list(pool.map(run, [j[0] for j in jobs], [args.sessions] * len(jobs), [j[1] for j in jobs],
                             [j[2] for j in jobs]))
    elapsed = time.perf_counter() - started
    print(f"bench_alarms: {args.datasets} stationary + {args.static} static-bias + {args.detection} detection data "
          f"sets x {args.sessions} sessions x 16 records ({args.sessions * 16:,} records each) per variant "
          f"({', '.join(variants)}); {elapsed:.0f} s on {args.workers} workers, Python {platform.python_version()}")
    print(f"real-like: {', '.join(f'{k}={v}' for k, v in REAL_LIKE.items())}")
    for variant in variants:
        results = {arm: [r for (_, a, v), r in zip(jobs, done) if v == variant and a == (arm if arm != "stationary"
                                                                                      else "null")] for arm in arms}
        print(f"--- {variant}")
        for arm in ("stationary", "static"):
            if results[arm]:
                alarms(arm, results[arm])
        if results["detection"]:
            detection(results["detection"])


def alarms(arm: str, reports: list[dict]) -> None:
    n = len(reports)
    share = sum(any(k in TIME_KINDS for k in r["kinds"]) for r in reports) / n
    per_kind = Counter(k for r in reports for k in r["kinds"])
    target = f" (target <= {TARGET:.0%})" if arm == "stationary" else ""
    print(f"{arm}: reports with any trend/change/anomaly flag {share:.1%}{target}; Monte-Carlo SE "
          f"{(share * (1 - share) / n) ** 0.5:.1%}")
    print("  per kind (share of reports): " + ", ".join(f"{k} {per_kind[k] / n:.1%}" for k in
                                                       (*TIME_KINDS, "affinity", "anchoring")))
    static = {"reviewer_severity", "position", "self_preference", "verbosity"}
    extra = sum(bool(set(r["kinds"]) - (static if arm == "static" else set())) for r in reports) / n
    print(f"  any flag {'beyond the planted static effects' if arm == 'static' else 'at all'}: {extra:.1%}")
    constant_flagged = sum(len(set(r["flagged_sessions"]) & set(r["constant_sessions"])) for r in reports)
    constant = sum(len(r["constant_sessions"]) for r in reports)
    if constant:
        print(f"  constant sessions flagged as anomalous: {constant_flagged}/{constant}; reports with one: "
              f"{sum(bool(set(r['flagged_sessions']) & set(r['constant_sessions'])) for r in reports) / n:.1%}")


def detection(reports: list[dict]) -> None:
    n = len(reports)
    found = sum(f"reviewer {DRIFTER}" in r["time_subjects"] for r in reports) / n
    stepped = sum(f"reviewer {DRIFTER}" in r["changed_subjects"] for r in reports) / n
    others = sum(bool(set(r["time_subjects"]) - {f"reviewer {DRIFTER}"}) for r in reports) / n
    slopes = [r["slope"] for r in reports if r["slope"] is not None]
    hits = sum(len(set(r["flagged_sessions"]) & set(r["planted_sessions"])) for r in reports)
    flagged = sum(len(r["flagged_sessions"]) for r in reports)
    truly = sum(len(r["planted_sessions"]) for r in reports)
    print(f"detection: drifting reviewer's trend or change flagged in {found:.1%} of reports; mean slope "
          f"{sum(slopes) / len(slopes):+.3f} points per 30 days (planted {DRIFT * 30 / DAYS:+.3f}); another subject "
          f"with a trend/change flag in {others:.1%}")
    print(f"  its drift is linear: a change-point flag for it (a step it does not have) in {stepped:.1%} of reports")
    print(f"  anomalous sessions: recall {hits / max(truly, 1):.1%} ({hits}/{truly}), precision "
          f"{hits / max(flagged, 1):.1%} ({hits}/{flagged})")


if __name__ == "__main__":
    main()
