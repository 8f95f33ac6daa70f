"""The simulator's Bradley-Terry mode: refused where it means nothing, verdicts on the 0-1
scale with arena-hard's five levels when asked, and the truth says what was planted."""

from __future__ import annotations

import io
import json

import pytest

from council_db.simulate import SimulationConfig, SimulationConfigError, write_jsonl

BASE = dict(models=["a", "b", "c"], model_quality={"a": 1.0, "b": 0.0, "c": -1.0}, reviewers=["judge"],
            candidates_per_session=2, swap_orders=True, sessions=30, seed=2)


@pytest.mark.parametrize("options, field", [({"bradley_terry": True}, "bradley_terry"),
                                            ({"pairwise": True, "tie_band": -0.1}, "tie_band"),
                                            ({"pairwise": True, "bradley_terry": True, "strong_band": 1.0},
                                             "strong_band"),
                                            ({"pairwise": True, "bradley_terry": True, "tie_band": 0.5,
                                              "davidson_tie": 0.5}, "davidson_tie")])
def test_options_that_mean_nothing_are_refused_naming_the_field(options, field):
    with pytest.raises(SimulationConfigError) as refused:
        SimulationConfig(**BASE, **options)
    assert refused.value.field == field


def test_five_level_verdicts_are_written_in_quarters_and_each_call_sums_to_one():
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(**BASE, pairwise=True, bradley_terry=True, tie_band=0.3, strong_band=1.5,
                                         slot_logit=0.2), out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {line["score_value"] for line in lines} <= {0.0, 0.25, 0.5, 0.75, 1.0}
    assert '"score_value": 0.25,' in out.getvalue() or '"score_value": 0.75,' in out.getvalue()
    for call in range(0, len(lines), 2):
        assert lines[call]["score_value"] + lines[call + 1]["score_value"] == 1.0
    assert truth["bradley_terry"] == {"strengths": {"a": 1.0, "b": 0.0, "c": -1.0}, "slot_logit": 0.2,
                                      "length_logit": 0.0, "tie_band": 0.3, "strong_band": 1.5, "davidson_tie": 0.0}
