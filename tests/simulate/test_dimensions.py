"""A rubric's dimensions in the simulator (issue 30): named scores beside each scored record's
overall score, drawn apart so that the rest of a simulation keeps its bytes, with a position
effect planted on one dimension alone."""

from __future__ import annotations

import io

import numpy as np
import pytest

from council_db.simulate import SimulationConfig, SimulationConfigError, write_jsonl
from council_db.simulate.dimensions import RUBRIC
from tests.conftest import simulated


def text(**config) -> str:
    out = io.StringIO()
    write_jsonl(SimulationConfig(**config), out)
    return out.getvalue()


def test_dimensions_leave_every_other_field_of_a_simulation_as_it_was():
    plain = text(sessions=20, seed=3, unscored_rate=0.1)
    rated = text(sessions=20, seed=3, unscored_rate=0.1, dimensions=list(RUBRIC))
    assert [line.split(', "score_dimensions"')[0].rstrip("}") for line in rated.splitlines()] == [
        line.rstrip("}") for line in plain.splitlines()]


def test_each_scored_record_scores_the_rubric_and_an_unscored_one_none():
    lines, truth = simulated(sessions=30, seed=1, unscored_rate=0.1, dimensions=list(RUBRIC))
    assert truth["dimensions"] == list(RUBRIC)
    scored = [line for line in lines if line["score_value"] > 0]
    assert all(list(line["score_dimensions"]) == list(RUBRIC) for line in scored)
    assert all("score_dimensions" not in line for line in lines if line["score_value"] == 0)
    values = np.array([list(line["score_dimensions"].values()) for line in scored])
    assert values.min() >= 1.0 and values.max() <= 10.0


def test_a_position_effect_planted_on_one_dimension_moves_that_dimension_alone():
    lines, _ = simulated(sessions=300, seed=2, dimensions=["accuracy", "clarity"],
                         dimension_position_effects={"clarity": [1.5]})
    first = np.array([line["position"] == 0 for line in lines])
    gap = {name: np.mean([line["score_dimensions"][name] - line["score_value"] for line in lines], axis=0)
           for name in ("accuracy", "clarity")}
    shown_first = {name: np.array([line["score_dimensions"][name] - line["score_value"]
                                   for line in lines])[first].mean() for name in ("accuracy", "clarity")}
    assert abs(shown_first["accuracy"] - gap["accuracy"]) < 0.15
    assert shown_first["clarity"] - gap["clarity"] > 0.9  # 1.5 less its share of the mean (1/4)


@pytest.mark.parametrize("config, field", [
    ({"dimensions": ["a", "a"]}, "dimensions"),
    ({"dimensions": ["a"], "dimension_position_effects": {"b": [1.0]}}, "dimension_position_effects"),
    ({"dimensions": ["a"], "pairwise": True, "candidates_per_session": 2}, "dimensions"),
    ({"dimensions": ["a"], "dimension_sd": -1.0}, "dimension_sd"),
    ({"dimensions": ["a"], "dimension_reviewer_offsets": {"a": {"nobody": 1.0}}}, "dimension_reviewer_offsets"),
])
def test_a_rubric_the_contract_would_refuse_is_refused_naming_its_field(config, field):
    with pytest.raises(SimulationConfigError) as error:
        SimulationConfig(**config)
    assert error.value.field == field
