"""The agreement a pairwise simulation plants, by a large Monte-Carlo once: the truth the
reference analyses' intervals must cover (analysis/reference/).

Agreement between a judge and people is not a parameter of the simulation but a consequence
of its noise SDs, biases and answer effects, so it is computed, not set: ``implied_agreement``
simulates many fresh sessions from the config's own plan (its seed's model lengths) and pools
the verdict tables the analyses estimate, by the same definitions (analysis/reference/
verdicts.py): a verdict is the sign of a reviewer's mean score of the pair's first answer (the
candidate whose name sorts first) minus the second's; the reference verdict is the humans'
strict majority; ties are a class (S1) or, where either side tied, left out (S2). Restated here,
not imported: the simulator stands alone, and two implementations agreeing is part of the proof.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from council_db.simulate.config import SimulationConfig, SimulationConfigError
from council_db.simulate.raters import GOLD, HUMAN, JUDGE
from council_db.simulate.sessions import build_plan, simulate_chunk

SESSIONS = 200_000
CHUNK = 20_000


def _coefficients(table: np.ndarray) -> dict[str, float]:
    """Raw agreement and Cohen's kappa, with ties (S1) and without (S2), of a 3x3 table."""
    out = {}
    for name, t in (("", table), ("_without_ties", table[np.ix_([0, 2], [0, 2])])):
        total = t.sum()
        observed = np.trace(t) / total
        chance = float(t.sum(axis=1) @ t.sum(axis=0)) / total**2
        out[f"agreement{name}"] = float(observed)
        out[f"kappa{name}"] = float((observed - chance) / (1.0 - chance))
    return out


def _verdicts(c: SimulationConfig, tenths: np.ndarray, models: np.ndarray, written: np.ndarray | None) -> np.ndarray:
    """(n, R) verdicts: +1 when the reviewer's mean score of the first-named candidate is higher, NaN if none."""
    rank = np.argsort(np.argsort(c.models))[models]
    first = rank == rank.min(axis=2, keepdims=True)
    weight = np.ones(tenths.shape) if written is None else written.astype(np.float64)
    means = []
    for side in (first, ~first):
        count = (side * weight).sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append(np.where(count > 0, (tenths * side * weight).sum(axis=2) / count, np.nan))
    return np.sign(means[0] - means[1])


def _table(first: np.ndarray, second: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return np.bincount((first * 3 + second).astype(np.int64), weights=weight, minlength=9).reshape(3, 3)


def implied_agreement(config: SimulationConfig, sessions: int = SESSIONS) -> dict[str, Any]:
    """Per judge: its agreement and kappa with the humans' majority (``reference``), with single
    humans where two or more rated (``raters``) and with the gold label (``gold``); the humans'
    among themselves (``ceiling``). Two candidates a session only."""
    if config.answers_per_session != 2:
        raise SimulationConfigError("candidates_per_session", "implied agreement is defined for two candidates a "
                                                              "session (pairwise verdicts)")
    c = dataclasses.replace(config, sessions=sessions)
    plan = build_plan(c, np.random.default_rng(c.seed))
    rng = np.random.default_rng([c.seed, 28])
    judges, humans, golds = (np.flatnonzero(plan.kind == k) for k in (JUDGE, HUMAN, GOLD))
    tables = {(j, what): np.zeros((3, 3)) for j in judges.tolist() for what in ("reference", "raters", "gold")}
    ceiling = np.zeros((3, 3))
    for first in range(0, sessions, CHUNK):
        chunk = simulate_chunk(c, plan, rng, first, min(CHUNK, sessions - first))
        verdicts = _verdicts(c, chunk.tenths, chunk.models, chunk.written) + 1  # classes 0, 1, 2
        counts = np.stack([(verdicts[:, humans] == v).sum(axis=1) for v in range(3)], axis=1).astype(np.float64)
        rated = counts.sum(axis=1)
        best = counts.argmax(axis=1)
        majority = np.where(2 * counts[np.arange(len(counts)), best] > rated, best, -1)
        twice = rated >= 2
        pairs = np.where(twice, rated * (rated - 1), 1.0)
        for a in range(3):
            for b in range(3):
                ceiling[a, b] += (twice * counts[:, a] * (counts[:, b] - (a == b)) / pairs).sum()
        gold = verdicts[:, golds[0]] if len(golds) else np.full(len(verdicts), np.nan)
        for j in judges.tolist():
            mine = verdicts[:, j]
            given = np.isfinite(mine)
            use = given & (majority >= 0)
            tables[j, "reference"] += _table(mine[use], majority[use], np.ones(use.sum()))
            use = given & twice
            for b in range(3):
                tables[j, "raters"] += _table(mine[use], np.full(use.sum(), b), counts[use, b] / rated[use])
            use = given & np.isfinite(gold)
            tables[j, "gold"] += _table(mine[use], gold[use], np.ones(use.sum()))
    names = c.reviewer_ids
    return {
        "sessions": sessions,
        "judges": {names[j]: {what: _coefficients(tables[j, what]) for what in ("reference", "raters", "gold")
                              if tables[j, what].sum() > 0} for j in judges.tolist()},
        "ceiling": _coefficients(ceiling) if ceiling.sum() > 0 else {},
    }
