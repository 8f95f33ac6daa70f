"""The stratified sample against the hash sample alone and every session, on simulated windows:
a rare reviewer's severity (planted effect found, CI coverage and width), a common reviewer's
CI coverage, and null flags (BH q <= 0.05 over the reviewers' severities, nothing planted).

    python benchmarks/bench_strata.py [--windows 40] [--db FILE] [--write-docs]

With --db (a SQLite store, only read), it also times on it, one after the other, the hash
sample's choice alone and the stratification's check and additions, and the worst case: one
round over every hash for a subject the window does not hold.

Each window is WINDOW sessions of one simulator run (four judges, four candidates; the first
judge kept in RARE of the window's sessions, the rest of its records dropped); its sample is
the sessions whose key's hash is below SAMPLE/WINDOW of 2^32 plus, per reviewer and candidate,
its lowest-hash sessions up to FLOOR (the definition analysis/loading/strata.py implements in
SQL, here over arrays). The joint model (the report's severities) is fitted on each arm.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time

import numpy as np
from doc_tables import machine, markdown_table, write_table

from council_db.analysis.joint import joint_model
from council_db.analysis.loading.score_data import ScoreData, from_records, keep_records, keep_sessions
from council_db.analysis.stats.inference import benjamini_hochberg
from council_db.simulate import SimulationConfig
from council_db.simulate import write_jsonl as simulate_jsonl
from council_db.store.key_hash import BITS, key_hash

WINDOW, SAMPLE, FLOOR, RARE = 1_000, 250, 20, 20
PLANTED = 0.5  # the rare judge's planted offset, score points (small: few scores reach the scale's ends)
ARMS = ("every session", "hash sample", "stratified")


def stratified(data: ScoreData, threshold: int, floor: int) -> tuple[np.ndarray, np.ndarray]:
    """Per session: in the hash sample; in the stratified sample (the hash sample plus, per
    subject, its lowest-hash sessions up to ``floor``)."""
    hashes = np.array([key_hash(k) for k in data.session_keys], dtype=np.int64)
    base = hashes < threshold
    chosen = base.copy()
    for codes in (data.reviewer, data.model):
        for subject in np.unique(codes):
            sessions = np.unique(data.session[codes == subject])
            chosen[sessions[np.argsort(hashes[sessions], kind="stable")[:floor]]] = True
    return base, chosen


def windows(offset: float, count: int, seed: int) -> list[ScoreData]:
    """``count`` windows of one simulator run, the first judge in RARE sessions of each."""
    out = io.StringIO()
    config = SimulationConfig(sessions=WINDOW * count, seed=seed, base_score=5.5)
    judges = sorted(config.models)
    config.reviewer_offsets = {judges[0]: offset}
    simulate_jsonl(config, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    data = from_records(records)
    rng = np.random.default_rng(seed)
    found = []
    for w in range(count):
        part = keep_sessions(data, (np.arange(data.n_sessions) // WINDOW) == w)
        rare = np.zeros(part.n_sessions, dtype=bool)
        rare[rng.choice(part.n_sessions, RARE, replace=False)] = True
        judge = part.reviewers.index(judges[0])
        found.append(keep_records(part, (part.reviewer != judge) | rare[part.session]))
    return found


def arms(data: ScoreData) -> dict[str, ScoreData]:
    base, chosen = stratified(data, int(SAMPLE / WINDOW * 2 ** BITS), FLOOR)
    return {"every session": data, "hash sample": keep_sessions(data, base),
            "stratified": keep_sessions(data, chosen)}


def _figure(fit, name: str) -> tuple[float, float, float]:
    """A severity's estimate and CI; NaN where the arm has none (a hash sample without the judge)."""
    effect = fit.severity.get(name)
    return (np.nan,) * 3 if effect is None else (effect.estimate, effect.ci_low, effect.ci_high)


def run(offset: float, count: int, seed: int) -> dict[str, list[dict]]:
    """Per arm and window: the rare and a common judge's severity, and whether any severity is flagged."""
    results: dict[str, list[dict]] = {arm: [] for arm in ARMS}
    for data in windows(offset, count, seed):
        rare_name, common_name = sorted(data.reviewers)[0], sorted(data.reviewers)[1]
        for arm, part in arms(data).items():
            fit = joint_model.fit(part)
            p = [e.p_value for e in fit.severity.values()]
            rare, common = _figure(fit, rare_name), _figure(fit, common_name)
            sessions = 0 if rare_name not in part.reviewers else \
                len(np.unique(part.session[part.reviewer == part.reviewers.index(rare_name)]))
            results[arm].append(dict(rare=rare, common=common[1:], sessions=sessions,
                                     flagged=bool(np.nanmin(benjamini_hochberg(p)) <= 0.05)))
    return results


