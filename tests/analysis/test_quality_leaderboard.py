"""The leaderboard agrees with the bias report (issue 15, defect 10): by default it ranks
candidates by the joint model's quality, with severity, display slot, self-preference and
answer length removed, says what each method removes, and warns when a ranking follows length."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import pytest

from tests.conftest import Cli, simulated, write_jsonl

# The demo's planted biases (scripts/demo.sh): every model's true quality is equal.
DEMO = dict(sessions=300, seed=7, reviewer_offsets={"openai/gpt-4o": -0.8, "anthropic/claude-3-5-sonnet": 0.6},
            position_effects=[0.4, 0, 0, -0.2], self_preference=0.5, verbosity=0.3, unscored_rate=0.01)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Cli, list[str]]:
    """The demo's database, and its models longest answers first (from the raw records)."""
    records, _ = simulated(**DEMO)
    folder = tmp_path_factory.mktemp("demo")
    cli = Cli(folder / "council.db")
    assert cli("import", "-q", str(write_jsonl(folder / "demo.jsonl", records))).exit_code == 0
    lengths = defaultdict(list)
    for record in records:
        lengths[record["model_id"]].append(math.log1p(record["response_length_chars"]))
    by_length = sorted(lengths, key=lambda model: -sum(lengths[model]) / len(lengths[model]))
    return cli, by_length


def board(cli: Cli, *args: str) -> tuple[dict, str]:
    result = cli("leaderboard", "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_bias_adjusted_ranks_the_demos_equal_models_by_answer_length_and_says_so(demo):
    cli, by_length = demo
    adjusted, stderr = board(cli, "--method", "bias-adjusted")
    assert [m["model"] for m in adjusted["models"]] == by_length
    assert "reviewer severity" in adjusted["removes"] and "answer length stay" in adjusted["removes"]
    assert "follows answer length" in stderr and "--method quality" in stderr


def test_the_default_leaderboard_is_the_reports_candidate_quality_and_no_rank_is_certain(demo):
    cli, _ = demo
    quality, stderr = board(cli)
    assert quality["method"] == "quality"
    assert all(word in quality["removes"] for word in ("severity", "slot", "self-preference", "length"))
    report = json.loads(cli("bias-report", "--format", "json").stdout)
    reported = {m["model_id"]: m["quality"] for m in report["models"]}
    intervals = []
    for entry in quality["models"]:
        score, same = entry["score"], reported[entry["model"]]
        assert (score["estimate"], score["ci_low"], score["ci_high"]) == pytest.approx(
            (same["estimate"], same["ci_low"], same["ci_high"]))
        assert entry["rank_ci_low"] < entry["rank_ci_high"]  # no candidate's rank is certain
        intervals.append((entry["rank_ci_low"], entry["rank_ci_high"]))
    assert all(low <= other_high and other_low <= high
               for low, high in intervals for other_low, other_high in intervals)
    assert "follows answer length" not in stderr


def test_the_table_says_what_the_method_removes(demo):
    cli, _ = demo
    table = cli("leaderboard", "--method", "mean")
    assert table.exit_code == 0 and "removes: nothing" in table.stderr


def test_quality_rank_intervals_hold_each_models_planted_rank_and_separate_distant_ones():
    from council_db.analysis.aggregation.quality import quality_standings
    from council_db.analysis.joint import joint_model
    from council_db.analysis.loading.score_data import from_records
    from tests.analysis.test_aggregation import MODELS, unbalanced

    config = unbalanced(seed=11, sessions=300)
    records, _ = simulated(**vars(config))
    data = from_records(records)
    standings = quality_standings(data, joint_model.fit(data))
    for standing in standings:
        planted_rank = MODELS.index(standing.model) + 1
        assert standing.rank_low <= planted_rank <= standing.rank_high, standing
    assert standings[0].rank_high < standings[-1].rank_low  # 1.5 points apart: told apart
