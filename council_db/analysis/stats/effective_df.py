"""The effective degrees of freedom of a scaled chi-square yardstick: the k whose chi-square(k)
quantile q over its median is a ratio observed in the data (``sessions/anomalies``), found by
bisection on log k to 1e-9 relative.

Every yardstick's bisection makes the same 34 decisions whichever way it is computed; what
differs is the cost of a decision. Over arrays (many reviewers) one step is two chi2_isf calls
on arrays; for a few, each bisection is replayed from its root, bracketed first in 5-9
scalar evaluations, and only a midpoint next to the root is evaluated (the scalar bisection
took 34 x 2 chi2_isf calls per yardstick, ~10 ms each; tests/analysis/stats/test_effective_df.py
checks that the k are the same to the bit).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from council_db.analysis.stats.distributions import chi2_isf, normal_ppf

# From this many yardsticks (reviewers) on, the bisection evaluates them over arrays: an array
# call of chi2_isf costs ~1.3 ms, a scalar one ~0.14 ms (measured with a scalar bisection of
# every step: 5 yardsticks 24 ms scalar, 113 ms arrays; 50: 230 vs 127 ms; 500: 2.2 s vs 0.17 s).
# The replay takes a third of those scalar calls, so by those costs the arrays pay from some 45
# yardsticks (not measured again): 25 errs towards them, which cost less as the panel grows.
ARRAYS_FROM = 25
K_LOW, K_HIGH = math.log(0.2), math.log(1e5)  # the bisection's bracket on log k
K_TOLERANCE = 1e-9  # the bracket's width at which the bisection stops
# Below ARRAYS_FROM the bisection is replayed from the root, bracketed this tightly (in log k),
# and evaluated only where a midpoint falls within NEAR_ROOT of that bracket.
ROOT_WIDTH = NEAR_ROOT = 1e-11
MAX_STEPS = 100


def effective_df(q: np.ndarray, observed: np.ndarray, arrays_from: int = ARRAYS_FROM) -> np.ndarray:
    """Per yardstick, the k whose chi-square(k) quantile q over its median is ``observed``:
    bisection on log k (that ratio is monotone in k, -> 1 as k grows), to 1e-9 relative in k.
    From ``arrays_from`` yardsticks on, every yardstick bisects in one loop whose two chi2_isf
    calls a step take arrays (the same values: tests/analysis/test_anomalies.py); below, each
    yardstick's bisection is replayed from its root (``_replayed_bisection``), the same k in
    about a third of the scalar calls."""
    if len(q) < arrays_from:
        return np.array([_replayed_bisection(a, b) for a, b in zip(q, observed)])
    low, high = np.full(len(q), K_LOW), np.full(len(q), K_HIGH)
    while len(q) and (high - low).max() > K_TOLERANCE:
        middle = (low + high) / 2.0
        k = np.exp(middle)
        up = (chi2_isf(1.0 - q, k) / chi2_isf(0.5, k) > observed) == (q > 0.5)
        low, high = np.where(up, middle, low), np.where(up, high, middle)
    return np.exp((low + high) / 2.0)


def _replayed_bisection(q: np.float64, observed: np.float64) -> float:
    """``effective_df``'s bisection for one yardstick, its 34 steps taken without evaluating
    the ratio at each: the root is bracketed first by regula falsi (Anderson-Bjorck), under ten
    evaluations, and each midpoint clearly on one side of that bracket goes that way, as the
    ratio, monotone, would send it; a midpoint within NEAR_ROOT of the root is evaluated as the
    bisection evaluates it. The same midpoints, the same k."""
    def ratio(log_k: float) -> float:  # the quantile over the median, k from numpy's exp as the arrays'
        k = np.exp(np.array([log_k]))[0]
        return float(chi2_isf(1.0 - q, k)) / float(chi2_isf(0.5, k))

    def signed(log_k: float) -> float:  # > 0 where the root lies above log_k
        gap = ratio(log_k) - float(observed)
        return gap if q > 0.5 else -gap

    # in x = k^-1/2 the ratio is nearly linear (its log ~ z sqrt(2 / k)): regula falsi converges fast
    ends = _bracket(lambda x: signed(-2.0 * math.log(x)), _wilson_hilferty_x(float(q), float(observed)),
                    math.exp(-K_HIGH / 2.0), math.exp(-K_LOW / 2.0))
    above, below = sorted(-2.0 * math.log(x) for x in ends)
    low, high = K_LOW, K_HIGH
    while high - low > K_TOLERANCE:
        middle = (low + high) / 2.0
        if above - NEAR_ROOT <= middle <= below + NEAR_ROOT:
            up = (ratio(middle) > observed) == (q > 0.5)  # the bisection's own decision
        else:
            up = middle < above
        low, high = (middle, high) if up else (low, middle)
    return float(np.exp(np.array([(low + high) / 2.0]))[0])


def _wilson_hilferty_x(q: float, observed: float) -> float:
    """A first guess at k^-1/2 from Wilson and Hilferty's cube-root normal approximation of the
    quantile and the median: (1 - a + z sqrt a) / (1 - a) = observed^1/3, a = 2 / (9k)."""
    z, r = float(normal_ppf(q)), observed ** (1.0 / 3.0) - 1.0
    if r == 0.0 or not math.isfinite(r):
        return 0.0
    roots = [(-z + sign * math.sqrt(z * z + 4.0 * r * r)) / (2.0 * r) for sign in (1.0, -1.0)]
    root_a = max(roots)  # sqrt a, the positive root
    return root_a * 3.0 / math.sqrt(2.0) if root_a > 0 else 0.0


def _bracket(signed: Callable[[float], float], guess: float, lowest: float, highest: float) -> tuple[float, float]:
    """(a, b) around the root of ``signed``, increasing in x, in [lowest, highest]: ``signed``
    <= 0 at a and > 0 at b, b - a <= ROOT_WIDTH x a / 2 (in MAX_STEPS evaluations: a wider
    bracket costs the replay evaluations, never its decisions); (lowest, lowest) when it is > 0
    there already, (highest, highest) when it is <= 0 there too. From a bracket of 5% around
    ``guess``, widened until it holds the root, by regula falsi (Anderson-Bjorck)."""
    guess = min(max(guess, lowest), highest)
    step = 0.05 * guess
    low, high = max(lowest, guess - step), min(highest, guess + step)
    f_low, f_high = signed(low), signed(high)
    while f_low > 0 and low > lowest:  # the root lies below
        step *= 4.0
        high, f_high, low = low, f_low, max(lowest, guess - step)
        f_low = signed(low)
    while f_high <= 0 and high < highest:  # the root lies above
        step *= 4.0
        low, f_low, high = high, f_high, min(highest, guess + step)
        f_high = signed(high)
    if f_low > 0:
        return lowest, lowest
    if f_high <= 0:
        return highest, highest
    for _ in range(MAX_STEPS):  # Anderson-Bjorck: the end that stays has its value scaled down
        if f_low == 0:  # the root itself
            return low, low
        if high - low <= ROOT_WIDTH * low / 2.0:
            break
        guess = (low * f_high - high * f_low) / (f_high - f_low)
        if not low < guess < high:
            guess = (low + high) / 2.0
        value = signed(guess)
        if value > 0:
            shrink = 1.0 - value / f_high
            high, f_high = guess, value
            f_low *= shrink if shrink > 0 else 0.5
        else:
            shrink = 1.0 - value / f_low
            low, f_low = guess, value
            f_high *= shrink if shrink > 0 else 0.5
    return low, high
