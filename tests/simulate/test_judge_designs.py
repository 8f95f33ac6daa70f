"""The simulator can write the designs of real judge runs that trouble a time or pairwise
analysis (issue 27): pairwise verdicts (win 1, tie 0.5, loss 0), a late straggler, reviewers
joining late; and, with those options off, exactly the bytes it wrote before."""

from __future__ import annotations

import io
import json
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import pytest

from council_db.simulate import SimulationConfig, SimulationConfigError, write_jsonl
from tests.simulate.test_real_like import output_hash

END = datetime(2025, 1, 1, tzinfo=timezone.utc)
JUDGES = ["judge-a", "judge-b", "judge-c"]


def simulate(**options) -> tuple[list[dict], dict]:
    out = io.StringIO()
    truth = write_jsonl(SimulationConfig(end=END, **options), out)
    return [json.loads(line) for line in out.getvalue().splitlines()], truth


@pytest.mark.parametrize("options", [{}, dict(sessions=50, seed=3, candidates_per_session=2, swap_orders=True)])
def test_with_the_design_options_off_a_seed_writes_the_same_bytes_as_before(options) -> None:
    assert output_hash(**options) == output_hash(**options, pairwise=False, straggler_days=0.0, late_reviewers={})


def test_pairwise_verdicts_give_each_call_a_win_and_a_loss_or_two_ties_on_the_0_1_scale() -> None:
    records, truth = simulate(sessions=40, seed=1, candidates_per_session=2, swap_orders=True, pairwise=True,
                              reviewers=JUDGES, reviewer_offsets={"judge-a": 3.0}, model_quality={"openai/gpt-4o": 2.0})
    assert truth["scale"] == "0-1" and {r["score_scale"] for r in records} == {"0-1"}
    calls = defaultdict(list)
    for number, line in enumerate(records):  # a reviewer's two calls: its first two lines, then its next two
        calls[(line["session_id"], line["reviewer_id"], number // 2)].append(line)
    assert len(calls) == 40 * 3 * 2
    for call in calls.values():
        assert sorted(line["score_value"] for line in call) in ([0.0, 1.0], [0.5, 0.5])
        assert [line["position"] for line in call] == [0, 1] and call[0]["model_id"] != call[1]["model_id"]
    wins = defaultdict(list)  # a reviewer's offset never shows; a better model wins more
    for line in records:
        wins[line["reviewer_id"]].append(line["score_value"])
        wins[line["model_id"]].append(line["score_value"])
    assert all(sum(wins[judge]) / len(wins[judge]) == 0.5 for judge in JUDGES)
    assert sum(wins["openai/gpt-4o"]) / len(wins["openai/gpt-4o"]) > 0.7


def test_pairwise_verdicts_need_two_answers_a_session_and_no_fine_scale_options() -> None:
    with pytest.raises(SimulationConfigError) as error:
        SimulationConfig(pairwise=True)
    assert error.value.field == "pairwise"
    for option in (dict(integer_scale=True), dict(unscored_rate=0.1), dict(anomaly_rate=0.1)):
        with pytest.raises(SimulationConfigError):
            SimulationConfig(pairwise=True, candidates_per_session=2, **option)


def test_a_straggler_is_the_last_session_stamped_days_after_the_rest() -> None:
    records, truth = simulate(sessions=14, seed=2, days=8 / 1440, straggler_days=2.0)
    stamps = list(dict.fromkeys(datetime.fromisoformat(r["timestamp"]) for r in records))
    assert len(stamps) == 14 and truth["straggler_days"] == 2.0
    assert END - timedelta(minutes=8) < stamps[0] and stamps[12] <= END
    assert stamps[13] == END + timedelta(days=2)


def test_a_reviewer_joining_late_scores_nothing_before_its_share_of_the_span() -> None:
    records, truth = simulate(sessions=100, seed=3, days=100, late_reviewers={"openai/gpt-4o": 0.8})
    start = END - timedelta(days=100)
    late = [datetime.fromisoformat(r["timestamp"]) for r in records if r["reviewer_id"] == "openai/gpt-4o"]
    assert len(late) == 20 * 4 and min(late) >= start + timedelta(days=80)
    assert truth["records"] == len(records) == 100 * 12 + 20 * 4
    with pytest.raises(SimulationConfigError) as error:
        SimulationConfig(late_reviewers={"openai/gpt-4o": 1.0})
    assert error.value.field == "late_reviewers"
