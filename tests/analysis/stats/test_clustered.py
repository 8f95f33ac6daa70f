"""Cluster-robust means and the session bootstrap against textbook sandwich formulas and
explicit resampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from council_db.analysis.stats import (
    clustered_mean,
    clustered_mean_from_totals,
    expanded_tail,
    percentile_interval,
    resampled_sums,
    session_weights,
)

nan = np.nan


# --------------------------------------------------------------------------- clustered means


def sandwich_se(design: np.ndarray, y: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """Textbook CR1 sandwich with explicit matrices and a loop over clusters."""
    n, k = design.shape
    bread = np.linalg.inv(design.T @ design)
    beta = bread @ design.T @ y
    resid = y - design @ beta
    meat = np.zeros((k, k))
    groups = np.unique(cluster)
    for g in groups:
        score = design[cluster == g].T @ resid[cluster == g]
        meat += np.outer(score, score)
    g = len(groups)
    v = g / (g - 1) * (n - 1) / (n - k) * bread @ meat @ bread
    return np.sqrt(np.diag(v))


def test_clustered_mean_se_matches_explicit_sandwich():
    rng = np.random.default_rng(1)
    cluster = rng.integers(0, 30, size=400)
    values = rng.standard_normal(30)[cluster] + rng.standard_normal(400)
    est = clustered_mean(values, cluster)
    assert est.estimate == pytest.approx(values.mean())
    assert est.se == pytest.approx(sandwich_se(np.ones((400, 1)), values, cluster)[0])
    g = len(np.unique(cluster))
    assert (est.ci_low, est.ci_high) == pytest.approx(scipy.stats.t.interval(0.95, g - 1, est.estimate, est.se))
    assert est.n_sessions == g


def test_clustered_mean_ci_is_wider_than_naive_when_sessions_move_together():
    rng = np.random.default_rng(2)
    cluster = np.repeat(np.arange(50), 16)
    values = rng.standard_normal(50)[cluster] + 0.5 * rng.standard_normal(800)
    est = clustered_mean(values, cluster)
    naive_se = values.std(ddof=1) / math.sqrt(len(values))
    assert est.ci_high - est.ci_low > 3 * (2 * 1.96 * naive_se)


def test_clustered_mean_handles_bools_labels_and_too_few_clusters():
    share = clustered_mean(np.array([True, False, True, True]), np.array(["a", "a", "b", "b"]))
    assert share.estimate == pytest.approx(0.75) and share.n_sessions == 2
    one = clustered_mean([1.0, 2.0, 3.0], [7, 7, 7])
    assert one.estimate == pytest.approx(2.0) and math.isnan(one.ci_low) and math.isnan(one.p_value)
    empty = clustered_mean([], [])
    assert not empty.computable


def test_clustered_mean_from_totals_equals_records_version():
    rng = np.random.default_rng(4)
    cluster = rng.integers(0, 12, size=100)
    values = rng.normal(3, 1, size=100)
    from_records = clustered_mean(values, cluster, null=3.0)
    totals = np.bincount(cluster, weights=values)
    counts = np.bincount(cluster)
    assert clustered_mean_from_totals(totals, counts, null=3.0) == from_records


def test_session_weights_are_multinomial_counts_in_bounded_blocks():
    blocks = list(session_weights(1000, 25, np.random.default_rng(0), max_cells=10_000))
    assert [len(b) for b in blocks] == [10, 10, 5]  # 10 rows x 1000 sessions per block
    weights = np.vstack(blocks)
    assert weights.shape == (25, 1000) and (weights.sum(axis=1) == 1000).all() and (weights >= 0).all()
    assert weights.mean() == pytest.approx(1.0) and 0.9 < weights.var() < 1.1  # Binomial(S, 1/S)


def test_resampled_sums_are_the_sums_of_resampled_sessions_and_reproducible():
    values = np.random.default_rng(1).standard_normal((50, 3))
    sums = resampled_sums(values, 30, np.random.default_rng(9), max_cells=500)
    weights = np.vstack(list(session_weights(50, 30, np.random.default_rng(9), max_cells=500)))
    expected = np.array([np.repeat(values, w.astype(int), axis=0).sum(axis=0) for w in weights])
    np.testing.assert_allclose(sums, expected)
    np.testing.assert_array_equal(sums, resampled_sums(values, 30, 9, max_cells=500))


def test_percentile_interval_uses_quantiles_and_expands_with_few_sessions():
    samples = np.arange(1001, dtype=float)
    assert percentile_interval(samples, 0.9) == pytest.approx((50.0, 950.0))
    low, high = percentile_interval(samples, 0.95, n_sessions=10)
    assert low < 25 and high > 975
    assert expanded_tail(0.95, 100_000) == pytest.approx(0.025, abs=1e-4)
    assert all(math.isnan(v) for v in percentile_interval(np.array([1.0, nan, nan]), 0.95))


def test_large_integer_labels_such_as_hashes_get_dense_codes_not_one_slot_per_possible_label():
    from council_db.analysis.stats.clustered import cluster_codes

    codes, count = cluster_codes(np.array([2**62, 7, 2**62, 2**40]))
    assert count == 3 and sorted(set(codes.tolist())) == [0, 1, 2] and codes[0] == codes[2]
    estimate = clustered_mean([1.0, 2.0, 3.0, 4.0], [2**62, 7, 2**62, 2**40])
    assert estimate.estimate == 2.5 and estimate.n_sessions == 3
