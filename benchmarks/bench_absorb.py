"""Study: what absorbing the reviewer and candidate factors would cost, on the panels of
bench_panels.py (issue 32), before the joint model is rewritten on it.

    python benchmarks/bench_absorb.py [--reviewers 50000] [--compare 300] [--write-docs]

The joint model's estimates need no dense design: with the session effects taken out by
demeaning, the reviewer and candidate effects solve a sparse system (each record touches one
reviewer and one candidate) by preconditioned conjugate gradients, matrix-free (np.bincount),
and the few other columns (display slots, length) by Frisch-Waugh-Lovell. The study measures

* on a panel where the dense fit runs (``--compare`` reviewers): the absorbed severities and
  qualities against joint_model.fit's, the largest difference;
* on the wide panel (``--reviewers``): the estimates' CPU time, iterations and traced peak
  memory, and one solve for one subject's contrast: a cluster-robust SE needs one per subject
  (Var(c'b) = sum_g (s_g' M c)^2, M = (X'X)^-1), so all of them cost about reviewers x that.

It prints its figures (``--write-docs``: into docs/benchmarks.md, table "absorb"); nothing
here is used by the report.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from doc_tables import machine, markdown_table, write_table  # benchmarks/ is on the path as a script

TOLERANCE = 1e-13  # relative residual of the normal equations at which a solve stops
MAX_ITERATIONS = 5000


def panel(reviewers: int, candidates: int, sessions: int, seed: int = 32) -> dict[str, np.ndarray]:
    """bench_panels.py's shape as arrays: sessions of 3 records, reviewer and candidate drawn at
    random (each at least once where the records allow), display slots 0-2."""
    rng = np.random.default_rng(seed)
    n = sessions * 3
    reviewer = rng.permutation(np.resize(np.arange(reviewers), n))
    candidate = rng.permutation(np.resize(np.arange(candidates), n))
    severity, quality = rng.normal(0, 0.5, reviewers), rng.normal(0, 0.5, candidates)
    score = np.clip(6 + severity[reviewer] + quality[candidate] + rng.normal(0, 1, n), 1, 10).round(1)
    length = rng.integers(200, 3000, n)
    return dict(session=np.arange(n) // 3, reviewer=reviewer, model=candidate, slot=np.arange(n) % 3,
                log_length=np.log(length + 1.0), score=score)


class Absorbed:
    """The session, reviewer and candidate factors of one panel, as matrix-free operators."""

    def __init__(self, session: np.ndarray, reviewer: np.ndarray, model: np.ndarray) -> None:
        self.session, self.reviewer, self.model = session, reviewer, model
        self.size = np.bincount(session).astype(float)
        self.n_rev, self.n_mod = int(reviewer.max()) + 1, int(model.max()) + 1
        self.diagonal = np.concatenate([self._own_norms(reviewer, self.n_rev), self._own_norms(model, self.n_mod)])

    def _own_norms(self, level: np.ndarray, n: int) -> np.ndarray:
        """Each level's indicator's squared norm once demeaned: sum over its sessions of c - c^2/n_g."""
        cells, count = np.unique(level * len(self.size) + self.session, return_counts=True)
        return np.bincount(cells // len(self.size), weights=count - count ** 2 / self.size[cells % len(self.size)],
                           minlength=n)

    def demean(self, v: np.ndarray) -> np.ndarray:
        return v - (np.bincount(self.session, weights=v) / self.size)[self.session]

    def design(self, x: np.ndarray) -> np.ndarray:
        """The demeaned design times the factor coefficients x (reviewers, then candidates)."""
        return self.demean(x[:self.n_rev][self.reviewer] + x[self.n_rev:][self.model])

    def transposed(self, w: np.ndarray) -> np.ndarray:
        return np.concatenate([np.bincount(self.reviewer, weights=w, minlength=self.n_rev),
                               np.bincount(self.model, weights=w, minlength=self.n_mod)])

    def solve(self, b: np.ndarray) -> tuple[np.ndarray, int]:
        """x with (D'QD) x = b, by Jacobi-preconditioned conjugate gradients, and the iterations."""
        x, r = np.zeros_like(b), b.copy()
        z = r / np.maximum(self.diagonal, 1e-300)
        p, rz, norm_b = z.copy(), float(r @ z), float(np.linalg.norm(b))
        for iteration in range(1, MAX_ITERATIONS + 1):
            ap = self.transposed(self.design(p))
            alpha = rz / float(p @ ap)
            x += alpha * p
            r -= alpha * ap
            if np.linalg.norm(r) <= TOLERANCE * norm_b:
                return x, iteration
            z = r / np.maximum(self.diagonal, 1e-300)
            rz, previous = float(r @ z), rz
            p = z + (rz / previous) * p
        return x, MAX_ITERATIONS

    def residualised(self, v: np.ndarray) -> tuple[np.ndarray, int]:
        """v less its projection on the sessions, reviewers and candidates."""
        x, iterations = self.solve(self.transposed(self.demean(v)))
        return self.demean(v) - self.design(x), iterations


def estimates(data: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, int]:
    """Severity and quality (effect coded: against the average reviewer and candidate), with
    slot effects and log length in the model, and the iterations of all the solves."""
    factors = Absorbed(data["session"], data["reviewer"], data["model"])
    slot_codes = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])[data["slot"]]
    small = np.column_stack([slot_codes, data["log_length"]])
    done = [factors.residualised(small[:, j]) for j in range(small.shape[1])]
    y_res, iterations = factors.residualised(data["score"])
    z_res = np.column_stack([column for column, _ in done])
    gamma = np.linalg.lstsq(z_res, y_res, rcond=None)[0]
    x, more = factors.solve(factors.transposed(factors.demean(data["score"] - small @ gamma)))
    severity, quality = x[:factors.n_rev], x[factors.n_rev:]
    return severity - severity.mean(), quality - quality.mean(), iterations + more + sum(i for _, i in done)


