"""stats.inference, tiers and the Estimate shape against scipy, hand examples and ADR-018."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from council_db.analysis.stats import (
    Estimate,
    benjamini_hochberg,
    confidence_tier,
    correlation_p_value,
    t_interval,
    t_p_value,
)

nan = np.nan


# --------------------------------------------------------------------------- tiers, t, BH


@pytest.mark.parametrize("sessions, tier", [(0, "insufficient"), (9, "insufficient"), (10, "preliminary"),
                                            (19, "preliminary"), (20, "moderate"), (49, "moderate"),
                                            (50, "high"), (100_000, "high")])
def test_confidence_tier_boundaries_follow_adr_018(sessions, tier):
    assert confidence_tier(sessions) == tier


def test_per_session_p_value_uses_t_so_r_08_at_n_5_is_about_010_not_002():
    p = float(correlation_p_value(0.8, 5))
    assert p == pytest.approx(0.1041, abs=5e-4)
    # the reference: scipy's own test of a Pearson r on points with exactly r = 0.8
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    noise = np.array([1.0, -2.0, 0.0, 2.0, -1.0])  # orthogonal to x and to the constant
    y = 0.8 * x / np.linalg.norm(x) + 0.6 * noise / np.linalg.norm(noise)
    result = scipy.stats.pearsonr(x, y)
    assert result.statistic == pytest.approx(0.8)
    assert p == pytest.approx(result.pvalue)
    t = 0.8 * math.sqrt(3 / (1 - 0.8**2))
    assert 2 * scipy.stats.norm.sf(t) == pytest.approx(0.021, abs=1e-3)  # the same t read as normal: wrong


def test_correlation_p_value_edge_cases_are_nan_or_zero():
    p = correlation_p_value(np.array([0.5, 1.0, -1.0, nan, 0.0]), np.array([2, 4, 4, 5, 5]))
    assert math.isnan(p[0]) and p[1] == 0 and p[2] == 0 and math.isnan(p[3]) and p[4] == pytest.approx(1.0)


def test_t_p_value_and_interval_match_scipy():
    assert t_p_value(2.3, 7) == pytest.approx(2 * scipy.stats.t.sf(2.3, 7))
    assert t_p_value(-2.3, 7) == pytest.approx(t_p_value(2.3, 7))
    assert math.isnan(t_p_value(1.0, 0))
    low, high = t_interval(1.5, 0.4, 12, 0.9)
    ref = scipy.stats.t.interval(0.9, 12, loc=1.5, scale=0.4)
    assert (low, high) == pytest.approx(ref)
    assert all(math.isnan(v) for v in t_interval(1.0, 0.5, 0))


def test_benjamini_hochberg_hand_example_with_nan():
    # sorted: 0.005, 0.01, 0.03, 0.04 (m = 4, the NaN does not count)
    # p * m / rank: 0.02, 0.02, 0.04, 0.04 -> already monotone
    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.005, nan])
    np.testing.assert_allclose(q[:4], [0.02, 0.04, 0.04, 0.02])
    assert math.isnan(q[4])


def test_benjamini_hochberg_takes_running_minimum_and_caps_at_one():
    # sorted p*m/rank: 0.01*3/1 = 0.03, 0.04*3/2 = 0.06, 0.045*3/3 = 0.045 -> q = 0.03, 0.045, 0.045
    np.testing.assert_allclose(benjamini_hochberg([0.045, 0.01, 0.04]), [0.045, 0.03, 0.045])
    np.testing.assert_allclose(benjamini_hochberg([0.9, 1.0, 0.95]), [1.0, 1.0, 1.0])
    assert len(benjamini_hochberg([])) == 0


def test_benjamini_hochberg_matches_scipy_false_discovery_control():
    p = np.random.default_rng(3).uniform(size=40) ** 3
    np.testing.assert_allclose(benjamini_hochberg(p), scipy.stats.false_discovery_control(p))



def test_estimate_missing_values_follow_one_rule():
    e = Estimate.missing("x", 3)
    assert not e.computable and not e.has_interval and not e.covers(0.0) and math.isnan(e.se)
    assert Estimate(0.2, 0.1, 0.3).covers(0.1) and Estimate(0.2, 0.1, 0.3).se is None


def test_t_intervals_over_arrays_are_t_interval_of_each_element():
    from council_db.analysis.stats.inference import t_intervals

    estimates = np.array([0.3, -1.2, 2.0, nan, 0.5, 0.1, 4.0])
    ses = np.array([0.1, 0.7, math.inf, 0.2, 0.3, 0.05, 1e-8])
    dfs = np.array([3.7, 1.0, 10.0, 5.0, 0.0, 2.5e6, 41.3])
    lows, highs = t_intervals(estimates, ses, dfs)
    for i, (estimate, se, df) in enumerate(zip(estimates, ses, dfs)):
        low, high = t_interval(float(estimate), float(se), float(df))
        np.testing.assert_allclose([lows[i], highs[i]], [low, high], rtol=1e-12, equal_nan=True)
