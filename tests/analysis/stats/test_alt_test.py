"""The alternative annotator test against the authors' own procedure (Calderon, Reichart &
Dror 2025, github.com/nitaytech/AltTest ``alt_test``), restated here from its published
description with scipy's one-sample t-test, on random labels of both kinds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ttest_1samp

from council_db.analysis.stats.alt_test import ACCURACY, NEG_RMSE, alt_test
from council_db.analysis.stats.inference import benjamini_yekutieli


def authors_alt_test(humans: dict[int, dict[int, float]], llm: dict[int, float], metric: str, epsilon: float,
                     min_humans: int, min_instances: int) -> tuple[float, float, list[float]]:
    """(winning rate, advantage probability, p per tested human) as the authors compute them."""
    def score(pred, labels):
        if metric == ACCURACY:
            return float(np.mean([pred == a for a in labels]))
        return -float(np.sqrt(np.mean([(pred - a) ** 2 for a in labels])))

    raters_of: dict[int, list[int]] = {}
    for h, labels in humans.items():
        for i in labels:
            raters_of.setdefault(i, []).append(h)
    keep = {i for i, hs in raters_of.items() if len(hs) >= min_humans and i in llm}
    p_values, advantages = [], []
    for h, labels in humans.items():
        instances = [i for i in labels if i in keep]
        if len(instances) < min_instances:
            continue
        llm_wins, human_wins = [], []
        for i in instances:
            others = [humans[o][i] for o in raters_of[i] if o != h]
            s_h, s_f = score(labels[i], others), score(llm[i], others)
            llm_wins.append(s_f >= s_h)
            human_wins.append(s_h >= s_f)
        p_values.append(ttest_1samp(np.array(human_wins, float) - np.array(llm_wins, float), epsilon,
                                    alternative="less").pvalue)
        advantages.append(float(np.mean(llm_wins)))
    rejected = benjamini_yekutieli(p_values) <= 0.05
    return float(rejected.mean()), float(np.mean(advantages)), p_values


@pytest.mark.parametrize("metric", [ACCURACY, NEG_RMSE])
def test_the_test_matches_the_authors_procedure(metric):
    rng = np.random.default_rng(11 if metric == ACCURACY else 12)
    n, raters = 60, 5
    truth = rng.integers(0, 3, n) if metric == ACCURACY else rng.normal(5, 2, n)
    humans: dict[int, dict[int, float]] = {}
    for h in range(raters):
        rated = rng.random(n) < 0.8
        if metric == ACCURACY:
            values = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 3, n))
        else:
            values = np.round(truth + rng.normal(0, 1 + h / 2, n))
        humans[h] = {i: float(values[i]) for i in np.flatnonzero(rated).tolist()}
    judge = np.where(rng.random(n) < 0.75, truth, rng.integers(0, 3, n)) if metric == ACCURACY \
        else np.round(truth + rng.normal(0, 1, n))
    expected_rate, expected_advantage, expected_p = authors_alt_test(
        humans, dict(enumerate(judge.tolist())), metric, 0.1, 3, 30)
    instance = np.array([i for h in humans for i in humans[h]])
    rater = np.array([h for h in humans for _ in humans[h]])
    value = np.array([v for h in humans for v in humans[h].values()])
    found = alt_test(instance, rater, value, judge.astype(float), metric=metric, epsilon=0.1, min_raters=3,
                     min_instances=30)
    assert [c.p_value for c in found.comparisons] == pytest.approx(expected_p, rel=1e-6)
    assert found.winning_rate == pytest.approx(expected_rate)
    assert found.advantage_probability == pytest.approx(expected_advantage)
    assert found.passed == (expected_rate >= 0.5)


def test_a_judge_that_copies_the_majority_wins_and_a_random_one_loses():
    rng = np.random.default_rng(5)
    n, raters = 80, 4
    truth = rng.integers(0, 2, n)
    values = np.where(rng.random((raters, n)) < 0.8, truth, 1 - truth)
    instance, rater = np.tile(np.arange(n), raters), np.repeat(np.arange(raters), n)
    copying = alt_test(instance, rater, values.ravel().astype(float), truth.astype(float), epsilon=0.1)
    guessing = alt_test(instance, rater, values.ravel().astype(float), rng.integers(0, 2, n).astype(float),
                        epsilon=0.1)
    assert copying.passed and copying.winning_rate == 1.0
    assert guessing.passed is False and guessing.winning_rate == 0.0


def test_humans_with_too_few_instances_are_skipped_and_counted():
    instance = np.array([0, 0, 0, 1, 1, 1])
    found = alt_test(instance, np.array([0, 1, 2, 0, 1, 2]), np.zeros(6), np.zeros(2))
    assert found.comparisons == [] and found.skipped == 3 and found.passed is None


def test_clustered_instances_widen_the_test_and_singletons_leave_it_as_the_authors():
    rng = np.random.default_rng(2)
    n = 60
    truth = rng.integers(0, 3, n)
    values = np.where(rng.random((3, n)) < 0.7, truth, rng.integers(0, 3, (3, n)))
    instance, rater = np.tile(np.arange(n), 3), np.repeat(np.arange(3), n)
    args = (instance, rater, values.ravel().astype(float), truth.astype(float))
    alone = alt_test(*args, epsilon=0.1)
    singletons = alt_test(*args, epsilon=0.1, cluster=np.arange(n) * 7)
    assert [c.p_value for c in alone.comparisons] == pytest.approx([c.p_value for c in singletons.comparisons])
    paired = alt_test(*args, epsilon=0.1, cluster=np.arange(n) // 2)
    assert all(c.clusters == n // 2 for c in paired.comparisons)


def test_benjamini_yekutieli_rejects_what_the_authors_step_up_rejects():
    rng = np.random.default_rng(0)
    for _ in range(500):
        p = rng.random(rng.integers(1, 9)) ** 3
        m = len(p)
        thresholds = np.arange(1, m + 1) / m * 0.05 / np.sum(1.0 / np.arange(1, m + 1))
        passing = np.flatnonzero(np.sort(p) <= thresholds)
        expected = set(np.argsort(p)[: passing[-1] + 1].tolist()) if len(passing) else set()
        assert set(np.flatnonzero(benjamini_yekutieli(p) <= 0.05).tolist()) == expected
