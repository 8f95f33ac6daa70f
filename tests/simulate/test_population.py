"""Judges drawn from a population (issue 33): the spreads draw each judge's severity, slot
effects and verbosity, the truth file holds the drawn values, the rest of the output keeps
its bytes, and a negative spread is refused naming its field."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.simulate import SimulationConfig, SimulationConfigError
from tests.conftest import simulated


def test_spreads_draw_each_judges_effects_and_the_truth_holds_them():
    records, truth = simulated(sessions=3, seed=4, reviewer_spread=0.5, reviewer_position_spread=0.2,
                               reviewer_verbosity_spread=0.1, verbosity=0.3)
    offsets = np.array(list(truth["reviewer_offsets"].values()))
    slots = np.array(list(truth["reviewer_position_effects"].values()))
    verbosity = np.array(list(truth["reviewer_verbosity"].values()))
    assert len(set(offsets.round(12))) == len(offsets) and np.all(offsets != 0)
    assert slots.shape == (4, 4) and np.all(slots != 0)
    assert np.all(verbosity != 0.3) and np.allclose(verbosity.mean(), 0.3, atol=0.2)


def test_spreads_leave_the_rest_of_the_output_alone():
    plain, _ = simulated(sessions=3, seed=4)
    drawn, _ = simulated(sessions=3, seed=4, reviewer_spread=0.5)
    assert [(r["session_id"], r["model_id"], r["response_length_chars"], r["position"]) for r in plain] == \
        [(r["session_id"], r["model_id"], r["response_length_chars"], r["position"]) for r in drawn]
    assert [r["score_value"] for r in plain] != [r["score_value"] for r in drawn]


def test_no_spread_keeps_a_seeds_bytes():
    assert simulated(sessions=3, seed=4)[0] == simulated(sessions=3, seed=4, reviewer_spread=0.0)[0]


def test_a_negative_spread_is_refused_naming_it():
    with pytest.raises(SimulationConfigError) as refused:
        SimulationConfig(reviewer_position_spread=-0.1)
    assert refused.value.field == "reviewer_position_spread"
