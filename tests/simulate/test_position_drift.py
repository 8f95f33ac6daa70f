"""simulate --position-drift: a judge upgrade that moved one reviewer's slot preference, as a
step at --drift-at (or a line), planted on that reviewer only; a bad value is a usage error."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from council_db.cli.app import app
from council_db.simulate import SimulationConfig, SimulationConfigError, write_jsonl

GPT, CLAUDE = SimulationConfig().models[:2]
END = "2025-12-17T00:00:00+00:00"


def _records(**config) -> tuple[list[dict], dict]:
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(sessions=800, seed=5, noise_sd=0.5, **config), out)
    return [json.loads(line) for line in out.getvalue().splitlines()], truth


def _slot0_lead(records: list[dict], reviewer: str, late: bool, start: str) -> float:
    """The reviewer's mean score in slot 0 minus its mean in the other slots, before or after ``start``."""
    mine = [r for r in records if r["reviewer_id"] == reviewer and (r["timestamp"] >= start) == late]
    first = np.array([r["score_value"] for r in mine if r["position"] == 0])
    rest = np.array([r["score_value"] for r in mine if r["position"] != 0])
    return float(first.mean() - rest.mean())


def test_position_drift_is_a_step_in_that_reviewers_slot_preference_at_drift_at():
    records, truth = _records(position_drift={GPT: [1.0]}, drift_at=0.5)
    times = sorted(r["timestamp"] for r in records)
    middle = times[len(times) // 2]

    step = _slot0_lead(records, GPT, True, middle) - _slot0_lead(records, GPT, False, middle)
    other = _slot0_lead(records, CLAUDE, True, middle) - _slot0_lead(records, CLAUDE, False, middle)
    assert step == pytest.approx(1.0, abs=0.15)
    assert other == pytest.approx(0.0, abs=0.15)
    assert truth["position_drift"][GPT] == [1.0, 0.0, 0.0, 0.0]


def test_a_simulation_without_position_drift_states_none_in_its_truth():
    _, truth = _records()

    assert "position_drift" not in truth


def test_position_drift_for_more_slots_than_answers_is_refused():
    with pytest.raises(SimulationConfigError, match="slot changes"):
        _records(position_drift={GPT: [1.0, 0, 0, 0, 0]})


@pytest.mark.parametrize("value, says", [("openai/gpt-4o", "expected REVIEWER=X,Y"),
                                         ("nobody=1", "unknown id 'nobody'"),
                                         ("openai/gpt-4o=x", "bad number 'x'")])
def test_a_bad_position_drift_is_a_usage_error_naming_the_option(tmp_path, value, says):
    result = CliRunner().invoke(app, ["simulate", "--end", END, "--position-drift", value,
                                      "-o", str(tmp_path / "out.jsonl")])

    assert result.exit_code == 2
    assert "--position-drift" in result.output and says in result.output
