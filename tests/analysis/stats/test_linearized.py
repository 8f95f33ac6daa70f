"""The delta-method interval of a function of per-cluster sums: the CR1 mean when the function
is a mean, and an interval that covers a kappa at the nominal rate."""

from __future__ import annotations

import numpy as np
import pytest

from council_db.analysis.stats.clustered import clustered_mean
from council_db.analysis.stats.linearized import linearized_estimate
from council_db.analysis.stats.verdict_tables import cluster_tables, cohen_kappa


def test_a_ratio_of_sums_gets_the_cr1_standard_error_of_a_clustered_mean():
    rng = np.random.default_rng(1)
    cluster = rng.integers(0, 40, 300)
    values = rng.normal(size=300) + cluster * 0.05
    parts = np.stack([np.bincount(cluster, weights=values), np.bincount(cluster)], axis=1).astype(float)
    found = linearized_estimate(parts, lambda t: t[:, 0] / t[:, 1])
    expected = clustered_mean(values, cluster)
    assert found.estimate == pytest.approx(expected.estimate)
    assert found.se == pytest.approx(expected.se, rel=1e-5)
    assert (found.ci_low, found.ci_high) == pytest.approx((expected.ci_low, expected.ci_high), rel=1e-5)


def test_the_interval_is_kept_inside_the_statistics_range():
    parts = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 1.0]])
    found = linearized_estimate(parts, lambda t: t[:, 0] / t[:, 1], bounds=(0.0, 1.0))
    assert 0.0 <= found.ci_low and found.ci_high <= 1.0


def test_kappa_intervals_cover_the_true_kappa_of_clustered_verdicts():
    """Two raters agree with a known chance per verdict; sessions hold three pairs sharing a
    session effect. 200 data sets of 80 sessions: coverage within Monte-Carlo error of 95%."""
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 3, (400_000,))
    copy = np.where(rng.random(400_000) < 0.6, truth, rng.integers(0, 3, 400_000))
    true_kappa = cohen_kappa(cluster_tables(np.zeros(400_000, dtype=np.int64), truth, copy, np.ones(400_000), 1))[0]
    covered = 0
    for _ in range(200):
        session = np.repeat(np.arange(80), 3)
        shared = rng.integers(0, 3, 80)[session]  # a session's pairs lean one way together
        first = np.where(rng.random(240) < 0.5, shared, rng.integers(0, 3, 240))
        second = np.where(rng.random(240) < 0.6, first, rng.integers(0, 3, 240))
        found = linearized_estimate(cluster_tables(session, first, second, np.ones(240), 80), cohen_kappa)
        covered += found.covers(true_kappa)
    assert covered >= 180  # 90%: P(<= 179 of 200 | 95%) < 0.3%


def test_a_share_of_independent_units_gets_wilsons_interval_and_a_share_of_one_an_interval_below_one():
    from council_db.analysis.stats.inference import t_quantile
    from council_db.analysis.stats.linearized import effective_wilson

    hits = np.r_[np.ones(36), np.zeros(4)]
    parts = np.stack([hits, np.ones(40)], axis=1)
    found = effective_wilson(linearized_estimate(parts, lambda t: t[:, 0] / t[:, 1]), 40)
    z, p, n = t_quantile(0.95, 39), 0.9, 39  # CR1's G/(G-1): p(1-p)/SE^2 is G-1 for independent units
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (found.ci_low, found.ci_high) == pytest.approx((centre - half, centre + half), rel=1e-6)
    perfect = effective_wilson(linearized_estimate(np.stack([np.ones(40), np.ones(40)], axis=1),
                                                   lambda t: t[:, 0] / t[:, 1]), 40)
    assert perfect.estimate == 1.0 and 0.85 < perfect.ci_low < 0.95 and perfect.ci_high == 1.0
