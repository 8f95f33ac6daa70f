"""stats/chi2_batches: the anomaly yardsticks' chi-square tails, evaluated a group of equal
degrees of freedom at a time, are distributions.chi2_cdf and chi2_sf's values (the p-values
anomalies gave before, to 1e-12 relative over the degrees of freedom and statistics a session
test meets, 1e-13 in the bulk; scipy's to 1e-10), with their edges; one log Gamma per
distinct df. Where the two differ by 1e-13 (tails below 1e-50) each is as far from scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from council_db.analysis.stats import chi2_batches
from council_db.analysis.stats.chi2_batches import chi2_tail
from council_db.analysis.stats.distributions import chi2_cdf, chi2_sf

TAILS = [(True, chi2_cdf, special.chdtr), (False, chi2_sf, special.chdtrc)]


def relative_gap(mine: np.ndarray, reference: np.ndarray) -> float:
    """The largest relative difference where the reference is above underflow."""
    big = reference > 1e-300
    assert np.all(mine[~big] <= 1e-297)
    return float(np.max(np.abs(mine[big] - reference[big]) / reference[big]))


@pytest.mark.parametrize(("lower", "elementwise", "scipys"), TAILS, ids=["lower", "upper"])
def test_the_batched_tails_are_the_elementwise_ones_over_df_and_x(lower, elementwise, scipys):
    # df from a pairwise session's fraction of a degree to a wide council's hundreds; x from
    # 1e-3 to 1e3 times df (the tails down to underflow), x = df + 2 (the series' slowest)
    df, ratio = np.meshgrid(np.geomspace(0.3, 600.0, 37), np.r_[np.geomspace(1e-3, 1e3, 73), 1.0])
    x = np.r_[(df * ratio).ravel(), df[0] + 2.0]
    df = np.r_[df.ravel(), df[0]]
    mine, before = chi2_tail(x, df, lower), elementwise(x, df)
    assert relative_gap(mine, before) <= 1e-12
    assert np.max(np.abs(mine - before)) <= 1e-14  # as p-values: a few units of the last place
    assert relative_gap(mine, scipys(df, x)) <= 1e-10


@pytest.mark.parametrize(("lower", "elementwise", "scipys"), TAILS, ids=["lower", "upper"])
def test_a_window_of_sessions_mostly_of_one_shape_gets_the_elementwise_tails(lower, elementwise, scipys):
    rng = np.random.default_rng(32)
    n = 150_000  # three blocks of the common shape, and a few sessions of other shapes
    df = np.where(rng.random(n) < 0.98, 3.75, rng.choice([1.875, 2.8125, 5.625, 11.25], n))
    x = rng.chisquare(df) * rng.choice([0.3, 1.0, 3.0], n)
    assert relative_gap(chi2_tail(x, df, lower), elementwise(x, df)) <= 1e-13  # the bulk


def test_one_log_gamma_per_distinct_df(monkeypatch):
    calls = []
    real = chi2_batches.gamma_tails
    monkeypatch.setattr(chi2_batches, "gamma_tails", lambda a, x: calls.append(a) or real(a, x))
    df = np.resize([3.75, 3.75, 3.75, 12.0], 100_000)
    chi2_tail(np.linspace(0.01, 40.0, 100_000), df, lower=False)
    blocks = math.ceil(100_000 / chi2_batches.BLOCK)
    assert sorted(calls) == [1.875] * blocks + [6.0] * blocks  # one a group a block, not one a statistic


@pytest.mark.parametrize(("lower", "elementwise", "scipys"), TAILS, ids=["lower", "upper"])
def test_the_edges_are_the_distributions(lower, elementwise, scipys):
    x = np.array([0.0, 1.0, -1.0, np.inf, np.nan, 1.0, 1.0, 1e-320, 2.0])
    df = np.array([3.0, 0.0, 3.0, 3.0, 3.0, np.nan, np.inf, 3.0, 3.0])
    np.testing.assert_array_equal(chi2_tail(x, df, lower), elementwise(x, df))
    assert chi2_tail(np.zeros(0), np.zeros(0), lower).shape == (0,)
