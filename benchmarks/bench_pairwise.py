"""Pairwise benchmark (issue 29): how often the Bradley-Terry intervals hold the planted values
over many simulated data sets, how often a coefficient is flagged where nothing was planted, and
the wall time and peak memory of `leaderboard --method bradley-terry --style length` on a store
of pairwise sessions, as a real `council-db` process.

    python benchmarks/bench_pairwise.py [--sets 200] [--sessions 300] [--boot 1000]
    python benchmarks/bench_pairwise.py --timing 100000 [--work DIR]
    python benchmarks/bench_pairwise.py --report-flags 200 [--sessions 300]
    python benchmarks/bench_pairwise.py --report-cost 5000 [--work DIR]

Targets: 95% intervals covering at close to 95%; under no planted slot or length effect each
coefficient's interval excludes 0 in about 5% of data sets; at 100,000 pairwise sessions the
command in <= 3 s and <= 300 MB. The bias report's pairwise-model odds (two judges): at most 5% of
reports flag one where nothing is planted, and the model adds at most a tenth to the report's
time on a 5,000-session window. Every figure is printed with the data it rests on.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_commands import COMMAND, run  # benchmarks/ is on the path when run as a script
from compiled import compile_council_db
from msgspec.structs import replace as replace_struct

from council_db.analysis.loading.score_data import from_records
from council_db.analysis.pairwise.games import games_of
from council_db.analysis.pairwise.ranking import bradley_terry_ranking
from council_db.simulate import SimulationConfig, write_jsonl

STRENGTHS = {"a": 0.6, "b": 0.3, "c": 0.1, "d": -0.1, "e": -0.3, "f": -0.6}
PLANTED = {"slot_logit": 0.4, "length_logit": 1.0, "tie_band": 0.5}
NONE_PLANTED = {"slot_logit": 0.0, "length_logit": 0.0, "tie_band": 0.5}


def config(sessions: int, seed: int, **planted: float) -> SimulationConfig:
    return SimulationConfig(models=list(STRENGTHS), model_quality=STRENGTHS, reviewers=["judge"],
                            candidates_per_session=2, pairwise=True, swap_orders=True, bradley_terry=True,
                            sessions=sessions, seed=seed, **planted)


def ranking(sessions: int, seed: int, boot: int, planted: dict[str, float]):
    out = io.StringIO()
    chosen = config(sessions, seed, **planted)
    write_jsonl(chosen, out)
    data = replace_struct(from_records(json.loads(line) for line in out.getvalue().splitlines()), scale=chosen.scale)
    return bradley_terry_ranking(games_of(data), style=("length",), n_boot=boot, seed=seed)


def coverage(sets: int, sessions: int, boot: int) -> None:
    held = {"strength": [], "slot": [], "length": [], "tie": []}
    flagged = {"slot": [], "length": [], "either": []}
    start = time.perf_counter()
    for seed in range(sets):
        found = ranking(sessions, seed, boot, PLANTED)
        held["strength"] += [s.strength.covers(STRENGTHS[s.model]) for s in found.standings]
        held["slot"].append(found.slot[0].estimate.covers(PLANTED["slot_logit"]))
        held["length"].append(found.style[0].per_unit.covers(PLANTED["length_logit"]))
        held["tie"].append(found.thresholds[0].estimate.covers(PLANTED["tie_band"]))
        null = ranking(sessions, 10_000 + seed, boot, NONE_PLANTED)
        slot, length = not null.slot[0].estimate.covers(0.0), not null.style[0].estimate.covers(0.0)
        flagged["slot"].append(slot)
        flagged["length"].append(length)
        flagged["either"].append(slot or length)
    print(f"{sets} data sets x {sessions} sessions (both orders: {2 * sessions} games each), {len(STRENGTHS)} "
          f"candidates, {boot} resamples; {time.perf_counter() - start:.0f} s")
    for name, hits in held.items():
        print(f"  95% CI holds the planted {name:<8}: {np.mean(hits):.1%} of {len(hits)}")
    for name, hits in flagged.items():
        print(f"  nothing planted, {name:<6} flagged (CI excludes 0): {np.mean(hits):.1%} of {len(hits)}")


def timing(sessions: int, work: Path) -> None:
    jsonl, db = work / f"pairwise-{sessions}.jsonl", work / f"pairwise-{sessions}.db"
    if not db.exists():
        with jsonl.open("w", encoding="utf-8") as out:
            write_jsonl(config(sessions, 1, **PLANTED), out)
        subprocess.run([*COMMAND, "--db", str(db), "import", "-q", str(jsonl)], check=True, stdout=subprocess.DEVNULL)
    compile_council_db()
    records = sum(1 for _ in jsonl.open()) if jsonl.exists() else None
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; store: {sessions:,} "
          f"pairwise sessions (both orders), {records or '?'} records, {db.stat().st_size / 1e6:.0f} MB SQLite")
    for args in (["leaderboard", "--method", "bradley-terry", "--style", "length"],
                 ["leaderboard", "--method", "bradley-terry", "--style", "length", "--baseline", "f"]):
        wall, cpu, peak = run(str(db), args)
        print(f"  {' '.join(args)}: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MB peak")


def report_flags(sets: int, sessions: int) -> None:
    """How many bias reports flag the pairwise model's odds: nothing planted, and a planted
    first-shown advantage of 0.3 logit (two judges, both orders, ties)."""
    from council_db.report.builder import build

    start = time.perf_counter()
    for name, planted in (("nothing planted", {}), ("first shown +0.3 logit", {"slot_logit": 0.3})):
        flagged = {"any pairwise odds": 0, "first shown, pooled": 0, "length": 0, "anything at all": 0}
        for seed in range(sets):
            out = io.StringIO()
            chosen = replace(config(sessions, 20_000 + seed, tie_band=0.5, **planted), reviewers=["judge-1", "judge-2"])
            write_jsonl(chosen, out)
            records = from_records(json.loads(line) for line in out.getvalue().splitlines())
            data = replace_struct(records, scale=chosen.scale)
            subjects = {f.subject for f in build(data, resamples=200, seed=seed).flags}
            model = {s for s in subjects if s.endswith("(pairwise model)")}
            flagged["any pairwise odds"] += bool(model)
            flagged["first shown, pooled"] += "pooled over judges (pairwise model)" in model
            flagged["length"] += "length (pairwise model)" in model
            flagged["anything at all"] += bool(subjects)
        print(f"{name}: {sets} reports x {sessions} sessions (two judges, both orders: {4 * sessions} games each)")
        for what, count in flagged.items():
            print(f"  flagged {what:<20}: {count / sets:.1%} ({count} of {sets})")
    print(f"  {time.perf_counter() - start:.0f} s")


def report_cost(sessions: int, work: Path) -> None:
    """The pairwise model's share of the bias report's CPU time on a store of pairwise sessions,
    in-process (the report's build with it, and the model alone, each the median of 5), and the
    whole report as a council-db process."""
    from council_db.analysis.loading.window import Window, load
    from council_db.analysis.pairwise.games import without_self_judgments
    from council_db.analysis.pairwise.slot_odds import slot_odds
    from council_db.report.builder import build
    from council_db.store.database import open_database

    jsonl, db = work / f"report-{sessions}.jsonl", work / f"report-{sessions}.db"
    if not db.exists():
        with jsonl.open("w", encoding="utf-8") as out:
            write_jsonl(config(sessions, 1, **PLANTED), out)
        subprocess.run([*COMMAND, "--db", str(db), "import", "-q", str(jsonl)], check=True, stdout=subprocess.DEVNULL)
    compile_council_db()
    data = load(open_database(f"sqlite:///{db}"), Window())
    print(f"store: {sessions:,} pairwise sessions (one judge, both orders), {data.n_records:,} records; the report "
          f"reads {data.n_sessions:,} of them")

    def cpu(work) -> float:
        times = []
        for _ in range(5):
            start = time.process_time()
            work()
            times.append(time.process_time() - start)
        return float(np.median(times))

    report = cpu(lambda: build(data))
    model = cpu(lambda: slot_odds(without_self_judgments(games_of(data))))
    print(f"  report build {report:.3f} s CPU, the pairwise model in it {model:.3f} s: "
          f"+{model / (report - model):.1%} over the report without it")
    wall, used, peak = run(str(db), ["bias-report", "--format", "json"])
    print(f"  council-db bias-report --format json: {wall:.2f} s wall, {used:.2f} s CPU, {peak:.0f} MB peak "
          f"(the model: {model / used:.1%} of its CPU)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--timing", type=int, metavar="SESSIONS", help="time the command on a store this large")
    parser.add_argument("--work", type=Path, help="where --timing builds its store (default: a temporary folder)")
    parser.add_argument("--report-flags", type=int, metavar="SETS", help="bias reports' pairwise-model flags")
    parser.add_argument("--report-cost", type=int, metavar="SESSIONS", help="the model's share of the report's time")
    options = parser.parse_args()
    if options.report_flags:
        report_flags(options.report_flags, options.sessions)
    elif options.report_cost:
        with tempfile.TemporaryDirectory() as scratch:
            report_cost(options.report_cost, options.work or Path(scratch))
    elif options.timing:
        with tempfile.TemporaryDirectory() as scratch:
            timing(options.timing, options.work or Path(scratch))
    else:
        coverage(options.sets, options.sessions, options.boot)


if __name__ == "__main__":
    sys.exit(main())
