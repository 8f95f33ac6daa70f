"""Study: the absorbed joint model (council_db.analysis.joint.absorbed_fit) on the panels of
bench_panels.py (issue 32): how close it is to the dense fit, and what it costs where the
dense fit cannot run.

    python benchmarks/bench_absorb.py [--reviewers 50000] [--compare 1000] [--write-docs]

The absorbed fit takes the session effects out by demeaning and solves the reviewer,
candidate, slot, self and length columns by Jacobi-preconditioned conjugate gradients,
matrix-free (np.bincount), several right-hand sides a pass. The study measures

* on a panel where the dense fit runs (``--compare`` reviewers): the absorbed estimates and
  CR1 SEs (every subject's, the 10-session floor lifted) against joint_model.fit's dense ones,
  the largest difference;
* on the wide panel (``--reviewers``): the absorbed fit's CPU time and traced peak memory,
  and one subject's contrast solve: a cluster-robust SE needs one per subject (Var(c'b) =
  sum_g (s_g' M c)^2, M = (X'X)^-1), so every subject's would cost about reviewers x that
  (the fit gives one only to subjects with >= 10 sessions).

* on a panel where every subject's exact SE runs (``--own-columns``, the 5,000 x 500 shape at a
  tenth): each subject's SE from its own column alone (the others' effects as if known: one
  bincount pass for all), against the exact ones, the range of their ratio: what a report at
  that shape's full size could give in its budget, and how far it would be from the exact.

It prints its figures (``--write-docs``: into docs/benchmarks.md, table "absorb").
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from doc_tables import machine, markdown_table, write_table  # benchmarks/ is on the path as a script

from council_db.analysis.joint import absorbed_fit, joint_model
from council_db.analysis.joint.absorbed import Absorbed
from council_db.analysis.loading.score_data import ScoreData


def panel(reviewers: int, candidates: int, sessions: int, seed: int = 32) -> ScoreData:
    """bench_panels.py's shape: sessions of 3 records, reviewer and candidate drawn at random
    (each at least once where the records allow), display slots 0-2."""
    rng = np.random.default_rng(seed)
    n = sessions * 3
    reviewer = rng.permutation(np.resize(np.arange(reviewers), n))
    candidate = rng.permutation(np.resize(np.arange(candidates), n))
    severity, quality = rng.normal(0, 0.5, reviewers), rng.normal(0, 0.5, candidates)
    score = np.clip(6 + severity[reviewer] + quality[candidate] + rng.normal(0, 1, n), 1, 10).round(1)
    length = rng.integers(200, 3000, n)
    return ScoreData(session=np.arange(n) // 3, reviewer=reviewer, model=candidate, slot=np.arange(n) % 3,
                     log_length=np.log(length + 1.0), score=score, self_review=np.zeros(n, dtype=bool),
                     reviewers=[f"r/{i}" for i in range(reviewers)], models=[f"m/{i}" for i in range(candidates)],
                     session_keys=[f"s{i}" for i in range(sessions)], session_ts_us=np.arange(sessions, dtype=np.int64))


def compare(reviewers: int) -> list[str]:
    """Absorbed against the dense joint model on a panel where both run: a table row."""
    data = panel(reviewers, 4, reviewers)
    dense = joint_model.fit(data, absorbed=False)
    floor, absorbed_fit.MIN_SESSIONS = absorbed_fit.MIN_SESSIONS, 0  # every subject's SE, to compare them all
    wide = joint_model.fit(data, absorbed=True)
    absorbed_fit.MIN_SESSIONS = floor
    differences = {name: max(abs(getattr(getattr(wide, name)[key], part) - getattr(effect, part))
                             for key, effect in getattr(dense, name).items() for part in ("estimate", "se"))
                   for name in ("severity", "quality")}
    return [_store(reviewers, data.n_records), "absorbed estimates and CR1 SEs against the dense fit's",
            f"largest difference: severity {differences['severity']:.1e}, quality {differences['quality']:.1e}"]


def wide(reviewers: int) -> list[list[str]]:
    """The absorbed fit's cost on the wide panel, and one subject's contrast solve: table rows."""
    data = panel(reviewers, 4, reviewers)
    tracemalloc.start()
    began = time.process_time()
    fit = joint_model.fit(data)
    spent, peak = time.process_time() - began, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert fit.absorbed
    tested = sum(e.identified for e in fit.severity.values()) + sum(e.identified for e in fit.quality.values())
    slot = np.arange(data.n_records) % 3
    factors = Absorbed(data.session, np.full(reviewers, 3.0), data.reviewer, data.model, reviewers, 4,
                       np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])[slot], np.zeros(data.n_records, dtype=bool),
                       np.zeros(0, dtype=int), data.log_length - np.repeat(
                           data.log_length.reshape(-1, 3).mean(axis=1), 3), np.zeros(0, dtype=int))
    contrast = np.zeros((factors.width, 1))
    contrast[:reviewers, 0] = -1.0 / reviewers
    contrast[0, 0] += 1.0  # severity of reviewer 0
    began = time.process_time()
    _, converged = factors.solve(contrast)
    per_subject = time.process_time() - began
    assert converged.all()
    store = _store(reviewers, data.n_records)
    return [[store, "the absorbed fit (joint_model.fit past its dense limit)",
             f"{spent:.1f} s CPU, {peak / 2 ** 20:.0f} MB traced peak; {tested:,} subjects with >= 10 sessions "
             "given a CR1 SE"],
            [store, "one subject's contrast solve (its CR1 SE needs one)",
             f"{per_subject:.2f} s CPU: x {reviewers:,} subjects = {per_subject * reviewers / 3600:.1f} h CPU"]]


def own_columns(reviewers: int, candidates: int, sessions: int) -> list[list[str]]:
    """Each subject's CR1 SE with its own column alone (M c taken as D^-1 c, D the diagonal of
    X'X: the others' effects as if known), one bincount pass for every subject, against the
    exact CR1 SEs (a solve each) on a panel where both run: table rows. The panel of the
    5,000 x 500 shape at a tenth has every subject above the floor."""
    data = panel(reviewers, candidates, sessions)
    made: list[Absorbed] = []
    kept = Absorbed.__post_init__

    def keep(op: Absorbed) -> None:
        kept(op)
        made.append(op)

    floor, absorbed_fit.MIN_SESSIONS, Absorbed.__post_init__ = absorbed_fit.MIN_SESSIONS, 0, keep
    began = time.process_time()
    fit = joint_model.fit(data, absorbed=True)
    exact_cpu = time.process_time() - began
    absorbed_fit.MIN_SESSIONS, Absorbed.__post_init__ = floor, kept
    op, e = made[0], fit.residuals
    began = time.process_time()
    n, p = data.n_records, op.width - op.starts[2] + reviewers + candidates - 2  # a connected panel's rank
    factor = sessions / (sessions - 1) * (n - 1) / (n - p)
    rows = []
    for label, level, count, start, exact in (("severity", data.reviewer, reviewers, 0, fit.severity),
                                              ("quality", data.model, candidates, 1, fit.quality)):
        d = op.diagonal[op.starts[start]:op.starts[start + 1]]
        totals = np.bincount(level * sessions + data.session, weights=e, minlength=count * sessions)
        by_cell = totals.reshape(count, sessions)  # the subject's residual total in each session
        shared = np.bincount(data.session, weights=e / d[level], minlength=sessions)  # the group mean's part
        var = factor * ((by_cell ** 2).sum(axis=1) / d ** 2 - 2.0 / (count * d) * (by_cell @ shared)
                        + (shared ** 2).sum() / count ** 2)
        names = data.reviewers if label == "severity" else data.models
        ratio = np.sqrt(var) / np.array([exact[name].se for name in names])
        rows.append([f"{reviewers:,} reviewers x {candidates:,} candidates, {sessions:,} sessions, {n:,} records",
                     f"{label}: own-column CR1 SE against the exact (a solve per subject, {exact_cpu:.1f} s CPU "
                     "for the fit)", f"ratio {ratio.min():.3f} to {ratio.max():.3f} (median {np.median(ratio):.3f})"])
    rows[-1][2] += f"; both in {time.process_time() - began:.2f} s CPU"
    return rows


def _store(reviewers: int, records: int) -> str:
    return f"{reviewers:,} reviewers x 4 candidates, {reviewers:,} sessions, {records:,} records"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=50_000, help="the wide panel's reviewers (and sessions)")
    parser.add_argument("--compare", type=int, default=1_000, help="reviewers of the panel compared with the dense fit")
    parser.add_argument("--own-columns", default="50,500,10000",
                        help="reviewers,candidates,sessions of the panel where own-column SEs meet the exact ones")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md (absorb)")
    options = parser.parse_args()
    print(machine())
    rows = [compare(options.compare), *wide(options.reviewers),
            *own_columns(*(int(part) for part in options.own_columns.split(",")))]
    for row in rows:
        print(" | ".join(row), flush=True)
    if options.write_docs:
        table = markdown_table(["panel", "what", "figure"], rows)
        write_table("absorb", table, f"{machine()}; CPU time of one process")


if __name__ == "__main__":
    main()
