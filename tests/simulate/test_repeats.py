"""simulate --repeats K (issue 31): each reviewer scores each answer K times, the same call
again at display slots of its own, each time with its reviewer's own noise."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from council_db.simulate import SimulationConfig, SimulationConfigError
from tests.conftest import simulated
from tests.simulate.test_simulate import flat, run

NOISY = "openai/gpt-4o"


def test_each_answer_is_scored_k_times_at_slots_of_its_own_with_its_reviewers_noise():
    records, truth = simulated(sessions=300, seed=3, repeats=3, noise_sd=0.3, reviewer_noise_sd={NOISY: 1.2})
    assert truth["repeats"] == 3 and len(records) == truth["records"] == 300 * 4 * 4 * 3
    repeats = defaultdict(list)
    for line in records:
        repeats[(line["session_id"], line["reviewer_id"], line["model_id"])].append(line)
    assert {len(lines) for lines in repeats.values()} == {3}
    spread = defaultdict(list)
    for (_, reviewer, _), lines in repeats.items():
        assert len({line["position"] for line in lines}) == 3, "a repeat is stored, not a duplicate key"
        assert len({line["response_length_chars"] for line in lines}) == 1, "the same answer"
        assert {line["position"] % 4 for line in lines} == {lines[0]["position"]}, "shown in the same slot again"
        spread[reviewer].append(np.std([line["score_value"] for line in lines], ddof=1))
    sd = {reviewer: float(np.sqrt(np.mean(np.square(values)))) for reviewer, values in spread.items()}
    assert sd[NOISY] == pytest.approx(1.2, abs=0.08)
    assert all(value == pytest.approx(0.3, abs=0.03) for reviewer, value in sd.items() if reviewer != NOISY)


@pytest.mark.parametrize("config, named", [
    (dict(repeats=0), "repeats must be at least 1, got 0"),
    (dict(repeats=2, swap_orders=True, candidates_per_session=2), "leave swap_orders unset"),
])
def test_repeats_it_cannot_write_are_refused_naming_the_field(config, named):
    with pytest.raises(SimulationConfigError, match=named) as raised:
        SimulationConfig(**config)
    assert raised.value.field == "repeats"


def test_a_bad_repeats_option_is_exit_2(tmp_path):
    result = run("-o", str(tmp_path / "out.jsonl"), "--repeats", "0")
    assert result.exit_code == 2 and "--repeats" in flat(result.output) and "Traceback" not in result.output