def table(planted: dict[str, list[dict]], null: dict[str, list[dict]], reviewers: int = 4) -> str:
    truth_rare, truth_common = PLANTED * (1 - 1 / reviewers), -PLANTED / reviewers
    rows = []
    for arm in ARMS:
        p, n = planted[arm], null[arm]
        covers = np.mean([lo <= truth_rare <= hi for _, lo, hi in (r["rare"] for r in p)])
        common = np.mean([lo <= truth_common <= hi for lo, hi in (r["common"] for r in p)])
        width = np.nanmean([hi - lo for _, lo, hi in (r["rare"] for r in p)])
        found = np.mean([r["rare"][1] > 0 for r in p])
        rows.append([arm, f"{np.mean([r['sessions'] for r in p]):.1f}", f"{np.nanmean([r['rare'][0] for r in p]):+.3f}",
                     f"{width:.2f}", f"{covers:.0%}", f"{common:.0%}", f"{found:.0%}",
                     f"{np.mean([r['flagged'] for r in n]):.0%}"])
    return markdown_table(["arm", "rare judge's sessions", f"its severity (true {truth_rare:+.2f})", "its CI width",
                           "its CI covers", "common judge's CI covers", "planted found", "null: any flag"],
                          rows, right=range(1, 8))


def store_times(path: str) -> str:
    """Wall and CPU seconds on the store: the hash sample's choice; the stratification (what
    the report pays); a full round of probes for an absent subject (the most it can cost)."""
    from council_db.analysis.loading import strata
    from council_db.analysis.loading.window import Window, sample_query, sample_threshold
    from council_db.store.database import Database, read_only_engine
    from council_db.store.key_hash import key_hash_sql

    url = f"sqlite:///{path}"
    db = Database(url=url, engine=read_only_engine(url))
    window = Window()
    keyed, params = window.session_query("s.id, s.key_hash, s.session_key, s.ts_us")
    rows = []
    with db.reading() as reader:
        count = reader.scalar(f"SELECT COUNT(*) FROM ({keyed}) AS w", params)
        below = sample_threshold(5_000, count)
        hashed = f"COALESCE(w.key_hash, {key_hash_sql(db.dialect, 'w.session_key')})"
        steps = {
            "hash sample (5,000)": lambda: reader.rows(sample_query(keyed, db.dialect), {**params, "hash_below": below}),
            "stratification (check and additions)": lambda: strata.added_sessions(
                reader, db.dialect, keyed, params, base, below, strata.per_subject(5_000)),
            "worst case: one absent subject, every hash": lambda: reader.rows(
                strata._round_sql(keyed, hashed, {"reviewer_id": {-1: 200}, "model_id": {}}, 200),
                {**params, "low": below, "high": 2 ** BITS}),
        }
        base = []
        for name, step in steps.items():
            start, cpu = time.perf_counter(), time.process_time()
            found = step()
            if not base:
                base = [row[0] for row in found]
            rows.append([name, f"{time.perf_counter() - start:.2f}", f"{time.process_time() - cpu:.2f}",
                         f"{len(found):,}"])
    return markdown_table(["step", "wall s", "CPU s", "sessions or rows"], rows, right=(1, 2, 3)) + \
        f"\n\n{count:,} sessions in the store."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=40, help="simulated windows per arm (planted, null)")
    parser.add_argument("--db", help="a SQLite store to time the sample's choice on (only read)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    args = parser.parse_args()
    start = time.perf_counter()
    planted, null = run(PLANTED, args.windows, 1), run(0.0, args.windows, 2)
    text = table(planted, null)
    size = (f"{args.windows} windows per arm of {WINDOW:,} sessions (4 judges x 4 candidates, the rare judge in "
            f"{RARE}), sample {SAMPLE} by key hash, floor {FLOOR}; {time.perf_counter() - start:.0f} s")
    print(size)
    print(text)
    if args.write_docs:
        write_table("strata", text, f"{machine()}; {size}")
    if args.db:
        timed = store_times(args.db)
        print(timed)
        if args.write_docs:
            write_table("strata-store", timed, f"{machine()}; {args.db}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
