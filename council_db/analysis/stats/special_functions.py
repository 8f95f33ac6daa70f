"""The regularized incomplete gamma and beta functions, and Halley's method in a bracket: the
numerics under ``distributions``, written once for Python floats and numpy arrays alike.

Scalars run as Python floats (``Floats``): the report makes hundreds of single calls, and numpy
costs far more per operation on one number than the arithmetic does; arrays run as numpy
(``Arrays``), each iteration over all their elements. The methods are the standard ones:
Numerical Recipes (3rd ed.) 6.2 for the gamma series and Legendre's continued fraction, DiDonato
& Morris (1992, ACM TOMS 18) for the beta continued fraction, both evaluated by the modified
Lentz method, and Halley's method kept in a bracket as NR 9.4's rtsafe keeps Newton's.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

Value = float | np.ndarray  # a Python float, or a float64 array: the kernels below take either

EPS = 1e-15  # relative size of the last term (or factor) at which a series (or fraction) stops
FPMIN = 1e-300  # Lentz's guard against a zero denominator
MAX_ITERATIONS = 100_000  # the gamma series needs about 9 sqrt(a) terms: 20,000 at df = 1e7
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_ALMOST_ONE = math.log1p(-2.0 ** -53)


class Floats:
    """The functions a kernel needs, on Python floats."""

    log, log1p, exp, lgamma = math.log, math.log1p, math.exp, math.lgamma

    @staticmethod
    def where(condition: bool, if_true: float, if_false: float) -> float:
        return if_true if condition else if_false

    @staticmethod
    def largest(value: float) -> float:
        return value


class Arrays:
    """The same on float64 arrays (math.lgamma elementwise: numpy has no log Gamma)."""

    log, log1p, exp, where = np.log, np.log1p, np.exp, np.where

    @staticmethod
    def lgamma(z: np.ndarray) -> np.ndarray:
        return np.frompyfunc(math.lgamma, 1, 1)(z).astype(np.float64)

    @staticmethod
    def largest(value: np.ndarray) -> float:
        return float(value.max())


def ops(value: Value) -> type[Floats] | type[Arrays]:
    return Arrays if isinstance(value, np.ndarray) else Floats


def piecewise(use_first: bool | np.ndarray, first: Callable[..., Value], second: Callable[..., Value],
               *args: Value) -> Value:
    """first(*args) where use_first holds, second(*args) elsewhere; on arrays each function sees
    only its own elements, so each iteration runs as long as its own elements need."""
    if not isinstance(use_first, np.ndarray):
        return first(*args) if use_first else second(*args)
    out = np.empty(use_first.shape)
    for mask, function in ((use_first, first), (~use_first, second)):
        if mask.any():
            out[mask] = function(*(np.broadcast_to(arg, mask.shape)[mask] for arg in args))
    return out


# --------------------------------------------------------------------------- log gamma, log beta


def _stirling_correction(z: Value) -> Value:
    """w(z) = log Gamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2): Stirling's series from
    z = 10 (its first omitted term is 3e-17 there), math.lgamma below, where nothing cancels.
    Kept apart so that log Gamma differences of large arguments lose no digits."""
    m = ops(z)
    big = m.where(z >= 10.0, z, 10.0)
    small = m.where(z < 10.0, z, 1.0)
    r = 1.0 / (big * big)
    series = (1 / 12 - r * (1 / 360 - r * (1 / 1260 - r * (1 / 1680 - r * (1 / 1188 - r * (691 / 360360
              - r / 156)))))) / big
    direct = m.lgamma(small) - ((small - 0.5) * m.log(small) - small + HALF_LOG_2PI)
    return m.where(z >= 10.0, series, direct)


def log_beta(a: Value, b: Value) -> Value:
    """log B(a, b) from Stirling's formula with its remainder w: log(2 pi / (a + b)) / 2
    + (a - 1/2) log(a / (a + b)) + (b - 1/2) log(b / (a + b)) + w(a) + w(b) - w(a + b), as
    Boost and DiDonato & Morris do: the three log Gammas of math.lgamma would cancel to ~1e-8
    at df = 1e7."""
    m = ops(a)
    s = a + b
    small, large = m.where(a < b, a, b), m.where(a < b, b, a)
    return (0.5 * m.log(2.0 * math.pi / s) + (small - 0.5) * m.log(small / s) + (large - 0.5) * m.log1p(-small / s)
            + _stirling_correction(a) + _stirling_correction(b) - _stirling_correction(s))


def log_complement(log_p: Value) -> Value:
    """log(1 - p) from log p; a p within rounding of 1 counts as 1 - 2^-53 (no log of 0)."""
    m = ops(log_p)
    return m.log1p(-m.exp(m.where(log_p < LOG_ALMOST_ONE, log_p, LOG_ALMOST_ONE)))


# --------------------------------------------------------------------------- incomplete gamma


def _gamma_series(a: Value, x: Value) -> Value:
    """sum over n >= 0 of x^n / (a (a+1) ... (a+n)), so P(a, x) = x^a e^-x / Gamma(a) times it
    (NR 6.2, gser); used for x < a + 1, where it converges."""
    m = ops(x)
    term = total = 1.0 / a
    n = a
    for _ in range(MAX_ITERATIONS):
        n = n + 1.0
        term = term * x / n
        total = total + term
        if m.largest(term / total) < EPS:
            break
    return total


def _lentz_step(m: type[Floats] | type[Arrays], an: Value, bn: Value, c: Value, d: Value) -> tuple[Value, Value, Value]:
    """One term a_n / (b_n + ...) of a continued fraction by the modified Lentz method (NR 5.2):
    the new c and d, and the factor the fraction's value takes; tiny values stand in for 0."""
    d = bn + an * d
    d = 1.0 / m.where(abs(d) < FPMIN, FPMIN, d)
    c = bn + an / c
    c = m.where(abs(c) < FPMIN, FPMIN, c)
    return c, d, c * d


