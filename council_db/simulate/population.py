"""Judges drawn from a population (issue 33): each judge's severity, own effect per display
slot and verbosity drawn from normals with the config's spreads, so a hierarchical model's
credible intervals can be checked against effects that really come from the population it
assumes. The draws use a stream of their own, so the rest of the output keeps its bytes."""

from __future__ import annotations

import numpy as np

from council_db.simulate.config import SimulationConfig

STREAM = 33  # the population's random stream: the seed's, told apart from the main one


def drawn_effects(c: SimulationConfig, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per reviewer (judges only; humans and gold get 0): the drawn severity, (R, K) effect per
    slot and verbosity, all 0 when no spread is set."""
    reviewers, judges = c.reviewer_ids, set(c.judge_ids)
    judge = np.array([r in judges for r in reviewers], dtype=np.float64)
    rng = np.random.default_rng([c.seed, STREAM])
    severity = c.reviewer_spread * rng.standard_normal(len(reviewers)) * judge
    position = c.reviewer_position_spread * rng.standard_normal((len(reviewers), k)) * judge[:, None]
    verbosity = c.reviewer_verbosity_spread * rng.standard_normal(len(reviewers)) * judge
    return severity, position, verbosity
