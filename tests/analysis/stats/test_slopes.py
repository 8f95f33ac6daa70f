"""Slope contrasts: least squares through the origin, CR1 standard errors from influence
functions, against an explicit sandwich."""

from __future__ import annotations

import math

import numpy as np
import pytest

from council_db.analysis.stats.clustered import clustered_mean
from council_db.analysis.stats.slopes import SlopePart, slope_contrast, slope_contrast_cr2


def test_a_slope_on_ones_is_the_clustered_mean():
    rng = np.random.default_rng(4)
    cluster = rng.integers(0, 30, 200)
    y = rng.normal(size=200) + 0.1 * cluster
    found = slope_contrast([SlopePart(np.ones(200), y, cluster)])
    expected = clustered_mean(y, cluster)
    assert (found.estimate, found.se, found.p_value) == pytest.approx((expected.estimate, expected.se,
                                                                      expected.p_value))


def test_a_difference_of_slopes_on_shared_clusters_has_the_sandwich_variance():
    rng = np.random.default_rng(9)
    c1, c2 = rng.integers(0, 25, 150), rng.integers(0, 25, 120)
    x1, x2 = rng.normal(size=150), rng.normal(size=120)
    y1, y2 = 0.5 * x1 + rng.normal(size=150), 0.2 * x2 + rng.normal(size=120)
    found = slope_contrast([SlopePart(x1, y1, c1), SlopePart(x2, y2, c2, -1.0)])
    b1, b2 = (x1 @ y1) / (x1 @ x1), (x2 @ y2) / (x2 @ x2)
    scores = np.zeros(25)
    np.add.at(scores, c1, x1 * (y1 - b1 * x1) / (x1 @ x1))
    np.add.at(scores, c2, -x2 * (y2 - b2 * x2) / (x2 @ x2))
    assert found.estimate == pytest.approx(b1 - b2)
    assert found.se == pytest.approx(math.sqrt(25 / 24 * (scores @ scores)))
    assert found.n_sessions == 25


def test_no_variation_in_x_or_a_single_cluster_gives_no_estimate():
    assert not slope_contrast([SlopePart(np.zeros(5), np.ones(5), np.arange(5))]).computable
    one = slope_contrast([SlopePart(np.ones(5), np.arange(5.0), np.zeros(5, dtype=int))])
    assert one.estimate == 2.0 and not one.has_interval


def test_a_slope_difference_on_ten_sessions_holds_its_level_with_cr2_where_cr1_does_not():
    """600 null sets of 10 (session, reviewer) rows, as a per-reviewer anchoring test has at
    10 sessions: CR1 on G-1 df rejects ~9% at p <= 0.05, CR2 with Bell-McCaffrey df <= 5%
    (5% of 600 is 30, binomial SD 5.3)."""
    rng = np.random.default_rng(3)
    session = np.arange(10)
    cr1 = cr2 = 0
    for _ in range(600):
        x1, y1, x2, y2 = (rng.standard_normal(10) for _ in range(4))
        old = slope_contrast([SlopePart(x1 - x1.mean(), y1 - y1.mean(), session),
                              SlopePart(x2 - x2.mean(), y2 - y2.mean(), session, -1.0)])
        new = slope_contrast_cr2([SlopePart(x1, y1, session), SlopePart(x2, y2, session, -1.0)])
        assert new.estimate == pytest.approx(old.estimate, abs=1e-12)  # the same slopes
        cr1 += old.p_value <= 0.05
        cr2 += new.p_value <= 0.05
    assert cr2 <= 40 < cr1