def _gamma_fraction(a: Value, x: Value) -> Value:
    """Legendre's continued fraction, so Q(a, x) = x^a e^-x / Gamma(a) times it, by the modified
    Lentz method (NR 6.2, gcf); used for x >= a + 1, where it converges fast."""
    m = ops(x)
    b = x + 1.0 - a
    c = 1.0 / FPMIN
    d = 1.0 / b
    h = d
    for i in range(1, MAX_ITERATIONS):
        an = -i * (i - a)
        b = b + 2.0
        c, d, delta = _lentz_step(m, an, b, c, d)
        h = h * delta
        if m.largest(abs(delta - 1.0)) < EPS:
            break
    return h


def gamma_tails(a: Value, x: Value) -> tuple[Value, Value, Value]:
    """(log P(a, x), log Q(a, x), log(x^a e^-x / Gamma(a))) for a > 0, 0 < x < inf: the tail the
    series or fraction gives directly, the other as 1 minus it (it is then not small)."""
    m = ops(x)
    t = (x - a) / a
    near = abs(t) < 0.5
    t_near = m.where(near, t, 0.0)
    # x - a - a log(x/a) = a phi, without cancellation near x = a, so large a keeps its digits
    phi = m.where(near, t_near - m.log1p(t_near), x / a - 1.0 - (m.log(x) - m.log(a)))
    log_density = -a * phi + 0.5 * m.log(a) - HALF_LOG_2PI - _stirling_correction(a)
    series = x < a + 1.0
    log_direct = log_density + piecewise(series, lambda a, x: m.log(_gamma_series(a, x)),
                                          lambda a, x: m.log(_gamma_fraction(a, x)), a, x)
    log_rest = log_complement(log_direct)
    return m.where(series, log_direct, log_rest), m.where(series, log_rest, log_direct), log_density


# --------------------------------------------------------------------------- incomplete beta


