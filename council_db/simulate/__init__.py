"""Synthetic llm-council bias records with effects planted at known sizes.

An auditor is only worth trusting if it finds the biases we know are there, at
the size they were planted, and nothing else. This package writes JSONL lines
byte-for-byte in the shape llm-council writes them, and returns a "truth" dict
with every planted parameter so tests and benchmarks can check recoveries.

Score of one record (before rounding to 0.1 and clipping to [1, 10])::

    base + quality[model] + offset[reviewer] + position_effects[display slot]
    + self_preference * (reviewer == model) + verbosity[reviewer] * z + drift[reviewer] * t
    + Normal(0, noise_sd[reviewer]) + answer effect (Normal(0, answer_sd), shared by everyone)

where z is the answer's log length standardised by the population the lengths
are drawn from and t in [0, 1] is the session's place in time less its mean over
the span, 1/2 (with ``drift_at`` set, a step from 0 to 1 at that share of the span,
likewise centred). Centring keeps each planted effect to one estimand: a drift
changes a reviewer's scores over time but not its average level, which ``offset`` sets.

Human raters and a gold label (``raters``) score alongside the judges; ``implied`` computes the
agreement with them that a config plants. With ``pairwise`` and ``bradley_terry`` the verdicts
come from the Bradley-Terry model instead (``bradley_terry``: strengths, first-shown advantage,
length preference, Rao-Kupper or Davidson ties, five verdict levels). Modules: ``config`` (what to simulate),
``sessions`` (drawing them), ``jsonl`` (writing them).
"""

from council_db.simulate.config import SimulationConfig, SimulationConfigError
from council_db.simulate.jsonl import write_jsonl

__all__ = ["SimulationConfig", "SimulationConfigError", "write_jsonl"]
