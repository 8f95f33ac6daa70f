"""Human raters and gold labels in the simulation (issue 28): what sets them apart from the
judges, each answer's own quality that all of them see, and who rates which session.

Every reviewer's score has the terms in the package docstring; a human's take its own noise SD
and verbosity (``reviewer_noise_sd``, ``reviewer_verbosity``; the config's defaults otherwise),
offsets and position effects by name like a judge's, and no self-preference (a human is no
candidate). The gold reviewer scores base + quality + the answer's own effect, rounded to the
scale: no offset, position, length, drift or noise, so its verdict on two answers is the right
one. ``answer_sd`` gives each answer an effect of its own, shared by everyone who scores it:
the signal raters can agree about beyond the candidates' quality.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from council_db.simulate.config import SimulationConfig

JUDGE, HUMAN, GOLD = "judge", "human", "gold"


def reviewer_terms(c: SimulationConfig) -> dict[str, Any]:
    """The plan's per-reviewer noise SD, verbosity, shared-position weight and kind."""
    reviewers, gold = c.reviewer_ids, c.gold
    kind = np.array([c.reviewer_kinds.get(r, JUDGE) for r in reviewers], dtype=object)
    truth = np.array([r == gold for r in reviewers])
    return {
        "noise_sd": np.where(truth, 0.0, [c.reviewer_noise_sd.get(r, c.noise_sd) for r in reviewers]),
        "verbosity": np.where(truth, 0.0, [c.reviewer_verbosity.get(r, c.verbosity) for r in reviewers]),
        "biased": np.where(truth, 0.0, 1.0),
        "kind": kind,
    }


def answer_effects(c: SimulationConfig, rng: np.random.Generator, n: int) -> np.ndarray:
    """Each answer's own effect, (n, lines per reviewer): the same in both orders of a swap and
    in every repeat."""
    effects = c.answer_sd * rng.standard_normal((n, c.answers_per_session))
    return np.tile(effects, (1, (2 if c.swap_orders else 1) * c.repeats))


def reference_raters(c: SimulationConfig, plan: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, R) True where the reviewer writes the session: judges always; in a share
    ``reference_share`` of the sessions, the gold reviewer and ``humans_per_session`` humans
    drawn at random (every human when None)."""
    rated = rng.random(n) < c.reference_share
    writes = np.ones((n, len(plan.kind)), dtype=bool)
    humans = np.flatnonzero(plan.kind == HUMAN)
    if len(humans):
        chosen = np.ones((n, len(humans)), dtype=bool)
        if c.humans_per_session is not None:
            chosen = np.argsort(rng.random((n, len(humans))), axis=1).argsort(axis=1) < c.humans_per_session
        writes[:, humans] = chosen & rated[:, None]
    writes[:, plan.kind == GOLD] = rated[:, None]
    return writes
