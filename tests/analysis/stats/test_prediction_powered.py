"""Prediction-powered means: PPI's and PPI++'s formulas, and intervals that hold their level."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.stats.clustered import clustered_mean
from council_db.analysis.stats.prediction_powered import prediction_powered_mean


def _units(rng: np.random.Generator, n: int, bias: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Labels around 5 and a judge's predictions that follow them, off by ``bias`` on average."""
    y = rng.normal(5.0, 1.5, n)
    return y, 0.7 * y + 1.5 + bias + rng.normal(0.0, 0.6, n)


def test_tuned_lambda_is_ppi_plus_plus_closed_form_when_each_cluster_is_one_unit():
    rng = np.random.default_rng(0)
    y, f = _units(rng, 300)
    n, big_n = 40, 260
    found = prediction_powered_mean(y[:n], f[:n], np.arange(n), f[n:], np.arange(big_n))
    cov = np.cov(y[:n], f[:n])[0, 1]
    expected = cov / n / (np.var(f[:n], ddof=1) / n + np.var(f[n:], ddof=1) / big_n)
    assert found.lam == pytest.approx(expected)
    assert found.estimate.estimate == pytest.approx(y[:n].mean() + expected * (f[n:].mean() - f[:n].mean()))


def test_lambda_one_is_plain_ppi_the_labels_mean_error_removed_from_the_predictions_mean():
    rng = np.random.default_rng(1)
    y, f = _units(rng, 200)
    found = prediction_powered_mean(y[:30], f[:30], np.arange(30), f[30:], np.arange(170), lam=1.0)
    assert found.estimate.estimate == pytest.approx(f[30:].mean() + (y[:30] - f[:30]).mean())
    se = np.sqrt(np.var(y[:30] - f[:30], ddof=1) / 30 + np.var(f[30:], ddof=1) / 170)
    assert found.estimate.se == pytest.approx(se)


def test_without_unlabelled_sessions_it_is_the_labelled_mean_and_its_clustered_interval():
    rng = np.random.default_rng(2)
    y, f = _units(rng, 60)
    cluster = np.repeat(np.arange(20), 3)
    found = prediction_powered_mean(y, f, cluster, np.zeros(0), np.zeros(0, dtype=np.int64))
    plain = clustered_mean(y, cluster)
    assert found.lam == 0.0 and found.unlabelled_clusters == 0
    assert (found.estimate.estimate, found.estimate.ci_low, found.estimate.ci_high) == \
        pytest.approx((plain.estimate, plain.ci_low, plain.ci_high))


def test_one_labelled_cluster_gives_an_estimate_without_an_interval():
    found = prediction_powered_mean([4.0, 6.0], [5.0, 5.0], [0, 0], [5.0, 6.0, 7.0], [1, 2, 3])
    assert found.estimate.estimate == pytest.approx(5.0)
    assert not found.estimate.has_interval


def test_intervals_cover_the_label_mean_near_their_level_and_are_narrower_than_the_labelled_mean_alone():
    """300 data sets of 30 labelled and 600 unlabelled sessions of 3 units each sharing a
    session effect, the judge 1 point too generous: the interval is clustered, so it holds."""
    rng = np.random.default_rng(3)
    covered, narrower, sets = 0, 0, 300
    for _ in range(sets):
        sessions = 630
        shared = np.repeat(rng.normal(0.0, 1.0, sessions), 3)
        y = 5.0 + shared + rng.normal(0.0, 1.0, 3 * sessions)
        f = y + 1.0 + rng.normal(0.0, 0.7, 3 * sessions)
        cluster = np.repeat(np.arange(sessions), 3)
        labelled = cluster < 30
        found = prediction_powered_mean(y[labelled], f[labelled], cluster[labelled], f[~labelled],
                                        cluster[~labelled])
        alone = clustered_mean(y[labelled], cluster[labelled])
        covered += found.estimate.covers(5.0)
        narrower += (found.estimate.ci_high - found.estimate.ci_low) < (alone.ci_high - alone.ci_low)
    assert 0.91 <= covered / sets <= 0.98
    assert narrower / sets >= 0.95


def test_labels_all_alike_with_nothing_else_varying_give_no_interval_rather_than_one_of_width_zero():
    found = prediction_powered_mean([1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [0, 1, 2], [0.5, 0.5], [3, 4])
    assert found.estimate.estimate == 1.0 and not found.estimate.has_interval


def test_a_tuned_lambda_costs_the_labelled_part_a_degree_of_freedom_as_a_fitted_slope_does():
    """With lambda tuned, the labelled residuals are a regression's: their variance over n - 2
    (without it PPI's win-rate intervals on ~15 labelled sessions covered 92.4%, bench_ppi)."""
    rng = np.random.default_rng(4)
    y, f = _units(rng, 120)
    n = 12
    found = prediction_powered_mean(y[:n], f[:n], np.arange(n), f[n:], np.arange(108))
    residual = (y[:n] - y[:n].mean()) - found.lam * (f[:n] - f[:n].mean())
    labelled_part = (residual @ residual) / (n - 2) / n
    assert found.estimate.se == pytest.approx(np.sqrt(labelled_part + found.lam**2 * np.var(f[n:], ddof=1) / 108))