def _beta_fraction(a: Value, b: Value, x: Value, y: Value) -> Value:
    """The continued fraction f with I_x(a, b) = x^a y^b / (B(a, b) f), in DiDonato & Morris's
    form (1992, BFRAC; Boost's ibeta_fraction2), by the modified Lentz method; converges fast for
    x < (a + 1) / (a + b + 2). NR 6.4's form of it lost 4e-10 at df = 1e7: as x -> 1 its
    partial denominators cancel, where these take a y - b x from y itself."""
    m = ops(x)
    f = a * (a * y - b * x + 1.0) / (a + 1.0)
    f = m.where(abs(f) < FPMIN, FPMIN, f)
    c, d = f, 0.0
    for i in range(1, MAX_ITERATIONS):
        denominator = a + 2 * i - 1
        an = (a + i - 1) * (a + b + i - 1) * i * (b - i) * x * x / (denominator * denominator)
        bn = i + i * (b - i) * x / denominator + (a + i) * (a * y - b * x + 1 + i * (2 - x)) / (a + 2 * i + 1)
        c, d, delta = _lentz_step(m, an, bn, c, d)
        f = f * delta
        if m.largest(abs(delta - 1.0)) < EPS:
            break
    return f


def beta_tails(a: Value, b: Value, x: Value, y: Value) -> tuple[Value, Value, Value]:
    """(log I_x(a, b), log(1 - I_x(a, b)), log(x^a y^b / B(a, b))) for 0 < x < 1, y = 1 - x given
    apart so that each keeps its digits (x = 1 - 1e-9 holds y to 7 digits only). The fraction
    runs on the side of the mean where it converges: x itself, or 1 - x with a and b swapped
    (I_x(a, b) = 1 - I_y(b, a)), which also makes the tail it gives the small one."""
    m = ops(x)
    log_x = m.where(y < 0.5, m.log1p(-m.where(y < 0.5, y, 0.0)), m.log(x))
    log_y = m.where(x < 0.5, m.log1p(-m.where(x < 0.5, x, 0.0)), m.log(y))
    log_density = a * log_x + b * log_y - log_beta(a, b)
    swap = x > (a + 1.0) / (a + b + 2.0)
    log_direct = log_density - piecewise(swap, lambda a, b, x, y: m.log(_beta_fraction(b, a, y, x)),
                                          lambda a, b, x, y: m.log(_beta_fraction(a, b, x, y)), a, b, x, y)
    log_rest = log_complement(log_direct)
    return m.where(swap, log_rest, log_direct), m.where(swap, log_direct, log_rest), log_density


# --------------------------------------------------------------------------- Halley in a bracket


def halley(step: Callable[[Value], tuple[Value, Value, Value]], u: Value, low: Value, high: Value) -> Value:
    """The root of a decreasing function in [low, high] from u by Halley's method (Newton's
    step corrected by the curvature, taken when the correction is modest), bisecting the bracket,
    which every evaluation narrows, when a step would leave it (after NR 9.4's rtsafe).
    ``step(u)`` gives the function's value and first and second derivatives at u. The error is
    cubed per step: once a step moves u by less than 1e-7 (relative), the point it lands on
    is good to ~1e-20, and is returned without another evaluation."""
    m = ops(u)
    for _ in range(200):
        value, slope, curvature = step(u)
        high, low = m.where(value < 0, u, high), m.where(value < 0, low, u)
        newton = value / m.where(slope == 0.0, -FPMIN, slope)
        correction = 0.5 * newton * curvature / m.where(slope == 0.0, -FPMIN, slope)
        new = u - m.where(abs(correction) < 0.5, newton / (1.0 - correction), newton)
        new = m.where((new < low) | (new > high) | (new != new), 0.5 * (low + high), new)
        if m.largest(abs(new - u) / m.where(abs(u) > 1.0, abs(u), 1.0)) <= 1e-7:
            return new
        u = new
    return u
