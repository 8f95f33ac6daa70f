"""The simulator can write a swap design (each reviewer scores the answers again in reversed
order, in the same session) and per-reviewer position effects, as real judge data has."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from council_db.simulate import SimulationConfig, SimulationConfigError
from tests.conftest import simulated


def test_a_swap_design_shows_each_reviewer_the_same_two_answers_in_both_orders():
    records, truth = simulated(sessions=20, seed=2, candidates_per_session=2, swap_orders=True)
    assert len(records) == truth["records"] == 20 * 4 * 4 and truth["swap_orders"]
    calls = defaultdict(list)
    for line in records:
        calls[(line["session_id"], line["reviewer_id"])].append((line["model_id"], line["position"]))
    for lines in calls.values():
        first, second = lines[:2], lines[2:]
        assert [p for _, p in first] == [p for _, p in second] == [0, 1]
        assert [m for m, _ in second] == [m for m, _ in reversed(first)] and first[0][0] != first[1][0]


def test_a_reviewers_own_position_effect_moves_only_its_scores():
    records, truth = simulated(sessions=400, seed=5, noise_sd=0.5, per_reviewer_shuffle=True,
                               reviewer_position_effects={"openai/gpt-4o": [1.0, 0, 0, -1.0]})
    assert truth["reviewer_position_effects"]["openai/gpt-4o"] == [1.0, 0.0, 0.0, -1.0]
    gap = {}
    for reviewer in ("openai/gpt-4o", "google/gemini-1.5-pro"):
        by_slot = defaultdict(list)
        for line in records:
            if line["reviewer_id"] == reviewer:
                by_slot[line["position"]].append(line["score_value"])
        gap[reviewer] = np.mean(by_slot[0]) - np.mean(by_slot[3])
    assert gap["openai/gpt-4o"] == pytest.approx(2.0, abs=0.2) and abs(gap["google/gemini-1.5-pro"]) < 0.2


def test_a_swap_design_needs_display_slots():
    with pytest.raises(SimulationConfigError) as error:
        SimulationConfig(swap_orders=True, schema_version="1.1.0")
    assert error.value.field == "swap_orders"