def compare(reviewers: int) -> list[str]:
    """Absorbed against the dense joint model on a panel where both run: a table row."""
    from council_db.analysis.joint import joint_model
    from council_db.analysis.loading.score_data import ScoreData

    data = panel(reviewers, 4, reviewers)
    n_sessions = int(data["session"].max()) + 1
    scores = ScoreData(session=data["session"], reviewer=data["reviewer"], model=data["model"], slot=data["slot"],
                       log_length=data["log_length"], score=data["score"],
                       self_review=np.zeros(len(data["score"]), dtype=bool),
                       reviewers=[f"r/{i}" for i in range(reviewers)], models=[f"m/{i}" for i in range(4)],
                       session_keys=[f"s{i}" for i in range(n_sessions)],
                       session_ts_us=np.arange(n_sessions, dtype=np.int64))
    fit = joint_model.fit(scores)
    severity, quality, _ = estimates(data)
    dense_severity = np.array([fit.severity[f"r/{i}"].estimate for i in range(reviewers)])
    dense_quality = np.array([fit.quality[f"m/{i}"].estimate for i in range(4)])
    return [_store(reviewers, len(data["score"])), "absorbed estimates against joint_model.fit's",
            f"largest difference: severity {np.abs(severity - dense_severity).max():.1e}, "
            f"quality {np.abs(quality - dense_quality).max():.1e}"]


def wide(reviewers: int) -> list[list[str]]:
    """The estimates' cost on the wide panel, and one subject's contrast solve: table rows."""
    data = panel(reviewers, 4, reviewers)
    tracemalloc.start()
    began = time.process_time()
    _, _, iterations = estimates(data)
    spent, peak = time.process_time() - began, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    factors = Absorbed(data["session"], data["reviewer"], data["model"])
    contrast = np.zeros(factors.n_rev + factors.n_mod)
    contrast[:factors.n_rev] = -1.0 / factors.n_rev
    contrast[0] += 1.0  # severity of reviewer 0: in the system's range (orthogonal to its null space)
    began = time.process_time()
    _, one = factors.solve(contrast)
    per_subject = time.process_time() - began
    store = _store(reviewers, len(data["score"]))
    return [[store, "every severity and quality (estimates only)",
             f"{spent:.1f} s CPU, {iterations} iterations, {peak / 2 ** 20:.0f} MB traced peak"],
            [store, "one subject's contrast solve (its CR1 SE needs one)",
             f"{per_subject:.2f} s CPU, {one} iterations: x {reviewers:,} subjects = "
             f"{per_subject * reviewers / 3600:.1f} h CPU"]]


def _store(reviewers: int, records: int) -> str:
    return f"{reviewers:,} reviewers x 4 candidates, {reviewers:,} sessions, {records:,} records"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=50_000, help="the wide panel's reviewers (and sessions)")
    parser.add_argument("--compare", type=int, default=300, help="reviewers of the panel compared with the dense fit")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md (absorb)")
    options = parser.parse_args()
    print(machine())
    rows = [compare(options.compare), *wide(options.reviewers)]
    for row in rows:
        print(" | ".join(row), flush=True)
    if options.write_docs:
        table = markdown_table(["panel", "what", "figure"], rows)
        write_table("absorb", table, f"{machine()}; CPU time of one process")


if __name__ == "__main__":
    main()
