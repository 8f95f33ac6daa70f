"""Human raters and gold labels in the simulator (issue 28): written as ordinary lines with
their kind, a configurable number of humans per session, gold verdicts that are the truth,
and the agreement a config plants computed from it."""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from datetime import datetime, timezone

import numpy as np
import pytest
from typer.testing import CliRunner

from council_db.cli.app import app
from council_db.simulate import SimulationConfig, SimulationConfigError, write_jsonl
from council_db.simulate.implied import implied_agreement
from tests.conftest import simulated

PAIRWISE = dict(models=["a", "b", "c"], reviewers=["judge"], candidates_per_session=2, answer_sd=1.0)


def test_humans_and_the_gold_label_write_lines_with_their_kind_and_judges_none():
    records, truth = simulated(sessions=30, seed=1, humans=["ann", "bob"], gold="key", **PAIRWISE)
    kinds = {(r["reviewer_id"], r.get("reviewer_kind")) for r in records}
    assert kinds == {("judge", None), ("ann", "human"), ("bob", "human"), ("key", "gold")}
    assert truth["reviewer_kinds"] == {"ann": "human", "bob": "human", "key": "gold"}
    assert truth["records"] == len(records) == 30 * 4 * 2


def test_each_rated_session_gets_the_configured_number_of_humans_and_a_share_of_sessions_gets_none():
    records, _ = simulated(sessions=400, seed=2, humans=["h1", "h2", "h3", "h4", "h5"], humans_per_session=3,
                           reference_share=0.25, **PAIRWISE)
    humans = defaultdict(set)
    sessions = {r["session_id"] for r in records}
    for r in records:
        if r.get("reviewer_kind") == "human":
            humans[r["session_id"]].add(r["reviewer_id"])
    assert {len(h) for h in humans.values()} == {3}
    assert len(humans) / len(sessions) == pytest.approx(0.25, abs=0.06)
    assert len(Counter(h for group in humans.values() for h in group)) == 5  # drawn anew per session


def test_the_gold_label_scores_each_answer_by_its_quality_alone():
    records, truth = simulated(sessions=300, seed=3, gold="key", model_quality={"a": 2.0, "b": 0.0, "c": -2.0},
                               position_effects=[1.0], verbosity=1.0, noise_sd=2.0, models=["a", "b", "c"],
                               reviewers=["judge"], candidates_per_session=2)
    gold = defaultdict(dict)
    for r in records:
        if r["reviewer_id"] == "key":
            gold[r["session_id"]][r["model_id"]] = r["score_value"]
    assert truth["reviewer_noise_sd"]["key"] == 0.0 and truth["reviewer_verbosity"]["key"] == 0.0
    for scores in gold.values():
        assert {scores[m] for m in scores} <= {8.5, 6.5, 4.5}  # base 6.5 + quality: no slot, length or noise


def test_a_human_takes_its_own_noise_and_verbosity():
    _, truth = simulated(sessions=5, seed=4, humans=["ann"], reviewer_noise_sd={"ann": 0.3},
                         reviewer_verbosity={"ann": 0.5}, **PAIRWISE)
    assert truth["reviewer_noise_sd"] == {"judge": 1.0, "ann": 0.3}
    assert truth["reviewer_verbosity"] == {"judge": 0.0, "ann": 0.5}


@pytest.mark.parametrize("settings, field", [
    (dict(humans=["a"]), "humans"),
    (dict(gold="b"), "gold"),
    (dict(humans=["h1"], humans_per_session=2), "humans_per_session"),
    (dict(gold="key", reviewer_offsets={"key": 1.0}), "gold"),
    (dict(humans=["h1"], reviewer_noise_sd={"h1": -1.0}), "reviewer_noise_sd"),
    (dict(reference_share=1.5), "reference_share"),
    (dict(answer_sd=-0.1), "answer_sd"),
])
def test_reference_settings_that_cannot_mean_what_they_say_are_refused(settings, field):
    with pytest.raises(SimulationConfigError) as error:
        SimulationConfig(models=["a", "b"], **settings)
    assert error.value.field == field


def test_a_judge_planted_like_the_humans_agrees_with_them_as_they_agree_with_each_other():
    config = SimulationConfig(sessions=10, seed=5, humans=["h1", "h2", "h3"], gold="key", **PAIRWISE)
    implied = implied_agreement(config, sessions=40_000)
    judge, ceiling = implied["judges"]["judge"], implied["ceiling"]
    assert judge["raters"]["agreement"] == pytest.approx(ceiling["agreement"], abs=0.01)
    assert judge["reference"]["agreement"] > judge["raters"]["agreement"]  # a majority of three is less noisy
    assert 0 < judge["reference"]["kappa"] < judge["reference"]["kappa_without_ties"] < 1


def test_a_noisier_judge_implies_less_agreement_and_implied_agreement_needs_two_candidates():
    base = dict(sessions=10, seed=5, humans=["h1", "h2", "h3"], **PAIRWISE)
    quiet = implied_agreement(SimulationConfig(**base), sessions=20_000)["judges"]["judge"]["reference"]
    noisy = implied_agreement(SimulationConfig(**base, reviewer_noise_sd={"judge": 3.0}),
                              sessions=20_000)["judges"]["judge"]["reference"]
    assert noisy["agreement"] < quiet["agreement"] - 0.05
    with pytest.raises(SimulationConfigError):
        implied_agreement(SimulationConfig(models=["a", "b", "c"], humans=["h"]), sessions=10)


def test_configs_without_reference_raters_keep_their_bytes():
    records, truth = simulated(sessions=3, seed=6)
    assert all("reviewer_kind" not in r for r in records) and truth["reviewer_kinds"] == {}
    assert np.isfinite(truth["answer_sd"])


def test_the_cli_options_plant_human_raters_and_gold_labels_as_the_config_does(tmp_path) -> None:
    end = datetime(2025, 3, 1, tzinfo=timezone.utc)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, [
        "simulate", "-o", str(out), "--end", end.isoformat(), "--sessions", "40", "--candidates-per-session", "2",
        "--humans", "ann,bob,cy", "--humans-per-session", "2", "--gold", "key", "--reference-share", "0.5",
        "--answer-sd", "1", "--reviewer-noise", "ann=0.5,openai/gpt-4o=2"])
    assert result.exit_code == 0, result.output
    expected = io.BytesIO()
    write_jsonl(SimulationConfig(sessions=40, end=end, candidates_per_session=2, humans=["ann", "bob", "cy"],
                                 humans_per_session=2, gold="key", reference_share=0.5, answer_sd=1.0,
                                 reviewer_noise_sd={"ann": 0.5, "openai/gpt-4o": 2.0}), expected)
    assert out.read_bytes() == expected.getvalue()
    kinds = {(line["reviewer_id"], line.get("reviewer_kind")) for line in map(json.loads, out.read_text().splitlines())}
    assert {("ann", "human"), ("key", "gold")} <= kinds


def test_a_bad_reference_option_exits_2_naming_the_option(tmp_path) -> None:
    result = CliRunner().invoke(app, ["simulate", "-o", str(tmp_path / "out.jsonl"), "--humans", "ann",
                                      "--humans-per-session", "3"])
    assert result.exit_code == 2 and "--humans-per-session" in result.output
