"""stats/effective_df: a few yardsticks' bisections, replayed from a bracketed root, take
the same 34 decisions, and so give the same k to the bit, as the scalar bisection that
evaluated the ratio at every midpoint, in a third of the chi-square quantiles."""

from __future__ import annotations

import math

import numpy as np

from council_db.analysis.stats import effective_df as module
from council_db.analysis.stats.distributions import chi2_isf


def bisected_at_every_step(q: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """The yardstick's k as the scalar bisection found it before: both quantiles at every midpoint."""
    low, high = np.full(len(q), math.log(0.2)), np.full(len(q), math.log(1e5))
    while (high - low).max() > 1e-9:
        middle = (low + high) / 2.0
        k = np.exp(middle)
        ratio = np.array([float(chi2_isf(1.0 - a, b)) / float(chi2_isf(0.5, b)) for a, b in zip(q, k)])
        up = (ratio > observed) == (q > 0.5)
        low, high = np.where(up, middle, low), np.where(up, high, middle)
    return np.exp((low + high) / 2.0)


def test_the_replayed_bisection_gives_the_bisections_k_to_the_bit():
    rng = np.random.default_rng(32)
    shares = rng.uniform(0.1, 0.5, 12)  # the flat test's tied share as its quantile
    q = np.concatenate([[0.9] * 20, [0.1] * 20, shares, [0.84, 0.16, 0.15]])
    observed = np.concatenate([rng.uniform(1.001, 4.0, 20), rng.uniform(0.05, 0.999, 20),
                               rng.uniform(0.01, 0.99, 12),
                               [1.0001, 0.9999,  # k past 1e5
                                0.12500000000000044]])  # a flat test's tail point: the ratio hit exactly
    observed[:2] = [1e4, 1.2]  # steeper than chi-square(0.2): the bracket's lower end
    replayed = module.effective_df(q, observed, arrays_from=len(q) + 1)
    assert np.array_equal(replayed, bisected_at_every_step(q, observed))
    assert replayed.min() < 0.2 * 1.001 and replayed.max() > 1e5 * 0.999  # both ends of the bracket reached


def test_the_replay_takes_a_third_of_the_quantiles(monkeypatch):
    calls = []

    def counted(*args):
        calls.append(1)
        return chi2_isf(*args)

    monkeypatch.setattr(module, "chi2_isf", counted)
    module.effective_df(np.array([0.9, 0.1]), np.array([1.6, 0.5]), arrays_from=3)
    assert len(calls) <= 2 * 2 * 34 / 3  # the bisection: 34 steps x 2 quantiles x 2 yardsticks
