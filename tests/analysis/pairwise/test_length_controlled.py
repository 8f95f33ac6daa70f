"""AlpacaEval's length-controlled win rate: the minimal GLM's prediction at equal length, and
alpaca_eval's warning when it moves far from the raw win rate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_expit

from council_db.analysis.loading.score_data import from_rows
from council_db.analysis.pairwise.games import games_of
from council_db.analysis.pairwise.length_controlled import _far, length_controlled


def _annotations(n: int, length_effect: float, quality: float, seed: int = 0, longer: int = 300):
    """AlpacaEval-like games: the model against the baseline, display slot unknown, one per
    prompt; the model's answers mostly longer; preferences fractional as a weighted annotator's."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for s in range(n):
        base_len = int(rng.integers(200, 1200))
        model_len = max(1, base_len + int(rng.normal(longer, 300)))
        truth.append((base_len, model_len))
        logit = quality + length_effect * np.tanh((model_len - base_len) / 400)
        p = float(np.clip(1 / (1 + np.exp(-logit)) + rng.normal(0, 0.05), 0, 1))
        rows += [(f"i{s}", s, "annotator", "baseline", -1, base_len, 1 - p), (f"i{s}", s, "annotator", "model", -1,
                                                                                 model_len, p)]
    return from_rows(rows, scale="0-1")


def test_the_lc_win_rate_is_the_minimal_glm_at_equal_length():
    data = _annotations(400, length_effect=1.2, quality=0.2, seed=1)
    games = games_of(data)
    found = length_controlled(games, "baseline", n_boot=200)[0]
    model_first = np.array([games.models[m] == "model" for m in games.first])
    preference = np.where(model_first, games.outcome, 1 - games.outcome)
    delta = np.where(model_first, games.chars[:, 1] - games.chars[:, 0], games.chars[:, 0] - games.chars[:, 1])
    feature = np.tanh(delta / delta.std(ddof=1))

    def negative(b):
        eta = b[0] + b[1] * feature
        return -(preference * log_expit(eta) + (1 - preference) * log_expit(-eta)).sum()

    intercept = minimize(negative, np.zeros(2), method="BFGS").x[0]
    assert abs(found.lc.estimate - 100 / (1 + np.exp(-intercept))) < 0.05
    assert abs(found.raw.estimate - 100 * preference.mean()) < 1e-9
    assert found.lc.ci_low < found.lc.estimate < found.lc.ci_high


def test_a_pure_length_preference_is_removed_from_the_lc_win_rate():
    found = length_controlled(games_of(_annotations(600, length_effect=2.0, quality=0.0, seed=2)), "baseline",
                              n_boot=200)[0]
    assert found.raw.estimate > 62 and found.lc.ci_low < 50 < found.lc.ci_high
    assert found.length.ci_high < 0  # the baseline's extra characters cost the model


def test_lc_far_from_the_raw_win_rate_is_flagged_by_alpaca_evals_rule():
    assert _far(20.0, 9.9) and not _far(20.0, 10.1)
    assert _far(50.0, 62.6) and not _far(50.0, 62.4)
    assert _far(90.0, 67.4) and not _far(90.0, 67.6)  # raw - raw/4 is the nearer bound here


ALPACA = Path(__file__).parents[2] / "data" / "alpaca-eval"


@pytest.mark.parametrize("entry", json.loads((ALPACA / "reference.json").read_text())["files"],
                         ids=lambda entry: entry["model"])
def test_real_annotations_give_alpaca_evals_own_figures_within_half_a_point(entry):
    """AlpacaEval 2.0's real annotations (tests/data/alpaca-eval): the raw win rate and the
    length_controlled_minimal GLM as alpaca_eval 0.6.6 fits it without cross-validation
    (its figures in reference.json, made with its own code; on 25 prompts its cross-validated
    L1 zeroes the model's term and says 50 whatever the data)."""
    rows = []
    for i, annotation in enumerate(json.loads((ALPACA / entry["file"]).read_text())):
        share = (1.5 if annotation["preference"] in (0, None) else annotation["preference"]) - 1.0
        rows += [(f"i{i}", i, "annotator", annotation["generator_1"], -1, len(annotation["output_1"]), 1 - share),
                 (f"i{i}", i, "annotator", annotation["generator_2"], -1, len(annotation["output_2"]), share)]
    found, = length_controlled(games_of(from_rows(rows, scale="0-1")), entry["baseline"], n_boot=200)
    assert abs(found.raw.estimate - entry["win_rate"]) < 1e-6
    reference = entry["length_controlled_minimal_n_splits_0"]["length_controlled_winrate"]
    assert abs(found.lc.estimate - reference) < 0.5
    assert found.far_from_raw == (entry["model"] == "Mixtral-8x7B-Instruct-v0.1_concise")  # alpaca_eval warns there
