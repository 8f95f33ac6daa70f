"""The distribution functions the statistics need: Student's t, F, chi-square and the standard
normal, for Python floats and numpy arrays alike.

council-db's own rather than scipy.special's, which has them all: importing scipy.special costs
about a quarter of a second (its array-API layer imports numpy.f2py and numpy.testing), a quarter
of a report on a small history. The methods are the standard ones: the regularized incomplete
beta and gamma functions (``special_functions``), the normal from math.erfc and
Wichura's AS 241 (as statistics.NormalDist), and the quantiles by Halley's method (Newton's with
the curvature) on the log of the smaller tail, kept inside a bracket.
tests/analysis/stats/test_distributions.py checks them against scipy.special to a relative 1e-10
(and against closed forms where scipy.special itself is off).

Edges are scipy.special's: NaN in gives NaN out, degrees of freedom <= 0 give NaN, an infinite
statistic gives a probability of 0 or 1. Scalars in give a float out; arrays broadcast.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from council_db.analysis.stats.special_functions import Value, beta_tails, gamma_tails, halley, log_beta, ops

INF = np.inf
SQRT_HALF = math.sqrt(0.5)  # as scipy.special multiplies, so that the far tail rounds alike


# Elements up to which the float kernel, one call each, beats the array kernel: the array
# methods run every element through a branch's fixed iterations, 1-4 ms a call even for 4
# elements (a report's trend CIs: 4.7 against 0.5 ms for t_ppf); past 32-100 they win.
FEW = 32


def _is_scalar(value: ArrayLike) -> bool:
    """np.ndim(value) == 0, at a tenth of its cost (a microsecond counts here)."""
    return isinstance(value, (float, int, np.number)) or (isinstance(value, np.ndarray) and value.ndim == 0)


def _evaluate(kernel: Callable[..., Value], regular: Callable[..., Value], edges: Callable[..., np.ndarray],
              *args: ArrayLike) -> Value:
    """kernel(*args) where regular(*args) holds, edges(*args) elsewhere (NaNs and limits).
    ``regular`` and ``edges`` see numpy values, where a division by zero is harmless; the
    kernel sees Python floats (one at a time for up to FEW regular elements of an array), or
    arrays of its regular elements only."""
    if all(_is_scalar(arg) for arg in args):
        with np.errstate(all="ignore"):
            values = [np.float64(arg) for arg in args]  # type: ignore[arg-type]
            if not regular(*values):
                return float(edges(*values))
        return kernel(*(float(value) for value in values))
    with np.errstate(all="ignore"):
        arrays = np.broadcast_arrays(*(np.asarray(arg, dtype=np.float64) for arg in args))
        ok = regular(*arrays)
        out = np.array(edges(*arrays), dtype=np.float64)
        count = int(np.count_nonzero(ok))
        if 0 < count <= FEW:
            out[ok] = [kernel(*values) for values in zip(*(array[ok].tolist() for array in arrays))]
        elif count:
            out[ok] = kernel(*(array[ok] for array in arrays))
    return out


def _x_and_y(r: Value) -> tuple[Value, Value]:
    """x = 1 / (1 + r) and y = r / (1 + r) = 1 - x, each to full relative precision."""
    return 1.0 / (1.0 + r), r / (1.0 + r)


# --------------------------------------------------------------------------- normal


def normal_cdf(x: ArrayLike) -> Value:
    """Phi(x) = erfc(-x / sqrt 2) / 2 (scipy's ndtr): erfc keeps its relative accuracy far into
    the lower tail."""
    if _is_scalar(x):
        return 0.5 * math.erfc(-float(x) * SQRT_HALF)  # type: ignore[arg-type]
    return 0.5 * np.frompyfunc(math.erfc, 1, 1)(-np.asarray(x, dtype=np.float64) * SQRT_HALF).astype(float)


# Wichura's AS 241 (16 digits), as statistics.NormalDist.inv_cdf evaluates it: each rational
# function's numerator and denominator coefficients, highest power first. Importing statistics
# (for NormalDist) cost 5-9 ms of the first report in a process (issue 32).
_CENTRAL = ((2.50908_09287_30122_6727e+3, 3.34305_75583_58812_8105e+4, 6.72657_70927_00870_0853e+4,
             4.59219_53931_54987_1457e+4, 1.37316_93765_50946_1125e+4, 1.97159_09503_06551_4427e+3,
             1.33141_66789_17843_7745e+2, 3.38713_28727_96366_6080e+0),
            (5.22649_52788_52854_5610e+3, 2.87290_85735_72194_2674e+4, 3.93078_95800_09271_0610e+4,
             2.12137_94301_58659_5867e+4, 5.39419_60214_24751_1077e+3, 6.87187_00749_20579_0830e+2,
             4.23133_30701_60091_1252e+1, 1.0))  # |p - 0.5| <= 0.425, in r = 0.180625 - (p - 0.5)^2
_NEAR = ((7.74545_01427_83414_07640e-4, 2.27238_44989_26918_45833e-2, 2.41780_72517_74506_11770e-1,
          1.27045_82524_52368_38258e+0, 3.64784_83247_63204_60504e+0, 5.76949_72214_60691_40550e+0,
          4.63033_78461_56545_29590e+0, 1.42343_71107_49683_57734e+0),
         (1.05075_00716_44416_84324e-9, 5.47593_80849_95344_94600e-4, 1.51986_66563_61645_71966e-2,
          1.48103_97642_74800_74590e-1, 6.89767_33498_51000_04550e-1, 1.67638_48301_83803_84940e+0,
          2.05319_16266_37758_82187e+0, 1.0))  # sqrt(-log(smaller tail)) <= 5, in r = that - 1.6
_FAR = ((2.01033_43992_92288_13265e-7, 2.71155_55687_43487_57815e-5, 1.24266_09473_88078_43860e-3,
         2.65321_89526_57612_30930e-2, 2.96560_57182_85048_91230e-1, 1.78482_65399_17291_33580e+0,
         5.46378_49111_64114_36990e+0, 6.65790_46435_01103_77720e+0),
        (2.04426_31033_89939_78564e-15, 1.42151_17583_16445_88870e-7, 1.84631_83175_10054_68180e-5,
         7.86869_13114_56132_59100e-4, 1.48753_61290_85061_48525e-2, 1.36929_88092_27358_05310e-1,
         5.99832_20655_58879_37690e-1, 1.0))  # beyond, in r = that - 5


def _rational(coefficients: tuple[tuple[float, ...], tuple[float, ...]], r: Value, scale: Value = 1.0) -> Value:
    """numerator(r) * scale / denominator(r), each polynomial by Horner's rule."""
    parts = []
    for polynomial in coefficients:
        total = polynomial[0]
        for c in polynomial[1:]:
            total = total * r + c
        parts.append(total)
    return parts[0] * scale / parts[1]


def _normal_quantile(p: Value) -> Value:
    """Phi^-1(p), 0 < p < 1, by Wichura's AS 241, operation for operation as NormalDist.inv_cdf
    (the same float for a float; arrays in one pass, not one Python call per element)."""
    q = p - 0.5
    if not isinstance(q, np.ndarray):
        if abs(q) <= 0.425:
            return _rational(_CENTRAL, 0.180625 - q * q, q)
        r = math.sqrt(-math.log(p if q <= 0.0 else 1.0 - p))
        x = _rational(_NEAR, r - 1.6) if r <= 5.0 else _rational(_FAR, r - 5.0)
        return -x if q < 0.0 else x
    r = np.sqrt(-np.log(np.where(q <= 0.0, p, 1.0 - p)))
    tail = np.where(r <= 5.0, _rational(_NEAR, r - 1.6), _rational(_FAR, r - 5.0))
    return np.where(np.abs(q) <= 0.425, _rational(_CENTRAL, 0.180625 - q * q, q), np.where(q < 0.0, -tail, tail))


def normal_ppf(p: ArrayLike) -> Value:
    """Phi^-1(p) (scipy's ndtri): -inf at 0, inf at 1, NaN outside [0, 1]."""
    return _evaluate(_normal_quantile, lambda p: (p > 0) & (p < 1),
                     lambda p: np.select([p == 0, p == 1], [-INF, INF], np.nan), p)


# --------------------------------------------------------------------------- Student's t


def _t_cdf(t: Value, df: Value) -> Value:
    """P(T <= -|t|) = I_x(df/2, 1/2) / 2 with x = df / (df + t^2); the upper tail is 1 minus it."""
    m = ops(t)
    log_i, _, _ = beta_tails(0.5 * df, 0.5, *_x_and_y(t * t / df))
    tail = 0.5 * m.exp(log_i)
    return m.where(t < 0, tail, 1.0 - tail)


def t_cdf(t: ArrayLike, df: ArrayLike) -> Value:
    """P(T <= t) for Student's t with df degrees of freedom (scipy's stdtr); the survival
    function is t_cdf(-t, df)."""
    def regular(t: Value, df: Value) -> Value:
        return (df > 0) & (df < INF) & (t * t / df > 0) & (t * t / df < INF)

    def edges(t: np.ndarray, df: np.ndarray) -> np.ndarray:
        return np.select([np.isnan(t) | np.isnan(df) | (df <= 0), df == INF, t * t / df == 0],
                         [np.nan, normal_cdf(t), 0.5], np.where(t < 0, 0.0, 1.0))

    return _evaluate(_t_cdf, regular, edges, t, df)


def _t_quantile(p: Value, df: Value) -> Value:
    """Halley's method on log P(T <= -e^u) in u = log|t|: nearly a straight line in the tail
    for small df (a power law), a gentle curve for large df (the normal's). It starts from the
    power law where that puts t^2 well above df (its regime), from the Cornish-Fisher expansion
    about the normal quantile elsewhere, and takes 1-3 steps."""
    m = ops(p)
    lower = p < 0.5
    s = m.where(lower, p, 1.0 - p)  # the smaller tail; 1 - p is exact for p >= 0.5
    log_s, a = m.log(s), 0.5 * df
    z = -_normal_quantile(s)
    cornish_fisher = z + (z ** 3 + z) / (4.0 * df) + (5.0 * z ** 5 + 16.0 * z ** 3 + 3.0 * z) / (96.0 * df * df)
    log_df = m.log(df)
    log_power_law = 0.5 * log_df - (log_s + log_df + log_beta(a, 0.5)) / df  # tail ~ x^a / (2 a B)
    low, high = -300.0, 0.5 * (709.0 + log_df)
    u = m.where(log_power_law > 0.5 * log_df + 1.0, log_power_law, m.log(cornish_fisher))
    u = m.where(u < high, m.where(u > low, u, low + 1.0), high - 1.0)

    def step(u: Value) -> tuple[Value, Value, Value]:
        x, y = _x_and_y(m.exp(2.0 * u - log_df))  # t^2 / df, which stays below e^709
        log_i, _, log_density = beta_tails(a, 0.5, x, y)
        slope = -2.0 * m.exp(log_density - log_i)  # d log I / du = -2 x^a y^b / (B I)
        return log_i - math.log(2.0) - log_s, slope, slope * (x - 2.0 * a * y) - slope * slope

    beyond = log_power_law >= high  # |t| past ~1e153 (exact so far out): t^2 / df is no float
    t = m.where(beyond, INF, m.exp(halley(step, u, low, high)))
    return m.where(lower, -t, t)


def t_ppf(p: ArrayLike, df: ArrayLike) -> Value:
    """The t with P(T <= t) = p (scipy's stdtrit, except -inf at p = 0 where scipy says +inf)."""
    def edges(p: np.ndarray, df: np.ndarray) -> np.ndarray:
        invalid = np.isnan(p) | np.isnan(df) | (df <= 0) | (p < 0) | (p > 1)
        return np.select([invalid, df == INF, p == 0, p == 1], [np.nan, normal_ppf(p), -INF, INF], 0.0)

    return _evaluate(_t_quantile, lambda p, df: (p > 0) & (p < 1) & (p != 0.5) & (df > 0) & (df < INF), edges,
                     p, df)


# --------------------------------------------------------------------------- F


def _f_sf(f: Value, dfn: Value, dfd: Value) -> Value:
    """I_x(dfd/2, dfn/2) with x = dfd / (dfd + dfn f)."""
    log_i, _, _ = beta_tails(0.5 * dfd, 0.5 * dfn, *_x_and_y(dfn * f / dfd))
    return ops(f).exp(log_i)


def f_sf(f: ArrayLike, dfn: ArrayLike, dfd: ArrayLike) -> Value:
    """P(F > f) for Snedecor's F(dfn, dfd) (scipy's fdtrc)."""
    def proper(dfn: Value, dfd: Value) -> Value:
        return (dfn > 0) & (dfn < INF) & (dfd > 0) & (dfd < INF)

    def regular(f: Value, dfn: Value, dfd: Value) -> Value:
        return proper(dfn, dfd) & (dfn * f / dfd > 0) & (dfn * f / dfd < INF)

    def edges(f: np.ndarray, dfn: np.ndarray, dfd: np.ndarray) -> np.ndarray:
        return np.select([np.isnan(f) | (f < 0) | ~proper(dfn, dfd), dfn * f / dfd == 0], [np.nan, 1.0], 0.0)

    return _evaluate(_f_sf, regular, edges, f, dfn, dfd)


# --------------------------------------------------------------------------- chi-square


def _chi2_regular(x: Value, df: Value) -> Value:
    return (df > 0) & (df < INF) & (0.5 * x > 0) & (x < INF)


def _chi2_cdf_edges(x: np.ndarray, df: np.ndarray) -> np.ndarray:
    invalid = np.isnan(x) | np.isnan(df) | (df < 0) | (x < 0) | ((df == 0) & (x == 0)) | ((df == INF) & (x == INF))
    return np.select([invalid, df == 0, (df == INF) | (0.5 * x == 0)], [np.nan, 1.0, 0.0], 1.0)


def chi2_cdf(x: ArrayLike, df: ArrayLike) -> Value:
    """P(X <= x) for X ~ chi-square(df) (scipy's chdtr): the regularized gamma P(df/2, x/2)."""
    return _evaluate(lambda x, df: ops(x).exp(gamma_tails(0.5 * df, 0.5 * x)[0]), _chi2_regular,
                     _chi2_cdf_edges, x, df)


def chi2_sf(x: ArrayLike, df: ArrayLike) -> Value:
    """P(X > x) for X ~ chi-square(df) (scipy's chdtrc): Q(df/2, x/2), small to its own relative
    accuracy."""
    return _evaluate(lambda x, df: ops(x).exp(gamma_tails(0.5 * df, 0.5 * x)[1]), _chi2_regular,
                     lambda x, df: 1.0 - _chi2_cdf_edges(x, df), x, df)


def _chi2_quantile(q: Value, df: Value) -> Value:
    """Halley's method in v = log x on the log of the smaller tail, from Wilson and Hilferty's
    cube-root normal approximation (or, where that is negative, the lower tail's power law
    P(a, y) ~ y^a / Gamma(a + 1)); 1-4 steps."""
    m = ops(q)
    upper = q <= 0.5
    s = m.where(upper, q, 1.0 - q)  # 1 - q is exact for q >= 0.5
    log_s, a = m.log(s), 0.5 * df
    cube = 1.0 - 2.0 / (9.0 * df) - _normal_quantile(q) * (2.0 / (9.0 * df)) ** 0.5
    log_power_law = math.log(2.0) + (m.log(1.0 - q) + m.lgamma(a + 1.0)) / a
    v = m.where(cube > 0, m.log(df) + 3.0 * m.log(m.where(cube > 0, cube, 1.0)), log_power_law)
    v = m.where(v < -700.0, -699.0, m.where(v > 709.0, 708.0, v))

    def step(v: Value) -> tuple[Value, Value, Value]:  # decreasing in v: log Q - log q, or log(1 - q) - log P
        y = 0.5 * m.exp(v)
        log_p, log_q, log_density = gamma_tails(a, y)
        slope = -m.exp(log_density - m.where(upper, log_q, log_p))  # -|d log Q / dv| = -y^a e^-y / (Gamma(a) Q)
        curvature = slope * (a - y) + m.where(upper, -1.0, 1.0) * slope * slope
        return m.where(upper, log_q - log_s, log_s - log_p), slope, curvature

    return m.exp(halley(step, v, -700.0, 709.0))


def chi2_isf(q: ArrayLike, df: ArrayLike) -> Value:
    """The x with P(X > x) = q for X ~ chi-square(df) (scipy's chdtri)."""
    def edges(q: np.ndarray, df: np.ndarray) -> np.ndarray:
        return np.select([(df > 0) & (df < INF) & (q == 0), (df > 0) & (df < INF) & (q == 1)], [INF, 0.0], np.nan)

    return _evaluate(_chi2_quantile, lambda q, df: (q > 0) & (q < 1) & (df > 0) & (df < INF), edges, q, df)
