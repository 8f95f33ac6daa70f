"""A rubric's dimensions: each record also scores its answer on several named criteria, as
llm-council's rubric scoring does (accuracy, relevance, completeness, conciseness, clarity,
each 1-10: amiable-dev/llm-council, docs/adr/ADR-016-structured-rubric-scoring.md).

A dimension's score is the record's overall score plus Normal(0, dimension_sd) plus the
dimension's own position effect in the record's display slot and its own offset of the record's
reviewer (a severity on one dimension alone), rounded and clipped like the overall score. The
draws come from a generator of their own, so turning dimensions on leaves every other byte of
a simulation as it was; an unscored record (score 0) gets none.
"""

from __future__ import annotations

import numpy as np

from council_db.simulate.config import MAX_TENTHS, MIN_TENTHS, SimulationConfig

# llm-council's rubric (ADR-016 after its council review), in the order its prompt lists them
RUBRIC = ("accuracy", "relevance", "completeness", "conciseness", "clarity")
STREAM = 30  # the dimension generator's stream beside the seed (issue 30)


def dimension_rng(c: SimulationConfig) -> np.random.Generator:
    return np.random.default_rng([c.seed, STREAM])


def dimension_tenths(c: SimulationConfig, rng: np.random.Generator, tenths: np.ndarray) -> np.ndarray:
    """(n, R, K, D) scores in tenths per dimension of records whose overall scores are
    ``tenths`` (n, R, K), in line order: line j of a reviewer is display slot j mod K."""
    shape = (*tenths.shape, len(c.dimensions))
    slot = np.arange(tenths.shape[-1]) % c.answers_per_session
    effects = np.zeros((c.answers_per_session, len(c.dimensions)))
    for number, name in enumerate(c.dimensions):
        planted = c.dimension_position_effects.get(name, [])
        effects[:len(planted), number] = planted
    offsets = np.array([[c.dimension_reviewer_offsets.get(name, {}).get(reviewer, 0.0) for name in c.dimensions]
                        for reviewer in c.reviewer_ids])  # (R, D)
    score = (tenths[..., None] / 10 + c.dimension_sd * rng.standard_normal(shape) + effects[slot][None, None]
             + offsets[None, :, None, :])
    step = 10 if c.integer_scale else 1
    return np.clip(np.rint(score * 10 / step) * step, MIN_TENTHS, MAX_TENTHS).astype(np.int64)
