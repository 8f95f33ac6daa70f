"""stats/order_statistics gives np.median's and np.quantile's (linear) floats to the bit,
without numpy.ma: the report's medians and bootstrap percentile intervals are unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest

from council_db.analysis.stats.order_statistics import linear_quantiles, median


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 999, 1000, 4000])
def test_median_and_linear_quantiles_are_numpys_to_the_bit(n):
    rng = np.random.default_rng(n)
    levels = np.array([0.0, 0.025, 0.5, 0.975, 1.0, 0.1, 0.9, 0.3333])
    for _ in range(20):
        values = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6)
        tied = np.round(values, 1)  # repeated values
        for sample in (values, tied):
            assert np.array_equal(linear_quantiles(sample, levels), np.quantile(sample, levels))
            assert median(sample) == np.median(sample)
        counts = rng.integers(0, 9, n)  # integers: an even count's mean of the middle two
        assert median(counts) == np.median(counts)


def test_overwriting_partitions_the_input_and_gives_the_same_numbers():
    """A million sessions' statistics are partitioned in place, as np.median(overwrite_input)."""
    values = np.random.default_rng(1).exponential(size=10_001)
    expected_median, expected = np.median(values), np.quantile(values, [0.9])
    work = values.copy()
    assert median(work, overwrite=True) == expected_median
    assert np.array_equal(linear_quantiles(work, np.array([0.9]), overwrite=True), expected)
    assert sorted(work) == sorted(values)  # the same values, reordered


def test_a_nan_makes_the_median_nan_as_numpys():
    assert math.isnan(median(np.array([1.0, math.nan, 2.0])))
